#pragma once
// Reading typed fields out of JSON objects with a path for error messages
// ("spec.nicSelector.pfNames[2]: expected a string"), and small writers for the encoders.
// A Reader records the first error and then returns defaults, so decoders read straight through
// and check status() once.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"

namespace sriovdra::api {

class Reader {
 public:
  Reader(const json::Value* v, std::string path, std::shared_ptr<Status> error = nullptr);

  bool has(std::string_view key) const;
  std::string str(std::string_view key, std::string fallback = {}) const;
  int64_t i64(std::string_view key, int64_t fallback = 0) const;
  std::optional<int64_t> optI64(std::string_view key) const;
  bool boolean(std::string_view key, bool fallback = false) const;
  std::optional<bool> optBool(std::string_view key) const;
  std::vector<std::string> strings(std::string_view key) const;
  std::map<std::string, std::string> stringMap(std::string_view key) const;
  // A nested object (missing: a Reader over nothing, whose reads return defaults).
  Reader object(std::string_view key) const;
  // The elements of an array member, each as a Reader.
  std::vector<Reader> array(std::string_view key) const;
  // Raw access for free-form members.
  const json::Value* raw(std::string_view key) const;
  const json::Value* value() const { return v_; }
  bool present() const { return v_ != nullptr; }
  const std::string& path() const { return path_; }

  void fail(std::string_view key, const std::string& what) const;
  Status status() const { return *error_; }

 private:
  const json::Value* member(std::string_view key, bool (json::Value::*is)() const,
                            const char* expected) const;
  std::string at(std::string_view key) const;

  const json::Value* v_;
  std::string path_;
  std::shared_ptr<Status> error_;
};

// Writers: only set values are written, so encoded objects stay minimal (server-side apply
// sends exactly the fields we own).
class Writer {
 public:
  Writer(json::Value& obj, json::Allocator& a) : obj_(obj), a_(a) { SDRA_CHECK(obj.IsObject()); }
  Writer& str(std::string_view key, const std::string& v);  // skipped when empty
  Writer& strAlways(std::string_view key, const std::string& v);
  Writer& i64(std::string_view key, int64_t v);
  Writer& optI64(std::string_view key, const std::optional<int64_t>& v);
  Writer& boolean(std::string_view key, bool v);   // always written
  Writer& trueOnly(std::string_view key, bool v);  // written only when true
  Writer& optBool(std::string_view key, const std::optional<bool>& v);
  Writer& strings(std::string_view key, const std::vector<std::string>& v);  // skipped when empty
  Writer& stringMap(std::string_view key, const std::map<std::string, std::string>& v);
  Writer& value(std::string_view key, json::Value v);
  // Like value(), but an empty array or object is left out: with server-side apply, leaving out
  // a field we own removes it, so readers see "absent" for "none" whoever wrote the object.
  Writer& nonEmpty(std::string_view key, json::Value v);
  // A nested object; created on first use.
  Writer object(std::string_view key);
  json::Allocator& allocator() { return a_; }

 private:
  json::Value& obj_;
  json::Allocator& a_;
};

// A JSON array with one object per item, each written by fn(item, Writer).
template <typename T, typename Fn>
json::Value encodeList(const std::vector<T>& items, json::Allocator& a, Fn fn) {
  json::Value arr(rapidjson::kArrayType);
  for (const auto& item : items) {
    json::Value o(rapidjson::kObjectType);
    fn(item, Writer(o, a));
    arr.PushBack(o, a);
  }
  return arr;
}

}  // namespace sriovdra::api
