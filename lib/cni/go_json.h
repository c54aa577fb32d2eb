#pragma once
// Reading a JSON object into fields the way Go's encoding/json fills a struct, pure, so that a
// configuration the Go CNI plugins accept is accepted here and one they refuse is refused with
// their words:
//   * a key names a field exactly or else ignoring ASCII case ("VLAN", "spoofChk");
//   * every key naming the field assigns it, so the last one wins;
//   * null leaves the field as it was (absent);
//   * a value of another JSON type is an error: "json: cannot unmarshal string into Go struct
//     field NetConf.vlan of type int" (a number that is not a whole number within the Go type's
//     range: "json: cannot unmarshal number 1.5 into Go struct field NetConf.vlan of type int");
//   * keys that name no field are ignored.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace sriovdra::cni {

class GoFields {
 public:
  // `object` must be a JSON object and outlive this; `go_struct` names it in errors.
  GoFields(const json::Value& object, std::string go_struct)
      : object_(object), go_struct_(std::move(go_struct)) {}

  // The value of the last key naming `field`, nullptr when there is none or it is null.
  const json::Value* find(std::string_view field) const;
  Result<std::optional<std::string>> string(std::string_view field) const;
  // Go's int (64 bits) or, with bits = 32 and is_unsigned, uint32 and so on.
  Result<std::optional<int64_t>> integer(std::string_view field, int bits = 64,
                                         bool is_unsigned = false) const;
  Result<std::optional<bool>> boolean(std::string_view field) const;
  // An object or nullptr; another type is an error naming `go_type` (e.g. "types.IPAM").
  Result<const json::Value*> object(std::string_view field, std::string_view go_type) const;

 private:
  Status mismatch(const json::Value& v, std::string_view field, std::string_view go_type) const;
  const json::Value& object_;
  std::string go_struct_;
};

// Go's %q of a string (strconv.Quote): in double quotes, '"' and '\\' escaped, control bytes as
// \n, \t, \xNN. The SR-IOV CNIs quote nested errors so.
std::string goQuote(std::string_view s);

// The words Go uses for a JSON value's type in its errors ("string", "number 1.5", "bool",
// "array", "object").
std::string goJsonType(const json::Value& v);

}  // namespace sriovdra::cni
