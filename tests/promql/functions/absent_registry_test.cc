#include <gtest/gtest.h>

#include "promql/function_table.h"
#include "promql/functions.h"
#include "test_util.h"

namespace gpumon::promql::testing {
namespace {

using tsdb::Matcher;
using tsdb::MatchType;

Matcher M(MatchType t, const char* name, const char* value) {
  auto m = Matcher::Make(t, name, value);
  EXPECT_TRUE(m.ok());
  return *m;
}

// absent(nonexistent{job="a", job="b", instance=~"x", env="prod", x!="y"})
struct AbsentCall {
  Call call;
  AbsentCall(bool matrix, std::vector<Matcher> matchers) {
    auto sel = std::make_unique<Expr>();
    sel->node = VectorSelector{"nonexistent", std::move(matchers)};
    if (!matrix) {
      call.args.push_back(std::move(sel));
      return;
    }
    auto ms = std::make_unique<Expr>();
    ms->node = MatrixSelector{std::move(sel), 5 * kMinute};
    call.args.push_back(std::move(ms));
  }
};

std::vector<Matcher> Matchers() {
  return {M(MatchType::kEqual, "__name__", "nonexistent"),
          M(MatchType::kEqual, "job", "a"),
          M(MatchType::kEqual, "job", "b"),
          M(MatchType::kRegexMatch, "instance", "x"),
          M(MatchType::kEqual, "env", "prod"),
          M(MatchType::kEqual, "x", "y"),
          M(MatchType::kNotEqual, "x", "z")};
}

TEST(Absent, LabelsFromEqualityMatchers) {
  AbsentCall c(false, Matchers());
  Vector out;
  ASSERT_TRUE(Invoke("absent", {Vector{}}, out, nullptr, 1000, 0, &c.call).ok());
  ASSERT_EQ(out.size(), 1u);
  // job appears twice and x also has a != matcher: both left out.
  EXPECT_EQ(out[0].metric, (Labels{{"env", "prod"}}));
  EXPECT_EQ(out[0].f, 1);
  EXPECT_EQ(out[0].t, 1000);
  out.clear();
  ASSERT_TRUE(
      Invoke("absent", {Vector{Sample{Labels{{"a", "b"}}, 0, 5}}}, out, nullptr, 0, 0, &c.call)
          .ok());
  EXPECT_TRUE(out.empty());
}

TEST(Absent, NonSelectorArgumentHasNoLabels) {
  Call call;
  auto lit = std::make_unique<Expr>();
  lit->node = NumberLiteral{1};
  call.args.push_back(std::move(lit));
  Vector out;
  ASSERT_TRUE(Invoke("absent", {Vector{}}, out, nullptr, 0, 0, &call).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].metric.empty());
}

TEST(AbsentOverTime, OnlyWhenNoSeriesHasPoints) {
  AbsentCall c(true, {M(MatchType::kEqual, "job", "a")});
  Vector out;
  ASSERT_TRUE(Invoke("absent_over_time", {Matrix{}}, out, nullptr, 0, 0, &c.call).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].metric, (Labels{{"job", "a"}}));
  out.clear();
  Matrix m{Series{Labels{{"job", "a"}}, {}}, Series{Labels{{"job", "b"}}, {FPoint{0, 1}}}};
  ASSERT_TRUE(Invoke("absent_over_time", {m}, out, nullptr, 0, 0, &c.call).ok());
  EXPECT_TRUE(out.empty());
}

TEST(Registry, KnowsFunctions) {
  EXPECT_NE(FindFunctionImpl("rate"), nullptr);
  EXPECT_NE(FindFunctionImpl("year"), nullptr);
  EXPECT_NE(FindFunctionImpl("abs"), nullptr);
  EXPECT_EQ(FindFunctionImpl("nope"), nullptr);
  EXPECT_EQ(FindFunctionImpl(""), nullptr);
}

}  // namespace
}  // namespace gpumon::promql::testing
