#include "support/metrics_text.h"

#include <cstdlib>
#include <limits>
#include <sstream>

namespace sriovdra::testing {

double sampleValue(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace sriovdra::testing
