#include "web/api/value_format.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace gpumon::web::api {

size_t FormatSampleValue(double v, char* buf) {
  if (std::isnan(v)) {
    std::memcpy(buf, "NaN", 3);
    return 3;
  }
  if (std::isinf(v)) {
    std::memcpy(buf, v > 0 ? "+Inf" : "-Inf", 4);
    return 4;
  }
  double a = std::fabs(v);
  auto fmt = std::chars_format::fixed;
  if (a != 0 && (a < 1e-6 || a >= 1e21)) fmt = std::chars_format::scientific;
  // Shortest round-trip form, as Go's precision -1; fixed notation of
  // values below 1e21 fits in 32 bytes except for the tiny ones, which
  // take the scientific branch.
  auto [end, ec] = std::to_chars(buf, buf + 32, v, fmt);
  if (ec != std::errc()) return 0;
  return static_cast<size_t>(end - buf);
}

std::string FormatSampleValue(double v) {
  char buf[32];
  return std::string(buf, FormatSampleValue(v, buf));
}

size_t FormatTimestamp(int64_t ms, char* buf) {
  char* p = buf;
  uint64_t u = static_cast<uint64_t>(ms);
  if (ms < 0) {
    *p++ = '-';
    u = ~u + 1;  // magnitude, also for INT64_MIN
  }
  auto [end, ec] = std::to_chars(p, buf + 32, u / 1000);
  p = end;
  unsigned frac = static_cast<unsigned>(u % 1000);
  if (frac != 0) {
    *p++ = '.';
    *p++ = static_cast<char>('0' + frac / 100);
    *p++ = static_cast<char>('0' + frac / 10 % 10);
    *p++ = static_cast<char>('0' + frac % 10);
  }
  return static_cast<size_t>(p - buf);
}

std::string FormatTimestamp(int64_t ms) {
  char buf[32];
  return std::string(buf, FormatTimestamp(ms, buf));
}

}  // namespace gpumon::web::api
