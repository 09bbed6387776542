#include "tsdb/downsample/window_aggregator.h"

#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <random>

#include "tsdb/compact/block_test_util.h"
#include "tsdb/downsample/downsample_test_util.h"

namespace gpumon::tsdb::downsample {
namespace {

using testing::SameBits;
constexpr int64_t k5m = kResolution5m;
constexpr int64_t k1h = kResolution1h;

std::vector<Sample> Aggregated(const std::vector<Sample>& raw, int64_t res, Aggregate a) {
  RawAggregator agg(res);
  for (const Sample& s : raw) agg.Add(s.t, s.v);
  agg.Finish();
  return agg.Get(a);
}

std::vector<Sample> Coarsened(const std::vector<Sample>& in, int64_t res, Aggregate a) {
  AggregateCoarsener c(a, res);
  for (const Sample& s : in) c.Add(s.t, s.v);
  c.Finish();
  return c.Get();
}

void ExpectMatchesBruteForce(const std::vector<Sample>& raw, int64_t res) {
  const auto want = testing::BruteWindows(raw, res);
  RawAggregator agg(res);
  for (const Sample& s : raw) agg.Add(s.t, s.v);
  agg.Finish();
  for (Aggregate a : {Aggregate::kCount, Aggregate::kSum, Aggregate::kMin, Aggregate::kMax}) {
    ASSERT_EQ(agg.Get(a).size(), want.size()) << AggregateName(a);
  }
  for (size_t i = 0; i < want.size(); ++i) {
    for (Aggregate a : {Aggregate::kCount, Aggregate::kSum, Aggregate::kMin, Aggregate::kMax}) {
      ASSERT_EQ(agg.Get(a)[i].t, want[i].t) << AggregateName(a) << " window " << i;
    }
    EXPECT_EQ(agg.Get(Aggregate::kCount)[i].v, want[i].count);
    EXPECT_TRUE(SameBits(agg.Get(Aggregate::kMin)[i].v, want[i].min))
        << agg.Get(Aggregate::kMin)[i].v << " vs " << want[i].min;
    EXPECT_TRUE(SameBits(agg.Get(Aggregate::kMax)[i].v, want[i].max));
    EXPECT_TRUE(testing::SumClose(agg.Get(Aggregate::kSum)[i].v, want[i].sum, want[i].abs_sum));
  }
}

TEST(WindowAggregatorTest, WindowsUseFloorDivision) {
  EXPECT_EQ(WindowOf(0, 10), 0);
  EXPECT_EQ(WindowOf(9, 10), 0);
  EXPECT_EQ(WindowOf(10, 10), 1);
  EXPECT_EQ(WindowOf(-1, 10), -1);
  EXPECT_EQ(WindowOf(-10, 10), -1);
  EXPECT_EQ(WindowOf(-11, 10), -2);
}

TEST(WindowAggregatorTest, MatchesBruteForceOnRandomSeries) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    const int64_t start = static_cast<int64_t>(rng() % 1000000) - 500000;  // negative too
    auto raw = testing::RandomSamples(rng, start, start + 6 * testing::kHour,
                                      1000 + static_cast<int64_t>(rng() % 60000), round % 2 == 0);
    ExpectMatchesBruteForce(raw, k5m);
    ExpectMatchesBruteForce(raw, k1h);
  }
}

TEST(WindowAggregatorTest, StaleMarkersAndNaN) {
  // Only stale markers: no window at all.
  EXPECT_TRUE(Aggregated({{1, StaleNaN()}, {2, StaleNaN()}}, k5m, Aggregate::kCount).empty());
  // NaN is a value: counted, summed, but min/max prefer numbers.
  const double nan = std::bit_cast<double>(0x7ff8000000000123ULL);
  std::vector<Sample> raw = {{1, nan}, {2, 5}, {3, StaleNaN()}, {4, -1}, {5, nan}};
  EXPECT_EQ(Aggregated(raw, k5m, Aggregate::kCount)[0].v, 4);
  EXPECT_EQ(Aggregated(raw, k5m, Aggregate::kCount)[0].t, 5);
  EXPECT_TRUE(std::isnan(Aggregated(raw, k5m, Aggregate::kSum)[0].v));
  EXPECT_EQ(Aggregated(raw, k5m, Aggregate::kMin)[0].v, -1);
  EXPECT_EQ(Aggregated(raw, k5m, Aggregate::kMax)[0].v, 5);
  EXPECT_TRUE(std::isnan(Aggregated({{1, nan}}, k5m, Aggregate::kMin)[0].v));
  // The counter ignores NaN entirely.
  EXPECT_EQ(Aggregated(raw, k5m, Aggregate::kCounter).size(), 2u);
}

TEST(WindowAggregatorTest, CompensatedSum) {
  CompensatedSum s;
  for (double v : {1e16, 1.0, -1e16}) s.Add(v);
  EXPECT_EQ(s.Value(), 1.0);  // a plain sum gives 0
  CompensatedSum inf;
  inf.Add(std::numeric_limits<double>::infinity());
  inf.Add(1);
  EXPECT_EQ(inf.Value(), std::numeric_limits<double>::infinity());
  inf.Add(-std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(inf.Value()));
  CompensatedSum neg_zero;
  neg_zero.Add(-0.0);
  EXPECT_TRUE(SameBits(neg_zero.Value(), -0.0));
}

TEST(WindowAggregatorTest, CounterKeepsWindowEndsAndEncodesResets) {
  // Windows of 10 ms: [0,10) [10,20) [20,30).
  std::vector<Sample> raw = {{1, 5},  {3, 6},  {5, 7},  {7, 2}, {9, 3},  // reset 7 -> 2
                             {11, 4}, {13, 5}, {15, 6},                  // no reset
                             {21, 1}, {25, 1}, {29, 9}};                 // reset 6 -> 1
  auto got = Aggregated(raw, 10, Aggregate::kCounter);
  // The first sample; per window its last, after synthetic (P, 0) where the
  // path from the previous end has a reset: P - L + l = raw increase.
  std::vector<Sample> want = {{1, 5}, {2, 7}, {3, 0}, {9, 3}, {15, 6}, {20, 6}, {21, 0}, {29, 9}};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].t, want[i].t) << i;
    EXPECT_EQ(got[i].v, want[i].v) << i;
  }
  EXPECT_EQ(testing::AnchoredIncrease(got, 0, 30), testing::AnchoredIncrease(raw, 0, 30));
  EXPECT_EQ(testing::AnchoredIncrease(raw, 0, 30), 17);

  // A path squeezed into two milliseconds keeps its raw samples.
  auto tight = Aggregated({{5, 10}, {10, 3}, {11, 4}}, 10, Aggregate::kCounter);
  ASSERT_EQ(tight.size(), 3u);
  EXPECT_EQ(tight[1].t, 10);
  EXPECT_EQ(tight[1].v, 3);
  EXPECT_EQ(tight[2].t, 11);
}

TEST(WindowAggregatorTest, CounterIncreaseIsExactOverAlignedRanges) {
  std::mt19937_64 rng(12);
  size_t raw_total = 0, counter_total = 0;
  for (int round = 0; round < 100; ++round) {
    const int64_t res = round % 2 == 0 ? k5m : k1h;
    auto raw = testing::RandomCounter(rng, 0, 24 * testing::kHour,
                                      5000 + static_cast<int64_t>(rng() % 30000));
    auto counter = Aggregated(raw, res, Aggregate::kCounter);
    // Window ends are raw samples.
    std::map<int64_t, Sample> last_of_window;
    for (const Sample& s : raw) {
      if (std::isfinite(s.v)) last_of_window[WindowOf(s.t, res)] = s;
    }
    size_t j = 0;
    for (const auto& [w, s] : last_of_window) {
      while (j < counter.size() && counter[j].t < s.t) ++j;
      ASSERT_LT(j, counter.size());
      ASSERT_EQ(counter[j].t, s.t);
      ASSERT_TRUE(SameBits(counter[j].v, s.v));
    }
    const int64_t windows = 24 * testing::kHour / res;
    for (int k = 0; k < 50; ++k) {
      int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(windows));
      int64_t b = a + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(windows - a));
      const double want = testing::AnchoredIncrease(raw, a * res, b * res);
      const double got = testing::AnchoredIncrease(counter, a * res, b * res);
      ASSERT_NEAR(got, want, 1e-9 * (want + 1)) << "windows [" << a << ", " << b << ")";
    }
    raw_total += raw.size();
    counter_total += counter.size();
  }
  // About one sample per window.
  EXPECT_LT(counter_total * 10, raw_total);
}

TEST(WindowAggregatorTest, CounterOfAGaugeStaysSmall) {
  std::mt19937_64 rng(14);
  std::vector<Sample> raw;
  double v = 50;
  for (int64_t t = 0; t < 24 * testing::kHour; t += 10000) {
    v += static_cast<double>(static_cast<int>(rng() % 5) - 2);  // goes down half the time
    raw.push_back({t, v});
  }
  auto counter = Aggregated(raw, k5m, Aggregate::kCounter);
  EXPECT_LE(counter.size(), 3 * static_cast<size_t>(24 * 12) + 1);
  const double want = testing::AnchoredIncrease(raw, 0, 24 * testing::kHour);
  EXPECT_NEAR(testing::AnchoredIncrease(counter, 0, 24 * testing::kHour), want, 1e-9 * want);
}

TEST(WindowAggregatorTest, CoarseningEqualsAggregatingRaw) {
  std::mt19937_64 rng(13);
  for (int round = 0; round < 100; ++round) {
    auto raw = round % 2 == 0 ? testing::RandomSamples(rng, -testing::kHour, 30 * testing::kHour,
                                                       2000 + static_cast<int64_t>(rng() % 20000))
                              : testing::RandomCounter(rng, 0, 30 * testing::kHour, 10000);
    for (Aggregate a : kAllAggregates) {
      // Counters are non-negative; the gauges here go below zero.
      if (a == Aggregate::kCounter && round % 2 == 0) continue;
      auto direct = Aggregated(raw, k1h, a);
      auto via5m = Coarsened(Aggregated(raw, k5m, a), k1h, a);
      ASSERT_EQ(via5m.size(), direct.size()) << AggregateName(a);
      for (size_t i = 0; i < direct.size(); ++i) {
        ASSERT_EQ(via5m[i].t, direct[i].t) << AggregateName(a) << " " << i;
        if (a == Aggregate::kSum || a == Aggregate::kCounter) {
          // Partial sums round differently (counter: the synthetic values).
          EXPECT_TRUE(testing::SumClose(via5m[i].v, direct[i].v, std::fabs(direct[i].v) * 1e3));
        } else {
          ASSERT_TRUE(SameBits(via5m[i].v, direct[i].v))
              << AggregateName(a) << " " << i << ": " << via5m[i].v << " vs " << direct[i].v;
        }
      }
    }
  }
}

TEST(WindowAggregatorTest, ClearStartsAFreshSeries) {
  RawAggregator agg(k5m);
  agg.Add(1, 10);
  agg.Add(2, 20);
  agg.Clear();
  agg.Add(1000, 1);
  agg.Finish();
  ASSERT_EQ(agg.Get(Aggregate::kCounter).size(), 1u);
  EXPECT_EQ(agg.Get(Aggregate::kCounter)[0].t, 1000);
  EXPECT_EQ(agg.Get(Aggregate::kCount)[0].v, 1);
}

}  // namespace
}  // namespace gpumon::tsdb::downsample
