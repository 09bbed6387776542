// Number and time formatting of the Prometheus HTTP API's JSON.
//
// Contract:
// - FormatSampleValue(v) is Go's strconv.FormatFloat(v, 'f', -1, 64), or
//   'e' when 0 < |v| < 1e-6 or |v| >= 1e21 (the shortest text that reads
//   back as v); "NaN", "+Inf", "-Inf" for the special values.
// - FormatTimestamp(ms) is the time in seconds as a JSON number: integral
//   seconds, then ".ddd" (always three digits) when ms is not a whole
//   second, e.g. 1500 → "1.500", -1 → "-0.001".
#pragma once

#include <cstdint>
#include <string>

namespace gpumon::web::api {

std::string FormatSampleValue(double v);
std::string FormatTimestamp(int64_t ms);

// Into a caller-provided buffer (at least 32 bytes); returns the length.
size_t FormatSampleValue(double v, char* buf);
size_t FormatTimestamp(int64_t ms, char* buf);

}  // namespace gpumon::web::api
