// Aggregations: every operator, by/without grouping, name dropping, k/ratio
// parameters and their errors.
#include "engine_test_util.h"

namespace gpumon::promql::testing {
namespace {

class AggregateTest : public EngineTest {
 protected:
  void SetUp() override {
    Add(Labels{{"__name__", "t"}, {"node", "n1"}, {"gpu", "0"}}, 0, kMin, {1});
    Add(Labels{{"__name__", "t"}, {"node", "n1"}, {"gpu", "1"}}, 0, kMin, {2});
    Add(Labels{{"__name__", "t"}, {"node", "n2"}, {"gpu", "0"}}, 0, kMin, {3});
    Add(Labels{{"__name__", "t"}, {"node", "n2"}, {"gpu", "1"}}, 0, kMin, {6});
  }
  double One(const std::string& q) {
    Vector v = Vec(q, 0);
    EXPECT_EQ(v.size(), 1u) << q;
    return v.empty() ? NAN : v[0].f;
  }
};

TEST_F(AggregateTest, SimpleAggregations) {
  EXPECT_EQ(One("sum(t)"), 12);
  EXPECT_EQ(One("avg(t)"), 3);
  EXPECT_EQ(One("count(t)"), 4);
  EXPECT_EQ(One("min(t)"), 1);
  EXPECT_EQ(One("max(t)"), 6);
  EXPECT_EQ(One("group(t)"), 1);
  EXPECT_DOUBLE_EQ(One("stdvar(t)"), 3.5);
  EXPECT_DOUBLE_EQ(One("stddev(t)"), std::sqrt(3.5));
  EXPECT_DOUBLE_EQ(One("quantile(0.5, t)"), 2.5);
  EXPECT_EQ(One("quantile(2, t)"), INFINITY);
  QueryResult r = Instant("quantile(2, t)", 0);
  ASSERT_EQ(r.annotations.warnings.size(), 1u);
  EXPECT_EQ(r.annotations.warnings[0],
            "PromQL warning: quantile value should be between 0 and 1, got 2");
  Vector v = Vec("sum(t)", 0);
  EXPECT_TRUE(v[0].metric.empty());
}

TEST_F(AggregateTest, GroupingByAndWithout) {
  Vector v = Vec("sum by (node) (t)", 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(Find(v, Labels{{"node", "n1"}})->f, 3);
  EXPECT_EQ(Find(v, Labels{{"node", "n2"}})->f, 9);
  v = Vec("avg without (gpu) (t)", 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(Find(v, Labels{{"node", "n2"}})->f, 4.5);
  v = Vec("max by (__name__, gpu) (t)", 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(Find(v, Labels{{"__name__", "t"}, {"gpu", "1"}})->f, 6);
}

TEST_F(AggregateTest, TopkBottomkKeepLabelsAndOrder) {
  Vector v = Vec("topk(2, t)", 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].f, 6);
  EXPECT_EQ(v[1].f, 3);
  EXPECT_EQ(v[0].metric.Get("__name__"), "t");
  v = Vec("bottomk(1, t) by (node)", 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(Find(v, Labels{{"__name__", "t"}, {"node", "n2"}, {"gpu", "0"}})->f, 3);
  EXPECT_TRUE(Vec("topk(0, t)", 0).empty());
  QueryResult r = Instant("topk(NaN, t)", 0);
  EXPECT_EQ(r.error, "Parameter value is NaN");
  EXPECT_EQ(Vec("limitk(3, t)", 0).size(), 3u);
  // limit_ratio with r and r-1 partitions the input.
  EXPECT_EQ(Vec("limit_ratio(0.3, t) or limit_ratio(-0.7, t)", 0).size(), 4u);
  EXPECT_EQ(Vec("limit_ratio(0.3, t) and limit_ratio(-0.7, t)", 0).size(), 0u);
  EXPECT_EQ(Vec("limit_ratio(1, t)", 0).size(), 4u);
}

TEST_F(AggregateTest, TopkInRangeQueryPerStep) {
  Add(Labels{{"__name__", "u"}, {"i", "a"}}, 0, kMin, {1, 5, 1});
  Add(Labels{{"__name__", "u"}, {"i", "b"}}, 0, kMin, {2, 2, 2});
  Matrix m = Mat("topk(1, u)", 0, 2 * kMin, kMin);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].points.size(), 1u);  // a wins at 1m only
  EXPECT_EQ(m[0].points[0].t, kMin);
  EXPECT_EQ(m[1].points.size(), 2u);
}

TEST_F(AggregateTest, CountValues) {
  Add(Labels{{"__name__", "v"}, {"i", "a"}}, 0, kMin, {1.5});
  Add(Labels{{"__name__", "v"}, {"i", "b"}}, 0, kMin, {1.5});
  Add(Labels{{"__name__", "v"}, {"i", "c"}}, 0, kMin, {100000000});
  Vector v = Vec("count_values(\"val\", v)", 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(Find(v, Labels{{"val", "1.5"}})->f, 2);
  EXPECT_EQ(Find(v, Labels{{"val", "100000000"}})->f, 1);
  v = Vec("count_values by (i) (\"val\", v)", 0);
  EXPECT_EQ(v.size(), 3u);
}

TEST_F(AggregateTest, AvgAvoidsOverflow) {
  Add(Labels{{"__name__", "big"}, {"i", "a"}}, 0, kMin, {1.5e308});
  Add(Labels{{"__name__", "big"}, {"i", "b"}}, 0, kMin, {1.5e308});
  EXPECT_DOUBLE_EQ(Vec("avg(big)", 0)[0].f, 1.5e308);
  EXPECT_EQ(Vec("sum(big)", 0)[0].f, INFINITY);
}

TEST_F(AggregateTest, RangeQuerySumOverRate) {
  for (int i = 0; i < 3; ++i) {
    std::vector<double> vals;
    for (int k = 0; k < 20; ++k) vals.push_back(k * 60.0 * (i + 1));
    Add(Labels{{"__name__", "e_total"}, {"node", i < 2 ? "n1" : "n2"}, {"g", std::to_string(i)}}, 0,
        kMin, vals);
  }
  Matrix m = Mat("avg by (node) (rate(e_total[5m]))", 5 * kMin, 15 * kMin, kMin);
  ASSERT_EQ(m.size(), 2u);
  ASSERT_EQ(m[0].points.size(), 11u);
  EXPECT_NEAR(m[0].points[0].f, 1.5, 1e-9);  // rates 1 and 2
  EXPECT_NEAR(m[1].points[5].f, 3, 1e-9);
}

}  // namespace
}  // namespace gpumon::promql::testing
