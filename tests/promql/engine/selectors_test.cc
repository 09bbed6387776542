// Selectors: lookback, staleness, left-open range windows, offset and @,
// range-query steps, timestamp() and absent_over_time().
#include <cstring>
#include <string>
#include <vector>

#include "engine_test_util.h"

namespace gpumon::promql::testing {
namespace {

using SelectorsTest = EngineTest;

const Labels kA{{"__name__", "m"}, {"i", "a"}};
const Labels kB{{"__name__", "m"}, {"i", "b"}};

TEST_F(SelectorsTest, InstantSelectorTakesNewestSampleWithinLookback) {
  Add(kA, 0, kMin, {1, 2, 3});  // t = 0, 1m, 2m
  Vector v = Vec("m", 2 * kMin + 30000);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].f, 3);
  EXPECT_EQ(v[0].t, 2 * kMin + 30000);
  EXPECT_EQ(v[0].metric, kA);
  // Exactly 5m after the last sample it is out of the window (t - 5m, t].
  EXPECT_EQ(Vec("m", 7 * kMin - 1).size(), 1u);
  EXPECT_TRUE(Vec("m", 7 * kMin).empty());
  // Before the first sample there is nothing.
  EXPECT_TRUE(Vec("m", -1).empty());
}

TEST_F(SelectorsTest, StaleMarkerEndsSeries) {
  Add(kA, 0, kMin, {1, 2, tsdb::StaleNaN(), 4});
  EXPECT_EQ(Vec("m", kMin + 1)[0].f, 2);
  EXPECT_TRUE(Vec("m", 2 * kMin).empty());
  EXPECT_TRUE(Vec("m", 2 * kMin + 30000).empty());
  EXPECT_EQ(Vec("m", 3 * kMin)[0].f, 4);
  // A range window drops the marker but keeps the other samples.
  Vector c = Vec("count_over_time(m[10m])", 3 * kMin);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].f, 3);
}

TEST_F(SelectorsTest, RangeWindowIsLeftOpen) {
  Add(kA, 0, kMin, {1, 2, 3, 4, 5});
  // (2m - 2m, 2m] holds the samples at 1m and 2m only.
  QueryResult r = Instant("m[2m]", 2 * kMin);
  ASSERT_TRUE(r.ok()) << r.error;
  const Matrix& m = std::get<Matrix>(r.value);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].points.size(), 2u);
  EXPECT_EQ(m[0].points[0].t, kMin);
  EXPECT_EQ(m[0].points[1].t, 2 * kMin);
  EXPECT_EQ(Vec("count_over_time(m[2m])", 2 * kMin)[0].f, 2);
  EXPECT_EQ(Vec("count_over_time(m[2m])", 2 * kMin + 1)[0].f, 2);
}

TEST_F(SelectorsTest, OffsetShiftsDataNotOutputTime) {
  Add(kA, 0, kMin, {1, 2, 3, 4, 5});
  Vector v = Vec("m offset 2m", 4 * kMin);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].f, 3);
  EXPECT_EQ(v[0].t, 4 * kMin);
  EXPECT_EQ(Vec("m offset -1m", 2 * kMin)[0].f, 4);
  EXPECT_EQ(Vec("sum_over_time(m[2m] offset 1m)", 4 * kMin)[0].f, 3 + 4);
}

TEST_F(SelectorsTest, AtModifierPinsTime) {
  Add(kA, 0, kMin, {1, 2, 3, 4, 5});
  EXPECT_EQ(Vec("m @ 60", 4 * kMin)[0].f, 2);
  EXPECT_EQ(Vec("m @ 120 offset 1m", 4 * kMin)[0].f, 2);
  // In a range query every step sees the same value; start()/end() resolve
  // to the query's range.
  Matrix m = Mat("m @ start()", kMin, 3 * kMin, kMin);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].points.size(), 3u);
  for (const auto& p : m[0].points) EXPECT_EQ(p.f, 2);
  m = Mat("m @ end()", kMin, 3 * kMin, kMin);
  ASSERT_EQ(m[0].points.size(), 3u);
  EXPECT_EQ(m[0].points[0].f, 4);
  EXPECT_EQ(m[0].points[0].t, kMin);
  EXPECT_EQ(Vec("sum_over_time(m[2m] @ 180)", 0)[0].f, 3 + 4);
}

TEST_F(SelectorsTest, RangeQueryHasOnePointPerStep) {
  Add(kA, 0, kMin, {1, 2, 3});
  Add(kB, 10 * kMin, kMin, {7});
  Matrix m = Mat("m", 0, 12 * kMin, 2 * kMin);
  ASSERT_EQ(m.size(), 2u);
  // Sorted by labels: a before b.
  EXPECT_EQ(m[0].metric, kA);
  // a: 0,2m,4m,6m have values (lookback 5m from the last sample at 2m).
  ASSERT_EQ(m[0].points.size(), 4u);
  EXPECT_EQ(m[0].points[3].t, 6 * kMin);
  EXPECT_EQ(m[0].points[3].f, 3);
  ASSERT_EQ(m[1].points.size(), 2u);
  EXPECT_EQ(m[1].points[0].t, 10 * kMin);
}

TEST_F(SelectorsTest, RangeFunctionSlidesOverSteps) {
  Add(kA, 0, kMin, {0, 10, 20, 30, 40, 50, 60});
  Matrix m = Mat("increase(m[2m])", 2 * kMin, 6 * kMin, kMin);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_FALSE(m[0].metric.Has("__name__"));
  ASSERT_EQ(m[0].points.size(), 5u);
  // Two samples 1m apart in a 2m window extrapolate to 20 per window.
  for (const auto& p : m[0].points) EXPECT_NEAR(p.f, 20, 1e-9);
}

TEST_F(SelectorsTest, TimestampOfSelectorKeepsSampleTime) {
  Add(kA, 0, kMin, {1, 2});
  Vector v = Vec("timestamp(m)", 3 * kMin);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].f, 60);
  EXPECT_FALSE(v[0].metric.Has("__name__"));
  // Through another function the step time is used.
  EXPECT_EQ(Vec("timestamp(abs(m))", 3 * kMin)[0].f, 180);
}

TEST_F(SelectorsTest, AbsentOverTimeUsesMatcherLabels) {
  Add(kA, 0, kMin, {1});
  EXPECT_TRUE(Vec("absent_over_time(m[2m])", kMin).empty());
  Vector v = Vec("absent_over_time(nope{job=\"x\", i=~\"y\"}[2m])", kMin);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].metric, (Labels{{"job", "x"}}));
  EXPECT_EQ(v[0].f, 1);
  Matrix m = Mat("absent_over_time(m[1m])", 0, 3 * kMin, kMin);
  ASSERT_EQ(m.size(), 1u);
  // Left-open windows: from 1m on the sample at 0 is out of (t - 1m, t].
  ASSERT_EQ(m[0].points.size(), 3u);
  EXPECT_EQ(m[0].points[0].t, kMin);
}

TEST_F(SelectorsTest, NumberAndStringLiterals) {
  EXPECT_EQ(Scal("1 + 2 * 3", 0), 7);
  QueryResult r = Instant("\"hello\"", 5000);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(std::get<String>(r.value).v, "hello");
  Matrix m = Mat("time()", 0, 2 * kMin, kMin);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].points.size(), 3u);
  EXPECT_EQ(m[0].points[2].f, 120);
  // Functions of the query itself.
  m = Mat("step() + range() + start()", 60000, 3 * kMin, 30000);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].points.size(), 5u);
  EXPECT_EQ(m[0].points[4].f, 30 + 120 + 60);
  EXPECT_EQ(Scal("end() - step()", 42000), 42);
}

TEST_F(SelectorsTest, DuplicateLabelsetFromFunctionIsAnError) {
  Add(Labels{{"__name__", "x"}, {"i", "a"}}, 0, kMin, {1});
  Add(Labels{{"__name__", "y"}, {"i", "a"}}, 0, kMin, {2});
  QueryResult r = Instant("abs({i=\"a\"})", 0);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_type, ErrorType::kExecution);
  EXPECT_EQ(r.error, "vector cannot contain metrics with the same labelset");
  r = Instant("rate({i=\"a\"}[5m])", kMin);
  EXPECT_TRUE(r.ok());  // one sample each: no output, no conflict
}

TEST_F(SelectorsTest, SortOrdersInstantResultsAndWarnsInRange) {
  Add(kA, 0, kMin, {5});
  Add(kB, 0, kMin, {1});
  Vector v = Vec("sort(m)", 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].f, 1);
  v = Vec("sort_desc(m)", 0);
  EXPECT_EQ(v[0].f, 5);
  QueryResult r = Range("sort(m)", 0, kMin, kMin);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.annotations.warnings.size(), 1u);
  EXPECT_NE(r.annotations.warnings[0].find("sort is ineffective for range queries"),
            std::string::npos);
  // Range results are ordered by labels regardless.
  EXPECT_EQ(std::get<Matrix>(r.value)[0].metric, kA);
}

// deriv and predict_linear over a range query take the functions' batch
// form; every step must equal the instant query at that time, bit for bit.
TEST_F(SelectorsTest, BatchedRangeFunctionsMatchInstantEvaluation) {
  std::vector<double> a, b;
  for (int i = 0; i < 200; ++i) {
    a.push_back(50 + 0.25 * i + (i % 5) * 0.7);
    b.push_back(i < 100 ? 3.0 : 3.0 + i * 1e-3 * (i % 3));
  }
  Add(kA, 7, 15'000, a);
  Add(Labels{{"__name__", "m"}, {"job", "b"}}, 11, 20'000, b);
  for (const std::string q : {"deriv(m[5m])", "predict_linear(m[10m], 3600)",
                              "predict_linear(m[3m] offset 2m, time())", "deriv(m[30s])"}) {
    const Matrix range = Mat(q, 0, 50 * kMin, 37'000);
    ASSERT_EQ(range.size(), 2u) << q;
    int checked = 0;
    for (const Series& s : range) {
      size_t i = 0;
      for (int64_t ts = 0; ts <= 50 * kMin; ts += 37'000) {
        const Vector v = Vec(q, ts);
        const Sample* want = Find(v, s.metric);
        if (want == nullptr) {
          EXPECT_TRUE(i >= s.points.size() || s.points[i].t != ts) << q << " at " << ts;
          continue;
        }
        ASSERT_LT(i, s.points.size()) << q;
        EXPECT_EQ(s.points[i].t, ts) << q;
        EXPECT_EQ(std::memcmp(&s.points[i].f, &want->f, sizeof(double)), 0)
            << q << " at " << ts << ": " << s.points[i].f << " vs " << want->f;
        ++i;
        ++checked;
      }
      EXPECT_EQ(i, s.points.size()) << q;
    }
    EXPECT_GT(checked, 50) << q;
  }
}

}  // namespace
}  // namespace gpumon::promql::testing
