// Subqueries: absolute step alignment, default step, offset and @.
#include "engine_test_util.h"

namespace gpumon::promql::testing {
namespace {

using SubqueryTest = EngineTest;

const Labels kM{{"__name__", "m"}};

TEST_F(SubqueryTest, StepsAreAlignedToAbsoluteMultiples) {
  Add(kM, 0, 10000, std::vector<double>(100, 1));  // every 10s until 990s
  // At 125s a [1m:20s] subquery evaluates at 80, 100, 120 (multiples of
  // 20s in (65s, 125s]).
  QueryResult r = Instant("m[1m:20s]", 125000);
  ASSERT_TRUE(r.ok()) << r.error;
  const Matrix& mat = std::get<Matrix>(r.value);
  ASSERT_EQ(mat.size(), 1u);
  ASSERT_EQ(mat[0].points.size(), 3u);
  EXPECT_EQ(mat[0].points[0].t, 80000);
  EXPECT_EQ(mat[0].points[2].t, 120000);
  EXPECT_EQ(Vec("count_over_time(m[1m:20s])", 125000)[0].f, 3);
  // Left-open: at 120s the window (60s, 120s] holds 80, 100, 120.
  EXPECT_EQ(Vec("count_over_time(m[1m:20s])", 120000)[0].f, 3);
}

TEST_F(SubqueryTest, DefaultStepIsEngineOption) {
  Add(kM, 0, 10000, std::vector<double>(100, 1));
  // Default 1m step: 5m window at 600s holds 360..600 → 5 points.
  EXPECT_EQ(Vec("count_over_time(m[5m:])", 600000)[0].f, 5);
}

TEST_F(SubqueryTest, OffsetAndAt) {
  std::vector<double> vals;
  for (int i = 0; i < 100; ++i) vals.push_back(i);
  Add(kM, 0, 10000, vals);  // value = t/10s
  // max over (t-1m-1m, t-1m] at t=300s → sample at 240s = 24.
  EXPECT_EQ(Vec("max_over_time(m[1m:10s] offset 1m)", 300000)[0].f, 24);
  EXPECT_EQ(Vec("max_over_time(m[1m:10s] @ 100)", 900000)[0].f, 10);
  Matrix m = Mat("max_over_time(m[1m:10s] @ 100)", 0, 2 * kMin, kMin);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].points.size(), 3u);
  for (const auto& p : m[0].points) EXPECT_EQ(p.f, 10);
}

TEST_F(SubqueryTest, NestedSubqueryInRangeQuery) {
  std::vector<double> vals;
  for (int i = 0; i < 200; ++i) vals.push_back(i * 10);
  Add(kM, 0, 10000, vals);  // counter growing 1/s
  Matrix m = Mat("max_over_time(rate(m[1m])[5m:30s])", 10 * kMin, 20 * kMin, kMin);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].points.size(), 11u);
  for (const auto& p : m[0].points) EXPECT_NEAR(p.f, 1, 1e-9);
}

}  // namespace
}  // namespace gpumon::promql::testing
