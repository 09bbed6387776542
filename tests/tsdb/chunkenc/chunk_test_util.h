// Helpers shared by the chunk encoding tests: decoding a whole chunk,
// bit-exact comparison and generators of adversarial sample sequences.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tsdb/chunkenc/chunk.h"
#include "tsdb/sample.h"

namespace gpumon::tsdb::chunkenc::chunktest {

struct Decoded {
  std::vector<Sample> samples;
  Status status;
};

inline Decoded DecodeAll(std::span<const uint8_t> chunk) {
  Decoded out;
  auto it = NewIterator(chunk);
  // A chunk never holds more than kMaxSamples; more would mean a runaway.
  while (out.samples.size() <= static_cast<size_t>(kMaxSamples) && it->Next()) {
    out.samples.push_back(it->At());
  }
  out.status = it->status();
  return out;
}

inline uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }
inline double FromBits(uint64_t b) { return std::bit_cast<double>(b); }

// Compares times and value bit patterns; reports the first difference.
inline ::testing::AssertionResult SameSamples(std::span<const Sample> want,
                                              std::span<const Sample> got) {
  if (want.size() != got.size()) {
    return ::testing::AssertionFailure()
           << "sample count " << got.size() << ", want " << want.size();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].t != got[i].t || Bits(want[i].v) != Bits(got[i].v)) {
      return ::testing::AssertionFailure()
             << "sample " << i << ": got (" << got[i].t << ", 0x" << std::hex << Bits(got[i].v)
             << std::dec << "), want (" << want[i].t << ", 0x" << std::hex << Bits(want[i].v)
             << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult RoundTrips(std::span<const uint8_t> chunk,
                                             std::span<const Sample> want) {
  Decoded d = DecodeAll(chunk);
  if (!d.status.ok()) return ::testing::AssertionFailure() << d.status.message();
  auto same = SameSamples(want, d.samples);
  if (!same) return same;
  Result<int> count = CountSamples(chunk);
  if (!count.ok()) return ::testing::AssertionFailure() << count.status().message();
  if (*count != static_cast<int>(want.size())) {
    return ::testing::AssertionFailure() << "CountSamples " << *count;
  }
  return ::testing::AssertionSuccess();
}

// Doubles that break naive encoders: NaN payloads (the stale marker among
// them), infinities, signed zeros, subnormals, extremes.
inline std::vector<double> AdversarialValues() {
  using L = std::numeric_limits<double>;
  return {StaleNaN(),
          FromBits(0x7ff8000000000000ULL),  // quiet NaN
          FromBits(0xfff8000000000001ULL),  // negative NaN with payload
          FromBits(0x7ff0000000000001ULL),  // signalling NaN
          FromBits(0x7fffffffffffffffULL),
          L::infinity(),
          -L::infinity(),
          0.0,
          -0.0,
          L::denorm_min(),
          -L::denorm_min(),
          FromBits(0x000fffffffffffffULL),  // largest subnormal
          L::min(),
          L::max(),
          L::lowest(),
          L::epsilon(),
          1.0,
          -1.0,
          0.1,
          0.87,
          312.5,
          9007199254740993.0,  // 2^53 + 1 rounds to 2^53
          9223372036854775807.0,
          -9223372036854775808.0,
          1e300,
          -1e-300};
}

// A random sequence of n samples of a randomly chosen shape: timestamps
// regular, jittered, with gaps or with huge deltas; values constant,
// integers, decimals, counters, random bits or adversarial, possibly mixed.
inline std::vector<Sample> RandomSeries(std::mt19937_64& rng, int n) {
  std::vector<Sample> out(static_cast<size_t>(n));
  auto pick = [&](uint64_t k) { return rng() % k; };
  // Timestamps: the start leaves room for n strictly increasing times.
  const int t_shape = static_cast<int>(pick(6));
  int64_t t = t_shape == 5 ? std::numeric_limits<int64_t>::min() + static_cast<int64_t>(pick(1000))
                           : static_cast<int64_t>(pick(uint64_t{1} << 42)) - (int64_t{1} << 41);
  const int64_t step = 1 + static_cast<int64_t>(pick(60000));
  for (int i = 0; i < n; ++i) {
    out[i].t = t;
    const uint64_t steps_left = static_cast<uint64_t>(n - 1 - i);
    if (steps_left == 0) break;
    const uint64_t room =
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - static_cast<uint64_t>(t);
    const uint64_t max_d = room - (steps_left - 1);
    uint64_t d = static_cast<uint64_t>(step);
    switch (t_shape) {
      case 0:
        break;  // regular
      case 1:
        d = static_cast<uint64_t>(step + 10) - pick(21);
        break;  // jitter
      case 2:
        d *= pick(10) == 0 ? 2 + pick(5) : 1;
        break;  // missed scrapes
      case 3:
        d = 1 + pick(3);
        break;  // dense
      case 4:
        d = 1 + pick(uint64_t{1} << pick(40));
        break;  // anything
      default:
        d = 1 + pick(max_d / steps_left);
        break;  // huge, up to ~2^64
    }
    d = std::clamp<uint64_t>(d, 1, max_d);
    t = static_cast<int64_t>(static_cast<uint64_t>(t) + d);
  }
  // Values.
  const int v_shape = static_cast<int>(pick(8));
  const auto adversarial = AdversarialValues();
  const int k = static_cast<int>(pick(7));
  const double scale = std::pow(10.0, k);
  int64_t m = static_cast<int64_t>(pick(1000000)) - 500000;
  double c = static_cast<double>(rng()) / 3.0;
  for (int i = 0; i < n; ++i) {
    double v = 0;
    switch (v_shape) {
      case 0:
        v = c;
        break;  // constant
      case 1:
        m += static_cast<int64_t>(pick(7)) - 3;
        v = static_cast<double>(m);
        break;
      case 2:
        m += static_cast<int64_t>(pick(2000)) - 1000;
        v = static_cast<double>(m) / scale;
        break;
      case 3:
        m += static_cast<int64_t>(pick(1 << 20));
        v = static_cast<double>(m) / scale;
        break;
      case 4:
        v = FromBits(rng());
        break;  // any bits
      case 5:
        v = adversarial[pick(adversarial.size())];
        break;
      case 6:
        v = pick(4) == 0 ? static_cast<double>(pick(3)) : 1.0;
        break;  // steps
      default:
        v = static_cast<double>(pick(100)) / 100.0;
        break;  // ratios
    }
    if (v_shape != 5 && pick(40) == 0) v = adversarial[pick(adversarial.size())];
    out[i].v = v;
  }
  return out;
}

}  // namespace gpumon::tsdb::chunkenc::chunktest
