#include "tsdb/downsample/downsample.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "tsdb/compact/block_test_util.h"
#include "tsdb/downsample/downsample_test_util.h"
#include "tsdb/downsample/window_aggregator.h"

namespace gpumon::tsdb::downsample {
namespace {

namespace fs = std::filesystem;
using testing::kHour;
using testing::SameBits;
using testing::SeriesLabels;
using testing::SeriesMap;
constexpr int64_t k5m = kResolution5m;
constexpr int64_t k1h = kResolution1h;

Matcher Eq(const std::string& name, const std::string& value) {
  return std::move(Matcher::Make(MatchType::kEqual, name, value)).value();
}

std::shared_ptr<block::Block> MustDownsample(const std::string& dir, const block::Block& in,
                                             int64_t res, DownsampleStats* stats = nullptr) {
  auto out = Downsample(dir, in, res, {}, stats);
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (!out.ok()) return nullptr;
  auto b = testing::OpenBlock(*out);
  if (b) {
    Status v = b->Verify();
    EXPECT_TRUE(v.ok()) << v.message();
  }
  return b;
}

SeriesMap ReadAggregate(const block::Block& b, Aggregate a, std::vector<Matcher> ms = {}) {
  auto q = b.NewQuerier(kMinTime, kMaxTime);
  auto set = SelectAggregate(*q, ms, a);
  return testing::ReadAll(*set);
}

// Raw series: gauges with hard values and gaps, and counters with resets.
SeriesMap RandomRaw(std::mt19937_64& rng, size_t n, int64_t mint, int64_t maxt) {
  SeriesMap data;
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) {
      Labels l = SeriesLabels(i);
      data[Labels{{"__name__", "gpu_energy_joules_total"},
                  {"gpu", std::string(l.Get("gpu"))},
                  {"instance", std::string(l.Get("instance"))}}] =
          testing::RandomCounter(rng, mint, maxt, 15000);
    } else {
      data[SeriesLabels(i)] = testing::RandomSamples(rng, mint, maxt, 15000);
    }
  }
  return data;
}

class DownsampleTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
};

TEST_F(DownsampleTest, AggregatesMatchBruteForce) {
  std::mt19937_64 rng(21);
  const SeriesMap raw = RandomRaw(rng, 120, 0, 6 * kHour);
  auto in = testing::WriteBlock(dir_.path(), raw, 0, 6 * kHour);
  ASSERT_NE(in, nullptr);
  DownsampleStats st;
  auto out = MustDownsample(dir_.path(), *in, k5m, &st);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(st.input_series, raw.size());
  EXPECT_EQ(st.skipped_series, 0u);
  EXPECT_EQ(out->meta().stats.num_series, st.output_series);
  EXPECT_EQ(out->meta().stats.num_samples, st.output_samples);

  const SeriesMap count = ReadAggregate(*out, Aggregate::kCount);
  const SeriesMap sum = ReadAggregate(*out, Aggregate::kSum);
  const SeriesMap min = ReadAggregate(*out, Aggregate::kMin);
  const SeriesMap max = ReadAggregate(*out, Aggregate::kMax);
  ASSERT_EQ(count.size(), raw.size());
  size_t checked = 0;
  for (const auto& [labels, samples] : raw) {
    const auto want = testing::BruteWindows(samples, k5m);
    ASSERT_EQ(count.at(labels).size(), want.size()) << labels.ToString();
    for (size_t i = 0; i < want.size(); ++i) {
      for (const SeriesMap* m : {&count, &sum, &min, &max}) {
        ASSERT_EQ(m->at(labels)[i].t, want[i].t);
      }
      EXPECT_EQ(count.at(labels)[i].v, want[i].count);
      EXPECT_TRUE(testing::SumClose(sum.at(labels)[i].v, want[i].sum, want[i].abs_sum));
      EXPECT_TRUE(SameBits(min.at(labels)[i].v, want[i].min));
      EXPECT_TRUE(SameBits(max.at(labels)[i].v, want[i].max));
      // avg over any run of windows = sum of sums / sum of counts.
      ++checked;
    }
  }
  EXPECT_GT(checked, raw.size() * 60);

  const block::BlockMeta& m = out->meta();
  EXPECT_EQ(m.downsample_resolution_ms, k5m);
  EXPECT_EQ(m.min_time, in->meta().min_time);
  EXPECT_EQ(m.max_time, in->meta().max_time);
  EXPECT_EQ(m.compaction_level, in->meta().compaction_level);
  EXPECT_EQ(m.sources, in->meta().sources);
  ASSERT_EQ(m.parents.size(), 1u);
  EXPECT_EQ(m.parents[0].id, in->meta().id);
  // No scratch files are left behind.
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    EXPECT_EQ(e.path().string().find(block::kTmpForCreationSuffix), std::string::npos) << e.path();
  }
}

TEST_F(DownsampleTest, AverageOverARangeFromSumAndCount) {
  std::mt19937_64 rng(22);
  SeriesMap raw;
  raw[SeriesLabels(1)] = testing::RandomSamples(rng, 0, 4 * kHour, 10000, false);
  auto in = testing::WriteBlock(dir_.path(), raw, 0, 4 * kHour);
  auto out = MustDownsample(dir_.path(), *in, k5m);
  ASSERT_NE(out, nullptr);
  const std::vector<Sample> sum = ReadAggregate(*out, Aggregate::kSum).at(SeriesLabels(1));
  const std::vector<Sample> count = ReadAggregate(*out, Aggregate::kCount).at(SeriesLabels(1));
  ASSERT_EQ(sum.size(), count.size());
  // avg_over_time over the second hour.
  double s = 0, c = 0, want_s = 0, want_c = 0;
  for (size_t i = 0; i < sum.size(); ++i) {
    if (sum[i].t >= kHour && sum[i].t < 2 * kHour) {
      s += sum[i].v;
      c += count[i].v;
    }
  }
  for (const Sample& x : raw.at(SeriesLabels(1))) {
    if (x.t >= kHour && x.t < 2 * kHour) {
      want_s += x.v;
      want_c += 1;
    }
  }
  ASSERT_GT(want_c, 100);
  EXPECT_EQ(c, want_c);
  EXPECT_NEAR(s / c, want_s / want_c, 1e-9 * std::fabs(want_s / want_c));
}

TEST_F(DownsampleTest, CounterIncreaseIsExactAcrossBlocksAndResets) {
  std::mt19937_64 rng(23);
  // Two consecutive raw blocks downsampled separately, as the DB does.
  SeriesMap raw1, raw2, all;
  for (size_t i = 0; i < 30; ++i) {
    auto s = testing::RandomCounter(rng, 0, 8 * kHour, 10000);
    std::vector<Sample> a, b;
    for (const Sample& x : s) (x.t < 4 * kHour ? a : b).push_back(x);
    if (i % 5 == 0 && !b.empty()) b.front().v = 1;  // a reset exactly at the block boundary
    all[SeriesLabels(i)] = a;
    all[SeriesLabels(i)].insert(all[SeriesLabels(i)].end(), b.begin(), b.end());
    raw1[SeriesLabels(i)] = std::move(a);
    raw2[SeriesLabels(i)] = std::move(b);
  }
  auto in1 = testing::WriteBlock(dir_.path(), raw1, 0, 4 * kHour);
  auto in2 = testing::WriteBlock(dir_.path(), raw2, 4 * kHour, 8 * kHour);
  auto d1 = MustDownsample(dir_.path(), *in1, k5m);
  auto d2 = MustDownsample(dir_.path(), *in2, k5m);
  ASSERT_TRUE(d1 && d2);
  const SeriesMap c1 = ReadAggregate(*d1, Aggregate::kCounter);
  const SeriesMap c2 = ReadAggregate(*d2, Aggregate::kCounter);
  for (const auto& [labels, samples] : all) {
    std::vector<Sample> counter = c1.count(labels) ? c1.at(labels) : std::vector<Sample>{};
    if (c2.count(labels)) counter.insert(counter.end(), c2.at(labels).begin(), c2.at(labels).end());
    // Every window-aligned range, including ones across the block boundary.
    for (int64_t from = 0; from < 8 * kHour; from += k5m) {
      for (int64_t to = from + k5m; to <= 8 * kHour; to += 7 * k5m) {
        const double want = testing::AnchoredIncrease(samples, from, to);
        ASSERT_NEAR(testing::AnchoredIncrease(counter, from, to), want, 1e-9 * (want + 1))
            << labels.ToString() << " [" << from << ", " << to << ")";
      }
    }
  }
}

TEST_F(DownsampleTest, OneHourFromFiveMinutesEqualsOneHourFromRaw) {
  std::mt19937_64 rng(24);
  const SeriesMap raw = RandomRaw(rng, 90, 0, 12 * kHour);
  auto in = testing::WriteBlock(dir_.path(), raw, 0, 12 * kHour);
  auto m5 = MustDownsample(dir_.path(), *in, k5m);
  ASSERT_NE(m5, nullptr);
  auto h_raw = MustDownsample(dir_.path(), *in, k1h);
  auto h_5m = MustDownsample(dir_.path(), *m5, k1h);
  ASSERT_TRUE(h_raw && h_5m);
  EXPECT_EQ(h_5m->meta().downsample_resolution_ms, k1h);
  EXPECT_EQ(h_5m->meta().parents[0].id, m5->meta().id);
  for (Aggregate a : kAllAggregates) {
    const SeriesMap x = ReadAggregate(*h_raw, a);
    const SeriesMap y = ReadAggregate(*h_5m, a);
    ASSERT_EQ(x.size(), raw.size()) << AggregateName(a);
    if (a != Aggregate::kSum && a != Aggregate::kCounter) {
      EXPECT_TRUE(testing::SameSeries(x, y)) << AggregateName(a);
      continue;
    }
    // Sums, and the counter's synthetic values, agree up to rounding.
    ASSERT_EQ(x.size(), y.size());
    for (const auto& [labels, samples] : x) {
      // Counters are non-negative; the gauges here go below zero.
      if (a == Aggregate::kCounter && !labels.Get("__name__").ends_with("_total")) continue;
      const auto& other = y.at(labels);
      ASSERT_EQ(other.size(), samples.size());
      for (size_t i = 0; i < samples.size(); ++i) {
        EXPECT_EQ(other[i].t, samples[i].t);
        EXPECT_TRUE(testing::SumClose(other[i].v, samples[i].v, std::fabs(samples[i].v) * 1e3));
      }
    }
  }
  // The whole blocks agree too (same series, same labels).
  EXPECT_EQ(h_raw->meta().stats.num_series, h_5m->meta().stats.num_series);
  EXPECT_EQ(h_raw->meta().stats.num_samples, h_5m->meta().stats.num_samples);
}

TEST_F(DownsampleTest, TombstonesAreApplied) {
  std::mt19937_64 rng(25);
  const SeriesMap raw = RandomRaw(rng, 40, 0, 2 * kHour);
  auto in = testing::WriteBlock(dir_.path(), raw, 0, 2 * kHour);
  std::vector<Matcher> gpu1 = {Eq("gpu", "1")};
  std::vector<Matcher> gpu2 = {Eq("gpu", "2")};
  ASSERT_TRUE(in->Delete(gpu1, kMinTime, kMaxTime).ok());
  ASSERT_TRUE(in->Delete(gpu2, 20 * 60 * 1000, 50 * 60 * 1000).ok());
  const SeriesMap visible = testing::ReadBlock(*in);
  auto out = MustDownsample(dir_.path(), *in, k5m);
  ASSERT_NE(out, nullptr);
  const SeriesMap count = ReadAggregate(*out, Aggregate::kCount);
  EXPECT_EQ(count.size(), visible.size());
  for (const auto& [labels, samples] : visible) {
    const auto want = testing::BruteWindows(samples, k5m);
    ASSERT_EQ(count.at(labels).size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(count.at(labels)[i].v, want[i].count);
  }
}

TEST_F(DownsampleTest, LabelsSortingBeforeAggrLabel) {
  // Upper-case names sort before "__aggr__": adding it reorders these
  // series ({A="1"} < {A="1",B="1"} but with __aggr__ the order flips).
  SeriesMap raw;
  raw[Labels{{"A", "1"}}] = {{1000, 1}, {2000, 2}};
  raw[Labels{{"A", "1"}, {"B", "1"}}] = {{1000, 3}};
  raw[Labels{{"A", "1"}, {"z", "1"}}] = {{1000, 4}};
  raw[Labels{{"A", "2"}}] = {{1000, 5}};
  raw[Labels{{"B", "0"}, {"__name__", "m"}}] = {{1000, 6}};
  raw[Labels{{"__name__", "m"}}] = {{1000, 7}};
  raw[Labels{{"__name__", "m"}, {"a", "x"}}] = {{1000, 8}, {400000, 9}};
  // Already labelled as an aggregate: cannot be represented.
  raw[Labels{{"__aggr__", "sum"}, {"__name__", "m"}}] = {{1000, 8}};
  auto in = testing::WriteBlock(dir_.path(), raw, 0, 2 * kHour);
  DownsampleStats st;
  auto out = MustDownsample(dir_.path(), *in, k5m, &st);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(st.skipped_series, 1u);
  EXPECT_EQ(out->meta().stats.num_series, 7u * kNumAggregates);
  for (Aggregate a : kAllAggregates) {
    const SeriesMap got = ReadAggregate(*out, a);  // ReadAll checks the order
    ASSERT_EQ(got.size(), 7u) << AggregateName(a);
  }
  const SeriesMap sum = ReadAggregate(*out, Aggregate::kSum);
  ASSERT_EQ(sum.at(Labels{{"A", "1"}}).size(), 1u);
  EXPECT_EQ(sum.at(Labels{{"A", "1"}})[0].t, 2000);
  EXPECT_EQ(sum.at(Labels{{"A", "1"}})[0].v, 3);
  EXPECT_EQ(sum.at(Labels{{"A", "1"}, {"B", "1"}}).at(0).v, 3);
  EXPECT_EQ(sum.at(Labels{{"__name__", "m"}, {"a", "x"}}).size(), 2u);
  // Matchers narrow the selection; Seek works on reordered series.
  auto q = out->NewQuerier(kMinTime, kMaxTime);
  std::vector<Matcher> ms = {Eq("A", "1")};
  auto set = SelectAggregate(*q, ms, Aggregate::kMax);
  std::vector<Labels> seen;
  while (set->Next()) {
    seen.push_back(set->labels());
    auto it = set->Iterator();
    if (set->labels() == Labels{{"A", "1"}}) {
      ASSERT_TRUE(it->Seek(1500));
      EXPECT_EQ(it->At().t, 2000);
      EXPECT_EQ(it->At().v, 2);
      EXPECT_TRUE(it->Seek(0));  // never backwards
      EXPECT_EQ(it->At().t, 2000);
      EXPECT_FALSE(it->Seek(2001));
    } else {
      ASSERT_TRUE(it->Next());
      EXPECT_EQ(it->At().t, 1000);
      EXPECT_FALSE(it->Next());
    }
  }
  EXPECT_EQ(seen, (std::vector<Labels>{Labels{{"A", "1"}}, Labels{{"A", "1"}, {"B", "1"}},
                                       Labels{{"A", "1"}, {"z", "1"}}}));
}

TEST_F(DownsampleTest, RejectsImpossibleResolutions) {
  SeriesMap raw = {{SeriesLabels(0), {{1000, 1}}}};
  auto in = testing::WriteBlock(dir_.path(), raw, 0, 2 * kHour);
  EXPECT_FALSE(Downsample(dir_.path(), *in, 0).ok());
  EXPECT_FALSE(Downsample(dir_.path(), *in, -5).ok());
  auto m5 = MustDownsample(dir_.path(), *in, k5m);
  ASSERT_NE(m5, nullptr);
  EXPECT_FALSE(Downsample(dir_.path(), *m5, k5m).ok());
  EXPECT_FALSE(Downsample(dir_.path(), *m5, 7 * 60 * 1000).ok());  // not a multiple
  auto h = MustDownsample(dir_.path(), *m5, k1h);
  ASSERT_NE(h, nullptr);
  EXPECT_FALSE(Downsample(dir_.path(), *h, k5m).ok());
}

TEST_F(DownsampleTest, EmptyInputGivesEmptyBlock) {
  SeriesMap raw = {{SeriesLabels(0), {{1000, StaleNaN()}}}};
  auto in = testing::WriteBlock(dir_.path(), raw, 0, 2 * kHour);
  auto out = MustDownsample(dir_.path(), *in, k5m);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->meta().stats.num_series, 0u);
}

TEST_F(DownsampleTest, AggregateQuerierLooksLikeRawData) {
  SeriesMap raw;
  raw[Labels{{"__name__", "a"}, {"gpu", "0"}}] = {{1000, 1}, {2000, 5}};
  raw[Labels{{"__name__", "b"}, {"mig", "x"}}] = {{1000, 2}};
  auto in = testing::WriteBlock(dir_.path(), raw, 0, 2 * kHour);
  auto out = MustDownsample(dir_.path(), *in, k5m);
  ASSERT_NE(out, nullptr);
  auto q = NewAggregateQuerier(out->NewQuerier(kMinTime, kMaxTime), Aggregate::kMax);
  auto names = q->LabelNames({});
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"__name__", "gpu", "mig"}));
  std::vector<Matcher> only_a = {Eq("__name__", "a")};
  names = q->LabelNames(only_a);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"__name__", "gpu"}));
  auto values = q->LabelValues("__name__", {});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<std::string>{"a", "b"}));
  values = q->LabelValues("__aggr__", {});
  ASSERT_TRUE(values.ok());
  EXPECT_TRUE(values->empty());
  auto set = q->Select(only_a);
  const SeriesMap got = testing::ReadAll(*set);
  ASSERT_EQ(got.size(), 1u);
  const auto& s = got.at(Labels{{"__name__", "a"}, {"gpu", "0"}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].t, 2000);
  EXPECT_EQ(s[0].v, 5);
}

TEST(ChooseResolutionTest, CoarsestNotAboveStep) {
  const std::vector<int64_t> all = {0, k5m, k1h};
  EXPECT_EQ(ChooseResolution(15000, all), 0);
  EXPECT_EQ(ChooseResolution(k5m - 1, all), 0);
  EXPECT_EQ(ChooseResolution(k5m, all), k5m);
  EXPECT_EQ(ChooseResolution(30 * 60 * 1000, all), k5m);
  EXPECT_EQ(ChooseResolution(k1h, all), k1h);
  EXPECT_EQ(ChooseResolution(24 * k1h, all), k1h);
  const std::vector<int64_t> only_hour = {k1h};
  EXPECT_EQ(ChooseResolution(30 * 60 * 1000, only_hour), 0);
  EXPECT_EQ(ChooseResolution(k1h, std::vector<int64_t>{}), 0);
  const std::vector<int64_t> unordered = {k1h, -1, k5m};
  EXPECT_EQ(ChooseResolution(2 * k1h, unordered), k1h);
}

}  // namespace
}  // namespace gpumon::tsdb::downsample
