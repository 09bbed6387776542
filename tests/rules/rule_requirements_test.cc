#include "rules/rule_requirements.h"

#include <gtest/gtest.h>

#include <string>

#include "promql/parser.h"
#include "test_env.h"

namespace gpumon::rules {
namespace {

constexpr int64_t kMin = 60 * 1000;
constexpr int64_t kLookback = 5 * kMin;

RuleRequirements Of(const std::string& query, int64_t query_offset_ms = 0) {
  RuleRequirements out;
  auto parsed = promql::Parse(query);
  EXPECT_TRUE(parsed.ok()) << query;
  if (parsed.ok()) AddExprRequirements(*parsed.expr, query_offset_ms, kLookback, &out);
  return out;
}

TEST(RuleRequirementsTest, NamesAndHistoryOfSelectors) {
  RuleRequirements r = Of("rate(a_total[10m]) > on(gpu) b offset 20m");
  EXPECT_TRUE(r.Needs("a_total"));
  EXPECT_TRUE(r.Needs("b"));
  EXPECT_FALSE(r.Needs("c"));
  EXPECT_FALSE(r.any_name);
  EXPECT_EQ(r.HistoryFor("a_total"), 10 * kMin);
  EXPECT_EQ(r.HistoryFor("b"), 20 * kMin + kLookback);
  EXPECT_EQ(r.HistoryFor("c"), 0);
  EXPECT_EQ(r.history_ms, 25 * kMin);
}

TEST(RuleRequirementsTest, SubqueriesAddTheirRangeOffsetAndStep) {
  RuleRequirements r = Of("max_over_time(deriv(x[10m])[30m:1m] offset 5m)");
  EXPECT_EQ(r.HistoryFor("x"), 10 * kMin + 30 * kMin + 5 * kMin + 1 * kMin);
  RuleRequirements d = Of("max_over_time(x[1h:])");  // default step
  EXPECT_EQ(d.HistoryFor("x"), 60 * kMin + kLookback + 1 * kMin);
}

TEST(RuleRequirementsTest, QueryOffsetAndNegativeOffsets) {
  EXPECT_EQ(Of("x", 2 * kMin).HistoryFor("x"), 2 * kMin + kLookback);
  EXPECT_EQ(Of("x offset -10m").HistoryFor("x"), kLookback);
}

TEST(RuleRequirementsTest, NameMatchers) {
  RuleRequirements r = Of(R"({__name__=~"gpu_.*_celsius", gpu="0"})");
  EXPECT_TRUE(r.Needs("gpu_temperature_celsius"));
  EXPECT_FALSE(r.Needs("gpu_power_usage_watts"));
  EXPECT_FALSE(r.any_name);
  RuleRequirements any = Of(R"(count({job="gpu"}))");
  EXPECT_TRUE(any.any_name);
  EXPECT_TRUE(any.Needs("anything_at_all"));
  EXPECT_EQ(any.HistoryFor("anything_at_all"), kLookback);
}

TEST(RuleRequirementsTest, AtModifierIsUnbounded) {
  EXPECT_EQ(Of("x @ 1700000000").history_ms, RuleRequirements::kUnbounded);
  EXPECT_EQ(Of("max_over_time(x[5m:1m] @ 1700000000)").HistoryFor("x"),
            RuleRequirements::kUnbounded);
  EXPECT_EQ(Of("y + x @ 1700000000").HistoryFor("y"), kLookback);
}

TEST(RuleRequirementsTest, AnalyzeRulesCoversEveryGroupAndRule) {
  testing::TestEnv env;
  auto spec = ParseRuleFile(R"(groups:
- name: a
  query_offset: 1m
  rules:
  - record: r
    expr: avg_over_time(t[30m])
- name: b
  rules:
  - alert: A
    expr: r > 1 and on() absent(up)
)",
                            "x.yml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto groups = BuildGroups(*spec, kMin, {}, "", false, &env.deps);
  ASSERT_TRUE(groups.ok());
  RuleRequirements r = AnalyzeRules(*groups, kLookback);
  EXPECT_EQ(r.HistoryFor("t"), 31 * kMin);
  EXPECT_EQ(r.HistoryFor("r"), kLookback);
  EXPECT_TRUE(r.Needs("up"));
  EXPECT_FALSE(r.Needs("t2"));
  EXPECT_EQ(r.history_ms, 31 * kMin);
}

}  // namespace
}  // namespace gpumon::rules
