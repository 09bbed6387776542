#include "promql/promqltest/at_variants.h"

#include <gtest/gtest.h>

#include "promql/parser.h"
#include "promql/printer.h"

namespace gpumon::promql::promqltest {
namespace {

ExprPtr MustParse(const std::string& q) {
  ParseResult r = Parse(q);
  EXPECT_TRUE(r.ok()) << q << ": " << (r.ok() ? "" : r.error->ToString());
  return std::move(r.expr);
}

// Every selector in the printed variant carries `@` at the eval time.
TEST(AtVariantsTest, PinsSelectorsAndUsesPrometheusTimes) {
  ExprPtr e = MustParse("sum(rate(foo[5m])) + bar");
  std::vector<AtVariant> v = AtModifierVariants(*e, 600'000);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].eval_ms, -6'000'000);
  EXPECT_EQ(v[1].eval_ms, 0);
  EXPECT_EQ(v[2].eval_ms, 120'000);
  EXPECT_EQ(v[3].eval_ms, 600'000);
  EXPECT_EQ(v[4].eval_ms, 6'000'000);
  ExprPtr pinned = MustParse(v[0].query);
  ASSERT_TRUE(pinned);
  int selectors = 0;
  ForEachVectorSelector(*pinned, [&](const VectorSelector& vs) {
    ++selectors;
    EXPECT_EQ(vs.at, AtModifier::kTimestamp);
    EXPECT_EQ(vs.at_ms, 600'000);
  });
  EXPECT_EQ(selectors, 2);
}

TEST(AtVariantsTest, ZeroTimeUsesPlusMinusOneSecond) {
  ExprPtr e = MustParse("foo");
  std::vector<AtVariant> v = AtModifierVariants(*e, 0);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].eval_ms, -1000);
  EXPECT_EQ(v[1].eval_ms, 0);
  EXPECT_EQ(v[2].eval_ms, 1000);
}

TEST(AtVariantsTest, KeepsExplicitTimestampsAndStopsBelowPinnedSubqueries) {
  ExprPtr e = MustParse("foo @ 100 + max_over_time(bar[5m:1m])");
  std::vector<AtVariant> v = AtModifierVariants(*e, 60'000);
  ASSERT_FALSE(v.empty());
  ExprPtr pinned = MustParse(v[0].query);
  ASSERT_TRUE(pinned);
  std::vector<int64_t> at;
  ForEachVectorSelector(*pinned, [&](const VectorSelector& vs) {
    at.push_back(vs.at == AtModifier::kTimestamp ? vs.at_ms : -1);
  });
  // foo keeps @ 100; bar sits below the subquery, which got the @ instead.
  EXPECT_EQ(at, (std::vector<int64_t>{100'000, -1}));
}

TEST(AtVariantsTest, NoVariantsForTimeDependentFunctions) {
  EXPECT_TRUE(AtModifierVariants(*MustParse("time()"), 60'000).empty());
  EXPECT_TRUE(AtModifierVariants(*MustParse("timestamp(foo)"), 60'000).empty());
  EXPECT_TRUE(AtModifierVariants(*MustParse("hour(foo)"), 60'000).empty());
  EXPECT_FALSE(AtModifierVariants(*MustParse("abs(foo)"), 60'000).empty());
}

}  // namespace
}  // namespace gpumon::promql::promqltest
