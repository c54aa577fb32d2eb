#include "base/json.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace sriovdra::json {
namespace {

Value::ConstMemberIterator find(const Value& obj, std::string_view key) {
  return obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
}

}  // namespace

namespace {

constexpr unsigned kParseFlags =
    rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;

// A SAX pass that only counts nesting: the iterative reader uses no stack of its own, so a
// document of 200,000 '[' is refused here instead of overflowing the recursive DOM code.
struct DepthLimit : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, DepthLimit> {
  size_t depth = 0;
  bool Default() { return true; }
  bool StartObject() { return ++depth <= kMaxDepth; }
  bool EndObject(rapidjson::SizeType) {
    --depth;
    return true;
  }
  bool StartArray() { return ++depth <= kMaxDepth; }
  bool EndArray(rapidjson::SizeType) {
    --depth;
    return true;
  }
};

Status parseError(size_t offset, const std::string& what) {
  return Status(Code::kInvalidArgument,
                "invalid JSON at byte " + std::to_string(offset) + ": " + what);
}

}  // namespace

Result<Document> parse(std::string_view text) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  DepthLimit limit;
  rapidjson::Reader reader;
  rapidjson::ParseResult checked = reader.Parse<kParseFlags>(stream, limit);
  if (checked.IsError()) {
    if (checked.Code() == rapidjson::kParseErrorTermination) {
      return parseError(checked.Offset(),
                        "nested deeper than " + std::to_string(kMaxDepth) + " arrays and objects");
    }
    return parseError(checked.Offset(), rapidjson::GetParseError_En(checked.Code()));
  }
  Document doc;
  doc.Parse<kParseFlags>(text.data(), text.size());
  if (doc.HasParseError()) {
    return parseError(doc.GetErrorOffset(), rapidjson::GetParseError_En(doc.GetParseError()));
  }
  return doc;
}

std::string dump(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  v.Accept(writer);
  return {buf.GetString(), buf.GetSize()};
}

std::string indentLikeGo(std::string_view valid_json, std::string_view unit) {
  std::string out;
  out.reserve(valid_json.size() * 2);
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  bool opened = false;  // the last token opened an object or array
  auto newline = [&] {
    out += '\n';
    for (int i = 0; i < depth; ++i) out += unit;
  };
  for (char c : valid_json) {
    if (in_string) {
      out += c;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    bool closes = c == '}' || c == ']';
    if (opened) {
      opened = false;
      if (closes) {  // empty: "{}" or "[]"
        --depth;
        out += c;
        continue;
      }
      newline();
    }
    switch (c) {
      case '{':
      case '[':
        out += c;
        ++depth;
        opened = true;
        break;
      case '}':
      case ']':
        --depth;
        newline();
        out += c;
        break;
      case ',':
        out += c;
        newline();
        break;
      case ':':
        out += ": ";
        break;
      case '"':
        out += c;
        in_string = true;
        break;
      default:
        out += c;
    }
  }
  return out;
}

const Value* member(const Value& obj, std::string_view key) {
  if (!obj.IsObject()) return nullptr;
  auto it = find(obj, key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

const Value* objectMember(const Value& obj, std::string_view key) {
  const Value* v = member(obj, key);
  return v != nullptr && v->IsObject() ? v : nullptr;
}

const Value* arrayMember(const Value& obj, std::string_view key) {
  const Value* v = member(obj, key);
  return v != nullptr && v->IsArray() ? v : nullptr;
}

std::string_view stringOr(const Value& obj, std::string_view key, std::string_view fallback) {
  const Value* v = member(obj, key);
  if (v == nullptr || !v->IsString()) return fallback;
  return {v->GetString(), v->GetStringLength()};
}

int64_t intOr(const Value& obj, std::string_view key, int64_t fallback) {
  const Value* v = member(obj, key);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : fallback;
}

bool boolOr(const Value& obj, std::string_view key, bool fallback) {
  const Value* v = member(obj, key);
  return v != nullptr && v->IsBool() ? v->GetBool() : fallback;
}

const Value* at(const Value& v, std::initializer_list<std::string_view> path) {
  const Value* cur = &v;
  for (std::string_view key : path) {
    cur = member(*cur, key);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

void set(Value& obj, std::string_view key, Value value, Allocator& a) {
  SDRA_CHECK(obj.IsObject());
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  if (it != obj.MemberEnd()) {
    it->value = std::move(value);
    return;
  }
  obj.AddMember(str(key, a), std::move(value), a);
}

Value& ensureObject(Value& obj, std::string_view key, Allocator& a) {
  SDRA_CHECK(obj.IsObject());
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  if (it == obj.MemberEnd()) {
    obj.AddMember(str(key, a), Value(rapidjson::kObjectType), a);
    return (obj.MemberEnd() - 1)->value;
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

}  // namespace sriovdra::json
