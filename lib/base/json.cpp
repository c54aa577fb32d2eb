#include "base/json.h"

#include <cmath>

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

// Builds the DOM from the reader's SAX events in one pass, refusing nesting past kMaxDepth: the
// iterative reader uses no stack of its own, so a document of 200,000 '[' is refused here instead
// of overflowing the recursive code that later walks the DOM. With a `member`, only that member
// of the top-level object is built ({"<member>": value}) and reading stops right after it.
class Builder {
 public:
  Builder(Document& doc, std::string_view member) : doc_(doc), member_(member) {}
  bool tooDeep() const { return too_deep_; }
  bool loneSurrogate() const { return lone_surrogate_; }
  bool outOfRange() const { return out_of_range_; }
  bool found() const { return found_; }

  // RapidJSON's Handler concept fixes the names of the SAX callbacks below.
  // NOLINTBEGIN(readability-identifier-naming)
  bool Null() {
    return value([&] { return doc_.Null(); });
  }
  bool Bool(bool b) {
    return value([&] { return doc_.Bool(b); });
  }
  bool Int(int i) {
    return value([&] { return doc_.Int(i); });
  }
  bool Uint(unsigned i) {
    return value([&] { return doc_.Uint(i); });
  }
  bool Int64(int64_t i) {
    return value([&] { return doc_.Int64(i); });
  }
  bool Uint64(uint64_t i) {
    return value([&] { return doc_.Uint64(i); });
  }
  // A number beyond a double's range would be infinite, which JSON cannot write back: refused.
  bool Double(double d) {
    if (!std::isfinite(d)) {
      out_of_range_ = true;
      return false;
    }
    return value([&] { return doc_.Double(d); });
  }
  bool RawNumber(const char* str, rapidjson::SizeType length, bool copy) {
    return value([&] { return doc_.RawNumber(str, length, copy); });
  }
  bool String(const char* str, rapidjson::SizeType length, bool copy) {
    if (!wellFormed(str, length)) return false;
    return value([&] { return doc_.String(str, length, copy); });
  }
  bool Key(const char* str, rapidjson::SizeType length, bool copy) {
    if (!wellFormed(str, length)) return false;
    if (!member_.empty() && depth_ == 1) {
      keeping_ = std::string_view(str, length) == member_;
      if (keeping_) return doc_.StartObject() && doc_.Key(str, length, true);
      return true;
    }
    return !keeping() || doc_.Key(str, length, copy);
  }
  bool StartObject() {
    return open([&] { return doc_.StartObject(); });
  }
  bool EndObject(rapidjson::SizeType n) {
    return close([&] { return doc_.EndObject(n); });
  }
  bool StartArray() {
    return open([&] { return doc_.StartArray(); });
  }
  bool EndArray(rapidjson::SizeType n) {
    return close([&] { return doc_.EndArray(n); });
  }
  // NOLINTEND(readability-identifier-naming)

 private:
  // The reader validates the text's UTF-8, but decodes a \u escape of a lone surrogate
  // ("\udc00") into the three bytes ED B0 80, which are not UTF-8: no encoder may write them
  // back. Such a string is refused here.
  bool wellFormed(const char* str, rapidjson::SizeType length) {
    for (rapidjson::SizeType i = 0; i + 1 < length; ++i) {
      auto lead = static_cast<unsigned char>(str[i]);
      auto next = static_cast<unsigned char>(str[i + 1]);
      if (lead == 0xED && next >= 0xA0) {
        lone_surrogate_ = true;
        return false;
      }
    }
    return true;
  }
  bool keeping() const { return member_.empty() || keeping_; }
  // True when, with a member, what was just built completes its value.
  bool memberEnds() const { return !member_.empty() && depth_ == 1; }
  template <typename Fn>
  bool value(Fn build) {
    if (!keeping()) return true;
    if (!build()) return false;
    return !memberEnds() || finish();
  }
  template <typename Fn>
  bool open(Fn build) {
    if (++depth_ > kMaxDepth) {
      too_deep_ = true;
      return false;
    }
    return !keeping() || build();
  }
  template <typename Fn>
  bool close(Fn build) {
    --depth_;
    if (!keeping()) return true;
    if (!build()) return false;
    return !memberEnds() || finish();
  }
  // The kept member is complete: close the wrapping object and stop reading.
  bool finish() {
    doc_.EndObject(1);
    found_ = true;
    keeping_ = false;
    return false;
  }

  Document& doc_;
  std::string_view member_;
  size_t depth_ = 0;
  bool keeping_ = false;
  bool too_deep_ = false;
  bool lone_surrogate_ = false;
  bool out_of_range_ = false;
  bool found_ = false;
};

Status parseError(size_t offset, const std::string& what) {
  return Status(Code::kInvalidArgument,
                "invalid JSON at byte " + std::to_string(offset) + ": " + what);
}

// One pass of the reader into a Builder; see parse() and parseMember().
Result<Document> build(std::string_view text, std::string_view member) {
  Document doc;
  rapidjson::MemoryStream stream(text.data(), text.size());
  Builder builder(doc, member);
  rapidjson::Reader reader;
  rapidjson::ParseResult result;
  auto generate = [&](Document&) {  // true: the builder holds exactly one value to take
    result = reader.Parse<kParseFlags>(stream, builder);
    return member.empty() ? !result.IsError() : builder.found();
  };
  doc.Populate(generate);
  if (builder.found()) return doc;
  if (result.IsError()) {
    if (builder.tooDeep()) {
      return parseError(result.Offset(),
                        "nested deeper than " + std::to_string(kMaxDepth) + " arrays and objects");
    }
    if (builder.loneSurrogate()) {
      return parseError(result.Offset(),
                        "a \\u escape of a lone UTF-16 surrogate (\\ud800-\\udfff) is not text");
    }
    if (builder.outOfRange()) {
      return parseError(result.Offset(), "a number beyond the range of a double");
    }
    return parseError(result.Offset(), rapidjson::GetParseError_En(result.Code()));
  }
  if (!member.empty()) return parse(text);  // no such member: the whole text, as parse() reads it
  return doc;
}

}  // namespace

Result<Document> parse(std::string_view text) { return build(text, {}); }

Result<Document> parseMember(std::string_view text, std::string_view member) {
  return build(text, member);
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
