#pragma once
// CEL for DRA device selectors: the subset of Kubernetes' CEL environment that selectors use in
// practice (docs/alignment.md lists the gap to full CEL). Pure.
// compile() parses once and checks names statically: the only variable is `device` (fields
// driver, attributes, capacity, allowMultipleAllocations), functions are known with their arity.
// Errors carry line:column, what was expected and a caret under the input.
// matches() evaluates against one device with CEL's semantics: && and || absorb an error when
// the other side decides, a missing map key is an error (not false), comparing different types
// with == is false and ordering them is an error, integer overflow is an error, and evaluation
// stops with an error once the cost (one unit per operation, string length for string work)
// exceeds the limit. Unqualified attribute names belong to the device's driver domain.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "api/resource.h"
#include "base/status.h"

namespace sriovdra::scheduling::cel {

inline constexpr int64_t kDefaultCostLimit = 1'000'000;  // Kubernetes' CELSelectorExpressionMaxCost

struct DeviceInput {
  std::string_view driver;
  const api::SliceDevice& device;
};

struct Node;

class Program {
 public:
  // InvalidArgument: "syntax error at 1:23: expected ..., found ...\n<expression>\n<caret>".
  static Result<Program> compile(std::string_view expression);

  // true/false, or an error: a runtime error of the expression, a non-bool result, or the cost
  // limit (InvalidArgument in all cases, message as Kubernetes reports it).
  Result<bool> matches(const DeviceInput& device, int64_t cost_limit = kDefaultCostLimit) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::shared_ptr<const Node> root_;
};

}  // namespace sriovdra::scheduling::cel
