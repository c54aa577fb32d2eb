#include "cni/go_json.h"

#include <cmath>
#include <limits>

#include "base/strings.h"

namespace sriovdra::cni {

std::string goJsonType(const json::Value& v) {
  if (v.IsString()) return "string";
  if (v.IsBool()) return "bool";
  if (v.IsArray()) return "array";
  if (v.IsObject()) return "object";
  if (v.IsNumber()) {
    if (v.IsInt64()) return "number " + std::to_string(v.GetInt64());
    if (v.IsUint64()) return "number " + std::to_string(v.GetUint64());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v.GetDouble());
    return std::string("number ") + buf;
  }
  return "null";
}

std::string goQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const json::Value* GoFields::find(std::string_view field) const {
  const json::Value* out = nullptr;
  for (auto it = object_.MemberBegin(); it != object_.MemberEnd(); ++it) {
    std::string_view key(it->name.GetString(), it->name.GetStringLength());
    if (key == field || equalsIgnoreCase(key, field))
      out = it->value.IsNull() ? nullptr : &it->value;
  }
  return out;
}

Status GoFields::mismatch(const json::Value& v, std::string_view field,
                          std::string_view go_type) const {
  return Status(Code::kInvalidArgument,
                "json: cannot unmarshal " + goJsonType(v) + " into Go struct field " + go_struct_ +
                    "." + std::string(field) + " of type " + std::string(go_type));
}

Result<std::optional<std::string>> GoFields::string(std::string_view field) const {
  const auto* v = find(field);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->IsString()) return mismatch(*v, field, "string");
  return std::optional<std::string>(std::string(v->GetString(), v->GetStringLength()));
}

Result<std::optional<int64_t>> GoFields::integer(std::string_view field, int bits,
                                                 bool is_unsigned) const {
  const auto* v = find(field);
  if (v == nullptr) return std::optional<int64_t>();
  std::string go_type = (is_unsigned ? "uint" : "int") + (bits == 64 ? "" : std::to_string(bits));
  if (!v->IsNumber()) return mismatch(*v, field, go_type);
  if (!v->IsInt64()) return mismatch(*v, field, go_type);  // fractions, or beyond 64 bits
  int64_t n = v->GetInt64();
  int64_t max = bits >= 64 ? std::numeric_limits<int64_t>::max()
                           : (int64_t{1} << (is_unsigned ? bits : bits - 1)) - 1;
  int64_t min = is_unsigned ? 0 : bits >= 64 ? std::numeric_limits<int64_t>::min() : -max - 1;
  if (n < min || n > max) return mismatch(*v, field, go_type);
  return std::optional<int64_t>(n);
}

Result<std::optional<bool>> GoFields::boolean(std::string_view field) const {
  const auto* v = find(field);
  if (v == nullptr) return std::optional<bool>();
  if (!v->IsBool()) return mismatch(*v, field, "bool");
  return std::optional<bool>(v->GetBool());
}

Result<const json::Value*> GoFields::object(std::string_view field,
                                            std::string_view go_type) const {
  const auto* v = find(field);
  if (v == nullptr) return static_cast<const json::Value*>(nullptr);
  if (!v->IsObject()) return mismatch(*v, field, go_type);
  return v;
}

}  // namespace sriovdra::cni
