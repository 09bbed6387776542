// Window aggregation for downsampling: turns the samples of one series into
// per-window aggregates (from raw samples), or coarsens one aggregate series
// of a finer tier into the same aggregate at a coarser resolution.
//
// Contract (docs/formats/downsample.md states the representation):
// - Windows are [k*res, (k+1)*res) in ms since the epoch (floor division, so
//   negative times work too). Input samples come in strictly increasing time.
// - Stale markers are skipped: they are not values.
// - count, sum, min, max: one sample per window that has at least one
//   (non-stale) sample, stamped with the time of the window's last sample.
//   sum is compensated (Neumaier) summation, as Prometheus's sum_over_time;
//   min and max ignore NaN unless every value is NaN (Prometheus's rule).
// - counter: a series on which Prometheus's reset-aware increase() gives
//   the raw increase exactly between window ends, with about one sample per
//   window. It holds the series' first sample and the last sample of every
//   window (raw times and values). A window whose path from the previous
//   window end contains a counter reset (a value below its predecessor)
//   gets, before its last sample l, two synthetic samples at times
//   x = max(previous end + 1 ms, window start) and x + 1 ms: P = a + L - l
//   and 0, where L is the previous end's value and a the raw reset-aware
//   increase from it to l. Read back, P - L + 0 + l = a, and the drop P -> 0
//   marks the reset. (If x + 1 ms is not before l, the at most two raw
//   samples of the path are kept instead.) NaN and infinite values are
//   skipped. Across
//   blocks the raw end and first samples meet, so resets there are seen as
//   in raw data.
// - Coarsening: count and sum add up, min/max take the min/max (same NaN
//   rule), stamped with the time of the last input sample in the window;
//   the results equal aggregating the raw samples (bit-exact for count,
//   min and max; sums up to rounding of the partial sums). A counter series
//   is coarsened by the same counter rule: window ends are the same raw
//   samples, synthetic samples sit at the same times, and their values are
//   equal up to rounding.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tsdb/downsample/aggregate.h"
#include "tsdb/sample.h"

namespace gpumon::tsdb::downsample {

int64_t WindowOf(int64_t t, int64_t resolution_ms);

// Compensated summation (Neumaier), robust to infinities.
class CompensatedSum {
 public:
  void Add(double v);
  double Value() const;

 private:
  double sum_ = 0;
  double comp_ = 0;
  bool any_ = false;
};

// Builds the counter series described above.
class CounterSampler {
 public:
  CounterSampler(int64_t resolution_ms, std::vector<Sample>* out)
      : res_(resolution_ms), out_(out) {}
  void Add(Sample s);
  // Closes the last window; the sampler can then start a new series.
  void Finish();

 private:
  void CloseWindow();

  int64_t res_;
  std::vector<Sample>* out_;
  bool have_end_ = false;
  Sample end_;  // the last window end emitted (or the first sample)
  // The open window's path from end_.
  bool open_ = false;
  int64_t window_ = 0;
  Sample prev_;
  bool reset_ = false;
  int n_ = 0;
  Sample head_[2];  // its first two samples (kept when x + 1 ms does not fit)
  CompensatedSum inc_;
};

// Running min/max/count/sum of one window.
struct WindowState {
  bool open = false;
  int64_t window = 0;
  int64_t last_t = 0;
  double count = 0;
  CompensatedSum sum;
  double min = 0;
  double max = 0;
  void Start(int64_t w);
  void AddMin(double v);
  void AddMax(double v);
};

// Raw samples → all five aggregates.
class RawAggregator {
 public:
  explicit RawAggregator(int64_t resolution_ms);
  RawAggregator(const RawAggregator&) = delete;  // counter_ points into out_
  RawAggregator& operator=(const RawAggregator&) = delete;
  void Add(int64_t t, double v);
  void Finish();
  // Valid after Finish, until Clear.
  const std::vector<Sample>& Get(Aggregate a) const { return out_[static_cast<size_t>(a)]; }
  void Clear();

 private:
  void Close();
  std::vector<Sample>& Out(Aggregate a) { return out_[static_cast<size_t>(a)]; }

  int64_t res_;
  std::array<std::vector<Sample>, kNumAggregates> out_;
  CounterSampler counter_;
  WindowState win_;
};

// One aggregate series of a finer tier → the same aggregate, coarser.
class AggregateCoarsener {
 public:
  AggregateCoarsener(Aggregate kind, int64_t resolution_ms);
  AggregateCoarsener(const AggregateCoarsener&) = delete;  // counter_ points into out_
  AggregateCoarsener& operator=(const AggregateCoarsener&) = delete;
  void Add(int64_t t, double v);
  void Finish();
  const std::vector<Sample>& Get() const { return out_; }
  void Clear();

 private:
  void Close();

  Aggregate kind_;
  int64_t res_;
  std::vector<Sample> out_;
  CounterSampler counter_;
  WindowState win_;
};

}  // namespace gpumon::tsdb::downsample
