#include <gtest/gtest.h>

#include <cmath>

#include "promql/functions.h"
#include "test_util.h"

namespace gpumon::promql::testing {
namespace {

const Labels kMetric{{"__name__", "m"}, {"job", "a"}};
const Labels kNoName{{"job", "a"}};

double Eval(std::string_view fn, const Series& s, int64_t ts, int64_t range) {
  return OneValue(CallRange(fn, s, ts, range));
}

TEST(OverTime, BasicAggregations) {
  Series s = Load(kMetric, kMinute, {1, 4, 2, 8, 5});
  // Window (0, 4m] holds 4, 2, 8, 5.
  const int64_t ts = 4 * kMinute, r = 4 * kMinute;
  EXPECT_DOUBLE_EQ(Eval("avg_over_time", s, ts, r), 19.0 / 4);
  EXPECT_DOUBLE_EQ(Eval("sum_over_time", s, ts, r), 19);
  EXPECT_DOUBLE_EQ(Eval("count_over_time", s, ts, r), 4);
  EXPECT_DOUBLE_EQ(Eval("min_over_time", s, ts, r), 2);
  EXPECT_DOUBLE_EQ(Eval("max_over_time", s, ts, r), 8);
  EXPECT_DOUBLE_EQ(Eval("last_over_time", s, ts, r), 5);
  EXPECT_DOUBLE_EQ(Eval("first_over_time", s, ts, r), 4);
  EXPECT_DOUBLE_EQ(Eval("present_over_time", s, ts, r), 1);
  EXPECT_DOUBLE_EQ(Eval("ts_of_max_over_time", s, ts, r), 180);
  EXPECT_DOUBLE_EQ(Eval("ts_of_min_over_time", s, ts, r), 120);
  EXPECT_DOUBLE_EQ(Eval("ts_of_first_over_time", s, ts, r), 60);
  EXPECT_DOUBLE_EQ(Eval("ts_of_last_over_time", s, ts, r), 240);
  // Mean 4.75; squared deviations 0.5625 7.5625 10.5625 0.0625 → 18.75/4.
  EXPECT_DOUBLE_EQ(Eval("stdvar_over_time", s, ts, r), 18.75 / 4);
  EXPECT_DOUBLE_EQ(Eval("stddev_over_time", s, ts, r), std::sqrt(18.75 / 4));
}

TEST(OverTime, NameKeptOnlyByLastAndFirst) {
  Series s = Load(kMetric, kMinute, {1, 2});
  EXPECT_EQ(CallRange("last_over_time", s, kMinute, kMinute)[0].metric, kMetric);
  EXPECT_EQ(CallRange("first_over_time", s, kMinute, kMinute)[0].metric, kMetric);
  EXPECT_EQ(CallRange("max_over_time", s, kMinute, kMinute)[0].metric, kNoName);
  EXPECT_EQ(CallRange("ts_of_last_over_time", s, kMinute, kMinute)[0].metric, kNoName);
}

TEST(OverTime, EmptyWindowGivesNothing) {
  Series s = Load(kMetric, kMinute, {1});
  EXPECT_TRUE(CallRange("sum_over_time", s, 10 * kMinute, kMinute).empty());
  EXPECT_TRUE(CallRange("quantile_over_time", s, 10 * kMinute, kMinute, {Scalar{0, 0.5}}).empty());
}

TEST(OverTime, MinMaxNaN) {
  // A NaN is replaced by any later value; a trailing NaN never wins.
  Series s = Load(kMetric, kMinute, {NAN, 3, NAN, 1});
  EXPECT_DOUBLE_EQ(Eval("max_over_time", s, 3 * kMinute, 5 * kMinute), 3);
  EXPECT_DOUBLE_EQ(Eval("min_over_time", s, 3 * kMinute, 5 * kMinute), 1);
  Series only_nan = Load(kMetric, kMinute, {NAN, NAN});
  EXPECT_TRUE(std::isnan(Eval("max_over_time", only_nan, kMinute, 5 * kMinute)));
}

TEST(OverTime, AvgOfHugeValuesDoesNotOverflow) {
  Series s = Load(kMetric, kMinute, {1.5e308, 1.5e308, 1.5e308});
  EXPECT_DOUBLE_EQ(Eval("avg_over_time", s, 2 * kMinute, 5 * kMinute), 1.5e308);
}

TEST(OverTime, SumIsCompensated) {
  // Plain summation loses the 1s entirely.
  Series s = Load(kMetric, kMinute, {1e100, 1, -1e100, 1});
  EXPECT_DOUBLE_EQ(Eval("sum_over_time", s, 3 * kMinute, 5 * kMinute), 2);
}

TEST(OverTime, Quantile) {
  Series s = Load(kMetric, kMinute, {0, 10, 20, 30, 40});
  const int64_t ts = 4 * kMinute, r = 5 * kMinute;
  auto q = [&](double phi, Annotations* ann = nullptr) {
    return OneValue(CallRange("quantile_over_time", s, ts, r, {Scalar{0, phi}}, {}, ann));
  };
  EXPECT_DOUBLE_EQ(q(0.5), 20);
  EXPECT_DOUBLE_EQ(q(0.75), 30);
  EXPECT_DOUBLE_EQ(q(0.1), 4);
  Annotations ann;
  EXPECT_EQ(q(2, &ann), HUGE_VAL);
  EXPECT_EQ(q(-1, &ann), -HUGE_VAL);
  ASSERT_EQ(ann.warnings.size(), 2u);
  EXPECT_EQ(ann.warnings[0], "PromQL warning: quantile value should be between 0 and 1, got 2");
  EXPECT_EQ(ann.warnings[1], "PromQL warning: quantile value should be between 0 and 1, got -1");
  // The value is printed as Go's %g does.
  Annotations g;
  q(1e6, &g);
  q(-1.5e-5, &g);
  q(123456.5, &g);
  q(-HUGE_VAL, &g);
  EXPECT_EQ(g.warnings,
            (std::vector<std::string>{
                "PromQL warning: quantile value should be between 0 and 1, got 1e+06",
                "PromQL warning: quantile value should be between 0 and 1, got -1.5e-05",
                "PromQL warning: quantile value should be between 0 and 1, got 123456.5",
                "PromQL warning: quantile value should be between 0 and 1, got -Inf"}));
}

TEST(OverTime, Mad) {
  // Median 3; absolute deviations 2 1 0 1 7 → median 1.
  Series s = Load(kMetric, kMinute, {1, 2, 3, 4, 10});
  EXPECT_DOUBLE_EQ(Eval("mad_over_time", s, 4 * kMinute, 5 * kMinute), 1);
  Series with_nan = Load(kMetric, kMinute, {1, NAN, 3});
  EXPECT_TRUE(std::isnan(Eval("mad_over_time", with_nan, 2 * kMinute, 5 * kMinute)));
}

// From functions.test: resets()/changes() over http_requests{path="/foo"}.
TEST(OverTime, ChangesAndResets) {
  Series foo = Load(kMetric, 5 * kMinute, {1, 2, 3, 0, 1, 0, 0, 1, 2, 0});
  const int64_t ts = 50 * kMinute;
  EXPECT_TRUE(CallRange("resets", foo, ts, 5 * kMinute).empty());
  EXPECT_DOUBLE_EQ(Eval("resets", foo, 45 * kMinute, 20 * kMinute), 1);
  EXPECT_DOUBLE_EQ(Eval("resets", foo, ts, 50 * kMinute), 3);
  EXPECT_DOUBLE_EQ(Eval("changes", foo, ts, 50 * kMinute), 7);
  // NaN → NaN is no change, number ↔ NaN is.
  Series b = Load(kMetric, 5 * kMinute, {NAN, NAN, NAN});
  Series c = Load(kMetric, 5 * kMinute, {0, NAN, 0});
  EXPECT_DOUBLE_EQ(Eval("changes", b, 15 * kMinute, 20 * kMinute), 0);
  EXPECT_DOUBLE_EQ(Eval("changes", c, 15 * kMinute, 20 * kMinute), 2);
}

}  // namespace
}  // namespace gpumon::promql::testing
