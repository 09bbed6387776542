// Brute-force references for the downsampling tests: per-window aggregates
// and counter increases computed directly from raw samples, independently
// of the code under test, plus a counter generator with resets.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "tsdb/sample.h"

namespace gpumon::tsdb::testing {

struct WindowExpect {
  int64_t t = 0;  // last sample time in the window
  double count = 0;
  double sum = 0;
  double abs_sum = 0;  // scale for the sum tolerance
  double min = 0;
  double max = 0;
};

inline int64_t FloorWindow(int64_t t, int64_t res) {
  return t >= 0 ? t / res : -((-t + res - 1) / res);
}

// Per window with a non-stale sample, in time order.
inline std::vector<WindowExpect> BruteWindows(const std::vector<Sample>& raw, int64_t res) {
  std::map<int64_t, std::vector<Sample>> by_window;
  for (const Sample& s : raw) {
    if (!IsStaleNaN(s.v)) by_window[FloorWindow(s.t, res)].push_back(s);
  }
  std::vector<WindowExpect> out;
  for (const auto& [w, ss] : by_window) {
    WindowExpect e;
    e.t = ss.back().t;
    e.count = static_cast<double>(ss.size());
    e.min = e.max = std::nan("");
    for (const Sample& s : ss) {
      e.sum += s.v;
      e.abs_sum += std::fabs(s.v);
      // Prometheus: NaN loses against any number.
      if (std::isnan(e.min) || s.v < e.min) e.min = s.v;
      if (std::isnan(e.max) || s.v > e.max) e.max = s.v;
    }
    out.push_back(e);
  }
  return out;
}

// increase() without extrapolation over [from, to), anchored at the last
// sample before `from` (as with a range reaching back to the previous
// sample): the sum over consecutive finite samples of the rise, or of the
// new value after a reset.
inline double AnchoredIncrease(const std::vector<Sample>& samples, int64_t from, int64_t to) {
  double inc = 0;
  bool have = false;
  double prev = 0;
  for (const Sample& s : samples) {
    if (s.t >= to) break;
    if (!std::isfinite(s.v)) continue;
    if (have && s.t >= from) inc += s.v >= prev ? s.v - prev : s.v;
    prev = s.v;
    have = true;
  }
  return inc;
}

inline ::testing::AssertionResult SumClose(double got, double want, double scale) {
  if (std::isnan(want) && std::isnan(got)) return ::testing::AssertionSuccess();
  if (std::isinf(want) && got == want) return ::testing::AssertionSuccess();
  if (std::fabs(got - want) <= 1e-9 * (scale + 1)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "sum " << got << ", want " << want;
}

// A counter scraped every ~step ms: increments of varying size, repeats,
// resets to zero or to a small value, gaps, and stale markers.
inline std::vector<Sample> RandomCounter(std::mt19937_64& rng, int64_t mint, int64_t maxt,
                                         int64_t step) {
  std::vector<Sample> out;
  double v = static_cast<double>(rng() % 100000);
  for (int64_t t = mint + static_cast<int64_t>(rng() % static_cast<uint64_t>(step)); t < maxt;
       t += step + static_cast<int64_t>(rng() % 5)) {
    const uint64_t r = rng() % 100;
    if (r == 0) {
      t += step * static_cast<int64_t>(rng() % 50);  // gap
      continue;
    }
    if (r == 1) {
      out.push_back({t, StaleNaN()});
      continue;
    }
    if (r < 4) {
      v = r == 2 ? 0 : static_cast<double>(rng() % 50);  // reset
    } else if (r < 20) {
      // unchanged
    } else {
      v += static_cast<double>(rng() % 1000) / 8.0;
    }
    out.push_back({t, v});
  }
  return out;
}

}  // namespace gpumon::tsdb::testing
