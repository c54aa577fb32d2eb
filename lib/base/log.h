#pragma once
// Process-wide logging in klog's line format, so log tooling for Kubernetes components reads it:
//   I1130 09:38:48.123456   4242 informer.cpp:120] message
// Each statement is written as one line with one write(2), so lines of concurrent threads never
// interleave. Verbosity works like klog's -v: SDRA_VLOG(2) prints only with --v >= 2.
// Never log credentials: tokens, keys and certificates are redacted by the code that owns them.
#include <atomic>
#include <sstream>
#include <string_view>

namespace sriovdra::log {

enum class Severity { kInfo, kWarning, kError };

void setVerbosity(int v);
int verbosity();

class Line {
 public:
  Line(Severity severity, const char* file, int line);
  ~Line();
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;
  template <typename T>
  Line& operator<<(const T& v) {
    out_ << v;
    return *this;
  }

 private:
  std::ostringstream out_;
};

}  // namespace sriovdra::log

#define SDRA_LOG_INFO ::sriovdra::log::Line(::sriovdra::log::Severity::kInfo, __FILE__, __LINE__)
#define SDRA_LOG_WARN ::sriovdra::log::Line(::sriovdra::log::Severity::kWarning, __FILE__, __LINE__)
#define SDRA_LOG_ERROR ::sriovdra::log::Line(::sriovdra::log::Severity::kError, __FILE__, __LINE__)
#define SDRA_VLOG(level)                        \
  if (::sriovdra::log::verbosity() < (level)) { \
  } else                                        \
    SDRA_LOG_INFO
