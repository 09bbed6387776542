// Binary operators: arithmetic, comparisons (filter and bool), set
// operators and every vector matching mode with its errors.
#include "engine_test_util.h"

namespace gpumon::promql::testing {
namespace {

class BinaryTest : public EngineTest {
 protected:
  void SetUp() override {
    // requests{job, inst}, limits{job}
    Add(Labels{{"__name__", "req"}, {"job", "api"}, {"inst", "1"}}, 0, kMin, {10});
    Add(Labels{{"__name__", "req"}, {"job", "api"}, {"inst", "2"}}, 0, kMin, {20});
    Add(Labels{{"__name__", "req"}, {"job", "db"}, {"inst", "1"}}, 0, kMin, {30});
    Add(Labels{{"__name__", "lim"}, {"job", "api"}}, 0, kMin, {100});
    Add(Labels{{"__name__", "lim"}, {"job", "db"}}, 0, kMin, {0});
  }
};

TEST_F(BinaryTest, ScalarArithmeticAndComparison) {
  EXPECT_EQ(Scal("7 % 4", 0), 3);
  EXPECT_EQ(Scal("2 ^ 3 ^ 2", 0), 512);
  EXPECT_EQ(Scal("1 / 0", 0), INFINITY);
  EXPECT_EQ(Scal("-1 / 0", 0), -INFINITY);
  EXPECT_TRUE(std::isnan(Scal("0 / 0", 0)));
  EXPECT_EQ(Scal("3 > bool 2", 0), 1);
  EXPECT_EQ(Scal("3 < bool 2", 0), 0);
  EXPECT_NEAR(Scal("1 atan2 1", 0), M_PI / 4, 1e-12);
}

TEST_F(BinaryTest, VectorScalarArithmeticDropsName) {
  Vector v = Vec("req{job=\"db\"} * 2", 0);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].f, 60);
  EXPECT_EQ(v[0].metric, (Labels{{"job", "db"}, {"inst", "1"}}));
  v = Vec("1 - req{job=\"db\"}", 0);
  EXPECT_EQ(v[0].f, -29);
  v = Vec("req{job=\"db\"} / 0", 0);
  EXPECT_EQ(v[0].f, INFINITY);
}

TEST_F(BinaryTest, ComparisonFilterKeepsNameBoolDropsIt) {
  Vector v = Vec("req > 15", 0);
  ASSERT_EQ(v.size(), 2u);
  for (const auto& s : v) EXPECT_EQ(s.metric.Get("__name__"), "req");
  // Scalar on the left: the vector's value is kept.
  v = Vec("15 < req", 0);
  ASSERT_EQ(v.size(), 2u);
  for (const auto& s : v) EXPECT_GT(s.f, 15);
  v = Vec("req > bool 15", 0);
  ASSERT_EQ(v.size(), 3u);
  double sum = 0;
  for (const auto& s : v) {
    EXPECT_FALSE(s.metric.Has("__name__"));
    sum += s.f;
  }
  EXPECT_EQ(sum, 2);
}

TEST_F(BinaryTest, OneToOneMatching) {
  EXPECT_FALSE(Instant("req / ignoring(inst) lim", 0).ok());  // api matches twice
  Vector v = Vec("req{inst=\"1\"} / ignoring(inst) lim", 0);
  ASSERT_EQ(v.size(), 2u);
  const Sample* api = Find(v, Labels{{"job", "api"}});
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->f, 0.1);
  const Sample* db = Find(v, Labels{{"job", "db"}});
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->f, INFINITY);
  v = Vec("req{inst=\"1\"} + on(job) lim", 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NE(Find(v, Labels{{"job", "api"}}), nullptr);
  // Comparison filter keeps the left sample's labels and value.
  v = Vec("req{inst=\"1\"} < on(job) lim", 0);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].f, 10);
  EXPECT_EQ(v[0].metric.Get("__name__"), "");  // on(job) keeps only job
}

TEST_F(BinaryTest, ManyToOneErrorsAndGroupLeft) {
  QueryResult r = Instant("req / on(job) lim{job=\"api\"}", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error,
            "multiple matches for labels: many-to-one matching must be explicit "
            "(group_left/group_right)");
  Vector v = Vec("req / on(job) group_left lim", 0);
  ASSERT_EQ(v.size(), 3u);
  const Sample* s = Find(v, Labels{{"job", "api"}, {"inst", "2"}});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->f, 0.2);
  // group_left(label) copies the label from the one side.
  Add(Labels{{"__name__", "info"}, {"job", "api"}, {"team", "t1"}}, 0, kMin, {1});
  v = Vec("req * on(job) group_left(team) info", 0);
  ASSERT_EQ(v.size(), 2u);
  s = Find(v, Labels{{"job", "api"}, {"inst", "1"}, {"team", "t1"}});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->f, 10);
  // group_right mirrors it.
  v = Vec("info * on(job) group_right(team) req", 0);
  ASSERT_EQ(v.size(), 2u);
  // The many side's labels (name dropped by arithmetic) plus team.
  EXPECT_NE(Find(v, Labels{{"job", "api"}, {"inst", "2"}, {"team", "t1"}}), nullptr);
}

TEST_F(BinaryTest, DuplicateOnOneSideIsAnError) {
  QueryResult r = Instant("lim + on(job) group_left req", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error_type, ErrorType::kExecution);
  EXPECT_EQ(r.error,
            "found duplicate series for the match group {job=\"api\"} on the right hand-side of "
            "the operation: [{__name__=\"req\", inst=\"1\", job=\"api\"}, {__name__=\"req\", "
            "inst=\"2\", job=\"api\"}];many-to-many "
            "matching not allowed: matching labels must be unique on one side");
  r = Instant("req + on(job) group_right lim", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("on the left hand-side"), std::string::npos) << r.error;
}

TEST_F(BinaryTest, SetOperators) {
  Vector v = Vec("req and on(job) lim > 50", 0);
  EXPECT_EQ(v.size(), 2u);  // the api requests
  for (const auto& s : v) EXPECT_EQ(s.metric.Get("job"), "api");
  v = Vec("req unless on(job) lim > 50", 0);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].metric.Get("job"), "db");
  v = Vec("lim or req", 0);
  EXPECT_EQ(v.size(), 5u);
  v = Vec("lim or on(job) req", 0);
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(Vec("req and nothing", 0).size(), 0u);
  EXPECT_EQ(Vec("req unless nothing", 0).size(), 3u);
  EXPECT_EQ(Vec("nothing or req", 0).size(), 3u);
}

TEST_F(BinaryTest, EveryOperatorVectorToVector) {
  Add(Labels{{"__name__", "x"}}, 0, kMin, {7});
  Add(Labels{{"__name__", "y"}}, 0, kMin, {2});
  struct Case {
    const char* op;
    double want;  // NaN: filtered out
  };
  const Case cases[] = {{"+", 9},  {"-", 5},    {"*", 14},  {"/", 3.5},      {"%", 1},
                        {"^", 49}, {"==", NAN}, {"!=", 7},  {">", 7},        {"<", NAN},
                        {">=", 7}, {"<=", NAN}, {"and", 7}, {"unless", NAN}, {"or", 7}};
  for (const auto& c : cases) {
    const std::string q = std::string("x ") + c.op + " on() y";
    Vector v = Vec(q, 0);
    if (std::isnan(c.want)) {
      EXPECT_TRUE(v.empty()) << q;
      continue;
    }
    ASSERT_FALSE(v.empty()) << q;
    EXPECT_DOUBLE_EQ(v[0].f, c.want) << q;
  }
  EXPECT_NEAR(Vec("x atan2 on() y", 0)[0].f, std::atan2(7, 2), 1e-12);
  EXPECT_EQ(Vec("x == bool on() y", 0)[0].f, 0);
  EXPECT_EQ(Vec("x unless on() y", 0).size(), 0u);
  EXPECT_EQ(Vec("x or on() y", 0).size(), 1u);
}

TEST_F(BinaryTest, RangeQueryMatchesPerStep) {
  Add(Labels{{"__name__", "a"}}, 0, kMin, {1, 2, 3});
  Add(Labels{{"__name__", "b"}}, 2 * kMin, kMin, {10});
  Matrix m = Mat("a + on() b", 0, 2 * kMin, kMin);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].points.size(), 1u);
  EXPECT_EQ(m[0].points[0].t, 2 * kMin);
  EXPECT_EQ(m[0].points[0].f, 13);
}

}  // namespace
}  // namespace gpumon::promql::testing
