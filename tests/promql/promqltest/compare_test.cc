#include "promql/promqltest/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tsdb/sample.h"

namespace gpumon::promql::promqltest {
namespace {

Labels L(std::initializer_list<Label> l) { return Labels(l); }

TEST(AlmostEqualTest, ToleranceAndSpecialValues) {
  EXPECT_TRUE(AlmostEqual(1.0, 1.0 + 1e-9));
  EXPECT_FALSE(AlmostEqual(1.0, 1.001));
  EXPECT_TRUE(AlmostEqual(1e12, 1e12 * (1 + 1e-7)));
  EXPECT_FALSE(AlmostEqual(0.0, 1e-300));
  EXPECT_TRUE(AlmostEqual(0.0, -0.0));
  EXPECT_TRUE(AlmostEqual(NAN, std::nan("1")));
  EXPECT_FALSE(AlmostEqual(NAN, 1));
  EXPECT_TRUE(AlmostEqual(INFINITY, INFINITY));
  EXPECT_FALSE(AlmostEqual(INFINITY, -INFINITY));
  EXPECT_TRUE(AlmostEqual(tsdb::StaleNaN(), tsdb::StaleNaN()));
  EXPECT_FALSE(AlmostEqual(tsdb::StaleNaN(), NAN));
  EXPECT_FALSE(AlmostEqual(NAN, tsdb::StaleNaN()));
}

Expected VectorExp(std::vector<std::pair<Labels, double>> series, bool ordered = false) {
  Expected e;
  int pos = 0;
  for (auto& [m, v] : series) e.series.push_back({m, {{false, v}}, ++pos});
  e.ordered = ordered;
  return e;
}

TEST(CompareTest, VectorMatchesIgnoringOrderUnlessOrdered) {
  Labels a = L({{"__name__", "x"}, {"a", "1"}}), b = L({{"__name__", "x"}, {"a", "2"}});
  Vector got = {{b, 0, 2}, {a, 0, 1}};
  EXPECT_EQ(CompareResult(VectorExp({{a, 1}, {b, 2}}), got), "");
  EXPECT_NE(CompareResult(VectorExp({{a, 1}, {b, 2}}, true), got), "");
  EXPECT_EQ(CompareResult(VectorExp({{b, 2}, {a, 1}}, true), got), "");
}

TEST(CompareTest, VectorDetectsWrongMissingAndExtraSeries) {
  Labels a = L({{"a", "1"}}), b = L({{"a", "2"}});
  EXPECT_NE(CompareResult(VectorExp({{a, 1}}), Vector{{a, 0, 1.1}}).find("expected 1"),
            std::string::npos);
  EXPECT_NE(CompareResult(VectorExp({{a, 1}, {b, 2}}), Vector{{a, 0, 1}}).find("not found"),
            std::string::npos);
  EXPECT_NE(CompareResult(VectorExp({{a, 1}}), Vector{{a, 0, 1}, {b, 0, 2}}).find("unexpected"),
            std::string::npos);
  // No expectation at all: an empty vector passes, a scalar does not.
  EXPECT_EQ(CompareResult(Expected{}, Vector{}), "");
  EXPECT_NE(CompareResult(Expected{}, Scalar{0, 1}), "");
}

TEST(CompareTest, ScalarAndString) {
  Expected e;
  e.scalar = 3;
  EXPECT_EQ(CompareResult(e, Scalar{0, 3}), "");
  EXPECT_NE(CompareResult(e, Scalar{0, 4}), "");
  EXPECT_NE(CompareResult(e, Vector{{Labels(), 0, 3}}), "");
  Expected s;
  s.str = "Foo";
  EXPECT_EQ(CompareResult(s, String{0, "Foo"}), "");
  EXPECT_NE(CompareResult(s, String{0, "foo"}), "");
}

TEST(CompareTest, MatrixPointsLaidOutByStep) {
  Labels a = L({{"a", "1"}});
  Expected e;
  e.start_ms = 0;
  e.step_ms = 60'000;
  e.end_ms = 180'000;
  e.series.push_back({a, {{false, 1}, {true, 0}, {false, 3}}, 1});
  Matrix good = {{a, {{0, 1}, {120'000, 3}}}};
  EXPECT_EQ(CompareResult(e, good), "");
  Matrix wrong_time = {{a, {{0, 1}, {60'000, 3}}}};
  EXPECT_NE(CompareResult(e, wrong_time).find("timestamp"), std::string::npos);
  Matrix extra_point = {{a, {{0, 1}, {60'000, 2}, {120'000, 3}}}};
  EXPECT_NE(CompareResult(e, extra_point), "");
  Matrix wrong_value = {{a, {{0, 1}, {120'000, 3.5}}}};
  EXPECT_NE(CompareResult(e, wrong_value), "");

  e.end_ms = 60'000;  // three expected points do not fit in [0, 1m]
  EXPECT_NE(CompareResult(e, good).find("cannot return"), std::string::npos);
}

TEST(CompareTest, MatrixMustBeSorted) {
  Labels a = L({{"a", "1"}}), b = L({{"a", "2"}});
  Expected e;
  e.step_ms = 1;
  e.end_ms = 0;
  e.series = {{a, {{false, 1}}, 1}, {b, {{false, 1}}, 2}};
  EXPECT_EQ(CompareResult(e, Matrix{{a, {{0, 1}}}, {b, {{0, 1}}}}), "");
  EXPECT_NE(CompareResult(e, Matrix{{b, {{0, 1}}}, {a, {{0, 1}}}}).find("sorted"),
            std::string::npos);
}

TEST(CompareTest, FormatFloatLikeGo) {
  EXPECT_EQ(FormatFloat(1), "1");
  EXPECT_EQ(FormatFloat(0.1), "0.1");
  EXPECT_EQ(FormatFloat(-INFINITY), "-Inf");
  EXPECT_EQ(FormatFloat(NAN), "NaN");
}

}  // namespace
}  // namespace gpumon::promql::promqltest
