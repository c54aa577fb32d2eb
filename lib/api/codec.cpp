#include "api/codec.h"

namespace sriovdra::api {

Reader::Reader(const json::Value* v, std::string path, std::shared_ptr<Status> error)
    : v_(v != nullptr && v->IsObject() ? v : nullptr),
      path_(std::move(path)),
      error_(error ? std::move(error) : std::make_shared<Status>()) {
  if (v != nullptr && !v->IsObject() && !v->IsNull()) fail("", "expected an object");
}

std::string Reader::at(std::string_view key) const {
  if (key.empty()) return path_.empty() ? "(root)" : path_;
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void Reader::fail(std::string_view key, const std::string& what) const {
  if (error_->isOk()) *error_ = Status(Code::kInvalidArgument, at(key) + ": " + what);
}

bool Reader::has(std::string_view key) const {
  const json::Value* m = v_ ? json::member(*v_, key) : nullptr;
  return m != nullptr && !m->IsNull();
}

const json::Value* Reader::member(std::string_view key, bool (json::Value::*is)() const,
                                  const char* expected) const {
  if (v_ == nullptr) return nullptr;
  const json::Value* m = json::member(*v_, key);
  if (m == nullptr || m->IsNull()) return nullptr;
  if (!(m->*is)()) {
    fail(key, std::string("expected ") + expected);
    return nullptr;
  }
  return m;
}

std::string Reader::str(std::string_view key, std::string fallback) const {
  const json::Value* m = member(key, &json::Value::IsString, "a string");
  return m ? std::string(m->GetString(), m->GetStringLength()) : fallback;
}

int64_t Reader::i64(std::string_view key, int64_t fallback) const {
  return optI64(key).value_or(fallback);
}

std::optional<int64_t> Reader::optI64(std::string_view key) const {
  const json::Value* m = member(key, &json::Value::IsNumber, "an integer");
  if (m == nullptr) return std::nullopt;
  if (!m->IsInt64()) {
    fail(key, "expected an integer");
    return std::nullopt;
  }
  return m->GetInt64();
}

bool Reader::boolean(std::string_view key, bool fallback) const {
  return optBool(key).value_or(fallback);
}

std::optional<bool> Reader::optBool(std::string_view key) const {
  const json::Value* m = member(key, &json::Value::IsBool, "true or false");
  if (m == nullptr) return std::nullopt;
  return m->GetBool();
}

std::vector<std::string> Reader::strings(std::string_view key) const {
  std::vector<std::string> out;
  const json::Value* m = member(key, &json::Value::IsArray, "a list");
  if (m == nullptr) return out;
  for (rapidjson::SizeType i = 0; i < m->Size(); ++i) {
    const json::Value& item = (*m)[i];
    if (!item.IsString()) {
      fail(std::string(key) + "[" + std::to_string(i) + "]", "expected a string");
      continue;
    }
    out.emplace_back(item.GetString(), item.GetStringLength());
  }
  return out;
}

std::map<std::string, std::string> Reader::stringMap(std::string_view key) const {
  std::map<std::string, std::string> out;
  const json::Value* m = member(key, &json::Value::IsObject, "a map of strings");
  if (m == nullptr) return out;
  for (const auto& kv : m->GetObject()) {
    std::string k(kv.name.GetString(), kv.name.GetStringLength());
    if (!kv.value.IsString()) {
      fail(std::string(key) + "." + k, "expected a string");
      continue;
    }
    out.emplace(k, std::string(kv.value.GetString(), kv.value.GetStringLength()));
  }
  return out;
}

Reader Reader::object(std::string_view key) const {
  const json::Value* m = member(key, &json::Value::IsObject, "an object");
  return Reader(m, at(key), error_);
}

std::vector<Reader> Reader::array(std::string_view key) const {
  std::vector<Reader> out;
  const json::Value* m = member(key, &json::Value::IsArray, "a list");
  if (m == nullptr) return out;
  for (rapidjson::SizeType i = 0; i < m->Size(); ++i) {
    std::string p = at(key) + "[" + std::to_string(i) + "]";
    if (!(*m)[i].IsObject()) {
      Reader(nullptr, p, error_).fail("", "expected an object");
      continue;
    }
    out.emplace_back(&(*m)[i], p, error_);
  }
  return out;
}

const json::Value* Reader::raw(std::string_view key) const {
  if (v_ == nullptr) return nullptr;
  const json::Value* m = json::member(*v_, key);
  return m != nullptr && !m->IsNull() ? m : nullptr;
}

Writer& Writer::str(std::string_view key, const std::string& v) {
  if (!v.empty()) json::setString(obj_, key, v, a_);
  return *this;
}
Writer& Writer::strAlways(std::string_view key, const std::string& v) {
  json::setString(obj_, key, v, a_);
  return *this;
}
Writer& Writer::i64(std::string_view key, int64_t v) {
  json::set(obj_, key, json::Value(v), a_);
  return *this;
}
Writer& Writer::optI64(std::string_view key, const std::optional<int64_t>& v) {
  if (v) i64(key, *v);
  return *this;
}
Writer& Writer::boolean(std::string_view key, bool v) {
  json::set(obj_, key, json::Value(v), a_);
  return *this;
}
Writer& Writer::trueOnly(std::string_view key, bool v) {
  if (v) boolean(key, true);
  return *this;
}
Writer& Writer::optBool(std::string_view key, const std::optional<bool>& v) {
  if (v) boolean(key, *v);
  return *this;
}
Writer& Writer::strings(std::string_view key, const std::vector<std::string>& v) {
  if (v.empty()) return *this;
  json::Value arr(rapidjson::kArrayType);
  for (const auto& s : v) arr.PushBack(json::str(s, a_), a_);
  json::set(obj_, key, std::move(arr), a_);
  return *this;
}
Writer& Writer::stringMap(std::string_view key, const std::map<std::string, std::string>& v) {
  if (v.empty()) return *this;
  json::Value m(rapidjson::kObjectType);
  for (const auto& [k, s] : v) m.AddMember(json::str(k, a_), json::str(s, a_), a_);
  json::set(obj_, key, std::move(m), a_);
  return *this;
}
Writer& Writer::value(std::string_view key, json::Value v) {
  json::set(obj_, key, std::move(v), a_);
  return *this;
}
Writer& Writer::nonEmpty(std::string_view key, json::Value v) {
  bool empty = (v.IsArray() && v.Empty()) || (v.IsObject() && v.MemberCount() == 0);
  if (!empty) json::set(obj_, key, std::move(v), a_);
  return *this;
}

Writer Writer::object(std::string_view key) {
  return Writer(json::ensureObject(obj_, key, a_), a_);
}

}  // namespace sriovdra::api
