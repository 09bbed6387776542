// A sample: millisecond timestamp and float64 value. Values are stored
// bit-exactly, including NaN payloads such as Prometheus's stale marker.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace gpumon::tsdb {

struct Sample {
  int64_t t = 0;
  double v = 0;
};

// Prometheus's staleness marker: a NaN with this exact bit pattern, written
// when a series disappears from a scrape. Any other NaN is an ordinary value.
inline constexpr uint64_t kStaleNaNBits = 0x7ff0000000000002ULL;
inline double StaleNaN() { return std::bit_cast<double>(kStaleNaNBits); }
inline bool IsStaleNaN(double v) { return std::bit_cast<uint64_t>(v) == kStaleNaNBits; }

inline constexpr int64_t kMinTime = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kMaxTime = std::numeric_limits<int64_t>::max();

}  // namespace gpumon::tsdb
