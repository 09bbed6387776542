// Decimal view of a double: v == m / 10^k for an int64 m, as the decoder
// computes it (one IEEE division, correctly rounded), compared bit for bit.
//
// Why this is exact for the values we store: an exporter that computes
// 312456 / 1000.0, and a scraper that parses the text "312.456", both get the
// double nearest to the real number 312.456, which is what the decoder's
// 312456 / 10^3 yields too. Values that are not such a quotient (or NaN,
// infinities, -0.0) fail the check and are stored some other way.
#pragma once

#include <cstdint>

namespace gpumon::tsdb::chunkenc {

// 10^18 is the largest power of ten below 2^63.
inline constexpr int kMaxScale = 18;

// 10^k as a double (exact for every k <= kMaxScale).
double Pow10(int k);

// The value the decoder produces for (m, k).
inline double DecimalValue(int64_t m, int k) { return static_cast<double>(m) / Pow10(k); }

// If DecimalValue(m, k) reproduces v's bits for some m, sets *m and returns
// true.
bool DecimalAt(double v, int k, int64_t* m);

// The smallest k (0..kMaxScale) at which DecimalAt succeeds, or -1.
int MinDecimalScale(double v);

}  // namespace gpumon::tsdb::chunkenc
