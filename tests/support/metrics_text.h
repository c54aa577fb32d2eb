#pragma once
// Reading Prometheus text exposition in tests and scale drivers.
#include <string>

namespace sriovdra::testing {

// The value of one sample in the rendered text; NaN when absent. series: "name" or
// "name{a=\"x\",b=\"y\"}" with labels in the order the serializer prints them.
double sampleValue(const std::string& text, const std::string& series);

}  // namespace sriovdra::testing
