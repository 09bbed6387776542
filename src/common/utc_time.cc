#include "common/utc_time.h"

#include <cstdio>
#include <ctime>

namespace gpumon {

std::string FormatUtcMs(int64_t unix_ms, const char* format) {
  const int64_t secs = unix_ms >= 0 ? unix_ms / 1000 : -((-unix_ms + 999) / 1000);
  const int64_t frac = unix_ms - secs * 1000;
  const std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), format, &tm);
  std::string out = buf;
  if (frac != 0) {
    char f[32];
    std::snprintf(f, sizeof(f), ".%03lld", static_cast<long long>(frac));
    std::string fs = f;
    while (fs.back() == '0') fs.pop_back();
    out += fs;
  }
  return out;
}

}  // namespace gpumon
