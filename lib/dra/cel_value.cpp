#include "dra/cel_value.h"

namespace sriovdra::dra::cel {

std::string_view typeName(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNull:
      return "null_type";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kUint:
      return "uint";
    case Value::Kind::kDouble:
      return "double";
    case Value::Kind::kString:
      return "string";
    case Value::Kind::kList:
      return "list";
    case Value::Kind::kQuantity:
      return "Quantity";
    case Value::Kind::kSemver:
      return "Semver";
    case Value::Kind::kError:
      return "error";
    case Value::Kind::kDevice:
      return "DRADevice";
    default:
      return "map";
  }
}

Value noOverload(std::string_view op, const Value& a, const Value* b) {
  std::string msg = "no such overload: " + std::string(op) + "(" + std::string(typeName(a));
  if (b != nullptr) msg += ", " + std::string(typeName(*b));
  return Value::error(msg + ")");
}

}  // namespace sriovdra::dra::cel
