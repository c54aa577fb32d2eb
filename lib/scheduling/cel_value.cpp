#include "scheduling/cel_value.h"

#include <cmath>

namespace sriovdra::scheduling::cel {

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

Value attributeValue(const api::AttributeValue& a) {
  using T = api::AttributeValue::Type;
  auto version = [](const std::string& s) {
    auto v = Semver::parse(s);
    if (!v.ok()) return Value::error(v.status().message());
    return Value{.kind = Value::Kind::kSemver, .semver = std::make_shared<Semver>(std::move(*v))};
  };
  switch (a.type) {
    case T::kInt:
      return Value::ofInt(a.int_value);
    case T::kBool:
      return Value::ofBool(a.bool_value);
    case T::kString:
      return Value::ofString(a.string_value);
    case T::kVersion:
      return version(a.string_value);
    default:
      break;
  }
  auto list = std::make_shared<List>();
  for (int64_t v : a.intValues()) list->push_back(Value::ofInt(v));
  for (bool v : a.boolValues()) list->push_back(Value::ofBool(v));
  for (const auto& v : a.stringValues()) {
    list->push_back(a.type == T::kVersions ? version(v) : Value::ofString(v));
  }
  return Value{.kind = Value::Kind::kList, .list = std::move(list)};
}

std::string display(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kString:
      return v.s;
    case Value::Kind::kInt:
      return std::to_string(v.i);
    case Value::Kind::kUint:
      return std::to_string(v.u) + "u";
    case Value::Kind::kBool:
      return v.b ? "true" : "false";
    default:
      return std::string(typeName(v));
  }
}

int compareNumbers(const Value& a, const Value& b) {
  auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (a.kind == Value::Kind::kDouble || b.kind == Value::Kind::kDouble) {
    auto as = [](const Value& v) {
      return v.kind == Value::Kind::kDouble
                 ? v.d
                 : (v.kind == Value::Kind::kInt ? static_cast<double>(v.i)
                                                : static_cast<double>(v.u));
    };
    double x = as(a), y = as(b);
    if (std::isnan(x) || std::isnan(y)) return 2;
    return sign(x, y);
  }
  if (a.kind == b.kind) return a.kind == Value::Kind::kInt ? sign(a.i, b.i) : sign(a.u, b.u);
  if (a.kind == Value::Kind::kInt) return a.i < 0 ? -1 : sign(static_cast<uint64_t>(a.i), b.u);
  return b.i < 0 ? 1 : sign(a.u, static_cast<uint64_t>(b.i));
}

Value negate(const Value& v) {
  if (v.isError()) return v;
  if (v.kind == Value::Kind::kInt) {
    if (v.i == INT64_MIN) return Value::error("integer overflow");
    return Value::ofInt(-v.i);
  }
  if (v.kind == Value::Kind::kDouble) return Value::ofDouble(-v.d);
  return noOverload("-_", v);
}

}  // namespace sriovdra::scheduling::cel
