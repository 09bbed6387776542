// UTC timestamps written the way Go's time package writes them with a
// trimmed fraction (layouts ending in ".999"), for output that must match
// Prometheus's: "2024-01-02 03:04:05.5 +0000 UTC", "2024-01-02T03:04:05.5Z".
//
// Contract: FormatUtcMs writes the UTC date and time of `unix_ms` (seconds
// rounded down, also before 1970) with strftime's `format`, then the
// milliseconds as "." and up to three digits without trailing zeros, or
// nothing when the time is a whole second. Callers append any zone suffix.
#pragma once

#include <cstdint>
#include <string>

namespace gpumon {

std::string FormatUtcMs(int64_t unix_ms, const char* format);

}  // namespace gpumon
