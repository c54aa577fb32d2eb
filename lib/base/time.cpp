#include "base/time.h"

#include <cstdio>
#include <ctime>

namespace sriovdra {
namespace {

bool digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::string format(WallTime t, bool micro) {
  auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  if (secs > t) secs -= std::chrono::seconds(1);
  std::time_t tt = std::chrono::system_clock::to_time_t(secs);
  std::tm parts{};
  ::gmtime_r(&tt, &parts);
  char buf[40];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &parts);
  std::string out(buf, n);
  if (micro) {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count();
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(us));
    out += buf;
  }
  out += 'Z';
  return out;
}

}  // namespace

Result<WallTime> parseRfc3339(std::string_view s) {
  auto bad = [&] {
    return Status(Code::kInvalidArgument,
                  "\"" + std::string(s) + "\" is not an RFC 3339 time like 2026-01-02T15:04:05Z");
  };
  int year, mon, day, hour, min, sec;
  if (!digits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, &mon) ||
      s[7] != '-' || !digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !digits(s, 11, 2, &hour) || s[13] != ':' || !digits(s, 14, 2, &min) || s[16] != ':' ||
      !digits(s, 17, 2, &sec)) {
    return bad();
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return bad();
  }
  size_t pos = 19;
  int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int scale = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (scale < 6) {
        micros = micros * 10 + (s[pos] - '0');
        ++scale;
      }
      ++pos;
    }
    if (scale == 0) return bad();
    while (scale++ < 6) micros *= 10;
  }
  int offset_minutes = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(s, pos + 4, 2, &om)) {
      return bad();
    }
    offset_minutes = (s[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != s.size()) return bad();
  std::tm parts{};
  parts.tm_year = year - 1900;
  parts.tm_mon = mon - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = min;
  parts.tm_sec = sec;
  std::time_t tt = ::timegm(&parts);
  return std::chrono::system_clock::from_time_t(tt) - std::chrono::minutes(offset_minutes) +
         std::chrono::microseconds(micros);
}

std::string formatRfc3339(WallTime t) { return format(t, false); }
std::string formatRfc3339Micro(WallTime t) { return format(t, true); }
std::string nowRfc3339() { return formatRfc3339(std::chrono::system_clock::now()); }

}  // namespace sriovdra
