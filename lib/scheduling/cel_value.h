#pragma once
// Internal to the CEL implementation (cel.h is the interface): the values expressions compute
// with, and the syntax tree the parser builds and the evaluator walks. Pure.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/policies.h"
#include "scheduling/quantity.h"

namespace sriovdra::scheduling::cel {

struct Value;
using List = std::vector<Value>;
using MapEntries = std::vector<std::pair<Value, Value>>;

struct Value {
  enum class Kind {
    kNull,
    kBool,
    kInt,
    kUint,
    kDouble,
    kString,
    kList,
    kMap,
    kQuantity,
    kSemver,
    kError,
    kDevice,       // the variable `device`
    kAttrDomains,  // device.attributes: domain -> attributes
    kAttrs,        // device.attributes[domain]
    kCapDomains,   // device.capacity
    kCaps,         // device.capacity[domain]
  };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // string, error message, or the domain of kAttrs / kCaps
  std::shared_ptr<const List> list;
  std::shared_ptr<const MapEntries> map;
  std::shared_ptr<const Quantity> quantity;
  std::shared_ptr<const Semver> semver;

  static Value ofBool(bool v) { return {.kind = Kind::kBool, .b = v}; }
  static Value ofInt(int64_t v) { return {.kind = Kind::kInt, .i = v}; }
  static Value ofUint(uint64_t v) { return {.kind = Kind::kUint, .u = v}; }
  static Value ofDouble(double v) { return {.kind = Kind::kDouble, .d = v}; }
  static Value ofString(std::string v) { return {.kind = Kind::kString, .s = std::move(v)}; }
  static Value error(std::string message) {
    return {.kind = Kind::kError, .s = std::move(message)};
  }
  static Value of(Kind k, std::string domain = "") { return {.kind = k, .s = std::move(domain)}; }
  bool isError() const { return kind == Kind::kError; }
  bool isNumber() const {
    return kind == Kind::kInt || kind == Kind::kUint || kind == Kind::kDouble;
  }
};

std::string_view typeName(const Value& v);
// The error of an operator or function applied to types it has no overload for.
Value noOverload(std::string_view op, const Value& a, const Value* b = nullptr);
// A published device attribute as a CEL value (versions as Semver, list types as lists).
Value attributeValue(const api::AttributeValue& a);
// A scalar as it appears in messages ("no such key: 3u"); other kinds by their type name.
std::string display(const Value& v);
// Two numbers of any numeric kinds by value: -1, 0 or 1; 2 when a NaN makes them unordered.
int compareNumbers(const Value& a, const Value& b);
// CEL's unary minus (int overflow is an error).
Value negate(const Value& v);

enum class Op {
  kLiteral,
  kIdent,
  kSelect,
  kHas,
  kIndex,
  kCall,
  kList,
  kMap,
  kNot,
  kNeg,
  kAnd,
  kOr,
  kConditional,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
};

struct Node {
  Op op = Op::kLiteral;
  size_t offset = 0;
  Value literal;
  std::string name;       // identifier, field or function
  bool receiver = false;  // kCall: args[0] is the target of a member call
  std::vector<std::shared_ptr<const Node>> args;
};

using NodePtr = std::shared_ptr<const Node>;

}  // namespace sriovdra::scheduling::cel
