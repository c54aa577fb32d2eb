#pragma once
// Internal to the CEL implementation: evaluates a syntax tree against one device with CEL's
// semantics and a cost budget (see cel.h). Pure.
#include <cstdint>

#include "scheduling/cel.h"
#include "scheduling/cel_value.h"

namespace sriovdra::scheduling::cel {

inline constexpr std::string_view kCostExceededMessage =
    "operation cancelled: actual cost limit exceeded";

struct Evaluation {
  Value value;
  bool over_budget = false;  // the cost limit was reached (value is then an error)
};

Evaluation evaluate(const Node& root, const DeviceInput& device, int64_t cost_limit);

}  // namespace sriovdra::scheduling::cel
