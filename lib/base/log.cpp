#include "base/log.h"

#include <cstdio>
#include <ctime>
#include <string>

#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

namespace sriovdra::log {
namespace {

std::atomic<int> g_verbosity{0};

void writeStderr(std::string_view line) {
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::write(STDERR_FILENO, line.data() + off, line.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

const char* baseName(const char* path) {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/') base = p + 1;
  }
  return base;
}

}  // namespace

void setVerbosity(int v) { g_verbosity.store(v); }
int verbosity() { return g_verbosity.load(std::memory_order_relaxed); }

Line::Line(Severity severity, const char* file, int line) {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  tm parts{};
  ::gmtime_r(&tv.tv_sec, &parts);
  char prefix[64];
  char sev = severity == Severity::kInfo ? 'I' : severity == Severity::kWarning ? 'W' : 'E';
  std::snprintf(prefix, sizeof prefix, "%c%02d%02d %02d:%02d:%02d.%06ld %7ld ", sev,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<long>(tv.tv_usec), static_cast<long>(::syscall(SYS_gettid)));
  out_ << prefix << baseName(file) << ':' << line << "] ";
}

Line::~Line() {
  out_ << '\n';
  std::string text = out_.str();
  writeStderr(text);
}

}  // namespace sriovdra::log
