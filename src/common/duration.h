// Prometheus-style durations ("1s", "250ms", "1m30s", "2h").
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gpumon {

// Parses a Prometheus duration: one or more <integer><unit> terms with units
// ms, s, m, h, d, w, y, in decreasing order. Returns an error naming the text
// otherwise. "0s" is accepted; callers decide whether zero is meaningful.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Formats a duration the way Prometheus prints it ("1m30s", "250ms").
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace gpumon
