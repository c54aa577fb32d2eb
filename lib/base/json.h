#pragma once
// Small helpers over RapidJSON: parse with a useful error, compact serialisation, and
// null-safe typed reads of object members (a missing or mistyped member yields nullptr/fallback).
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "base/status.h"

namespace sriovdra::json {

using Value = rapidjson::Value;
using Document = rapidjson::Document;
using Allocator = rapidjson::Document::AllocatorType;

// Parses a complete JSON text; the error names the byte offset and RapidJSON's reason.
// One JSON value, nothing after it but whitespace, valid UTF-8 (also what its \u escapes decode
// to: a lone surrogate is refused), at most kMaxDepth arrays and objects deep (deeper input is
// refused before it is built: the DOM code recurses).
inline constexpr size_t kMaxDepth = 512;
Result<Document> parse(std::string_view text);
// Only the member `member` of the top-level object, as {"<member>": value}: the text is read up to
// the end of that member (what follows is neither built nor validated), with parse()'s rules for
// what is read. For answers whose bulk follows what is needed: a written object's metadata comes
// before its spec and status. Without such a member, the whole text as parse() reads it.
Result<Document> parseMember(std::string_view text, std::string_view member);

// Compact serialisation.
std::string dump(const Value& v);

// Re-indents valid JSON text (check it with parse() first) as Go's encoding/json Indent does with
// an empty prefix: every token verbatim (numbers and escapes as written), one member or element
// per line, `": "` after a key, `{}` and `[]` kept empty. Written by hand because RapidJSON's
// PrettyWriter re-encodes numbers and strings, and the NetworkAttachmentDefinitions we render must
// be byte-identical to the SR-IOV network operator's.
std::string indentLikeGo(std::string_view valid_json, std::string_view unit);

const Value* member(const Value& obj, std::string_view key);
const Value* objectMember(const Value& obj, std::string_view key);
const Value* arrayMember(const Value& obj, std::string_view key);
std::string_view stringOr(const Value& obj, std::string_view key, std::string_view fallback = {});
int64_t intOr(const Value& obj, std::string_view key, int64_t fallback);
bool boolOr(const Value& obj, std::string_view key, bool fallback);
// Follows a path of object keys: at(v, {"metadata", "name"}).
const Value* at(const Value& v, std::initializer_list<std::string_view> path);

inline rapidjson::Value str(std::string_view s, Allocator& a) {
  // An empty string_view may have a null data(), which RapidJSON would turn into null.
  return rapidjson::Value(s.empty() ? "" : s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}
// Sets obj[key] = value, replacing an existing member.
void set(Value& obj, std::string_view key, Value value, Allocator& a);
inline void setString(Value& obj, std::string_view key, std::string_view s, Allocator& a) {
  set(obj, key, str(s, a), a);
}
// Returns obj[key] as an object, creating it (or replacing a non-object) when needed.
Value& ensureObject(Value& obj, std::string_view key, Allocator& a);

}  // namespace sriovdra::json
