#include "tsdb/chunkenc/decimal.h"

#include <bit>
#include <cmath>
#include <initializer_list>

namespace gpumon::tsdb::chunkenc {

namespace {

constexpr double kPow10[kMaxScale + 1] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                          1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};

// 2^63: doubles at or beyond it do not convert to int64.
constexpr double kInt64Limit = 9223372036854775808.0;

}  // namespace

double Pow10(int k) { return kPow10[k]; }

bool DecimalAt(double v, int k, int64_t* m) {
  const double x = v * kPow10[k];
  // Also rejects NaN and infinities.
  if (!(x > -kInt64Limit && x < kInt64Limit)) return false;
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  const int64_t c = static_cast<int64_t>(std::nearbyint(x));
  // v * 10^k is itself rounded, so the integer may be one off the nearest.
  for (int64_t d : {int64_t{0}, int64_t{-1}, int64_t{1}}) {
    // Wrapping add: c +- 1 may step past the int64 range at its edges.
    const int64_t cand = static_cast<int64_t>(static_cast<uint64_t>(c) + static_cast<uint64_t>(d));
    if (std::bit_cast<uint64_t>(DecimalValue(cand, k)) == bits) {
      *m = cand;
      return true;
    }
  }
  return false;
}

int MinDecimalScale(double v) {
  if (!std::isfinite(v)) return -1;
  int64_t m;
  for (int k = 0; k <= kMaxScale; ++k) {
    if (std::fabs(v) * kPow10[k] >= kInt64Limit) return -1;
    if (DecimalAt(v, k, &m)) return k;
  }
  return -1;
}

}  // namespace gpumon::tsdb::chunkenc
