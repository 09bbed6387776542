#include "promql/promqltest/series_values.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tsdb/sample.h"

namespace gpumon::promql::promqltest {
namespace {

std::vector<double> Floats(std::string_view text) {
  Result<SeriesValues> r = ExpandSeriesValues(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  std::vector<double> out;
  if (!r.ok()) return out;
  for (const SequenceValue& v : r->values) out.push_back(v.omitted ? -12345 : v.value);
  return out;
}

TEST(SeriesValuesTest, ExpandsIncrementsAndRepeats) {
  EXPECT_EQ(Floats("1+2x3"), (std::vector<double>{1, 3, 5, 7}));
  EXPECT_EQ(Floats("10-2x2"), (std::vector<double>{10, 8, 6}));
  EXPECT_EQ(Floats("5x2"), (std::vector<double>{5, 5, 5}));
  EXPECT_EQ(Floats("-1-1x2"), (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ(Floats("1 2  3"), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(Floats("0+10x0"), (std::vector<double>{0}));
  EXPECT_EQ(Floats("1e3 1.5e-1 .5"), (std::vector<double>{1000, 0.15, 0.5}));
  EXPECT_EQ(Floats("1e2+1e1x1"), (std::vector<double>{100, 110}));
  EXPECT_EQ(Floats(""), std::vector<double>{});
}

TEST(SeriesValuesTest, AccumulatesStepsLikePrometheus) {
  // 0.1 added repeatedly differs from 0 + k*0.1 in the last bits.
  Result<SeriesValues> r = ExpandSeriesValues("0+0.1x3");
  ASSERT_TRUE(r.ok());
  double acc = 0;
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(r->values[k].value, acc);
    acc += 0.1;
  }
  EXPECT_NE(r->values[3].value, 0.3);
}

TEST(SeriesValuesTest, OmittedPoints) {
  Result<SeriesValues> r = ExpandSeriesValues("1 _ _x3 2");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->values.size(), 6u);
  EXPECT_FALSE(r->values[0].omitted);
  for (int k = 1; k <= 4; ++k) EXPECT_TRUE(r->values[k].omitted) << k;
  EXPECT_EQ(r->values[5].value, 2);
}

TEST(SeriesValuesTest, SpecialValues) {
  Result<SeriesValues> r = ExpandSeriesValues("stale Inf -Inf NaN +inf nan");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->values.size(), 6u);
  EXPECT_TRUE(tsdb::IsStaleNaN(r->values[0].value));
  EXPECT_EQ(r->values[1].value, INFINITY);
  EXPECT_EQ(r->values[2].value, -INFINITY);
  EXPECT_TRUE(std::isnan(r->values[3].value));
  EXPECT_FALSE(tsdb::IsStaleNaN(r->values[3].value));
  EXPECT_EQ(r->values[4].value, INFINITY);
  EXPECT_TRUE(std::isnan(r->values[5].value));
}

TEST(SeriesValuesTest, HistogramNotationIsFlaggedNotExpanded) {
  Result<SeriesValues> r = ExpandSeriesValues("1 {{schema:1 sum:3 count:22 buckets:[5 10 7]}}x2");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->histogram);
  EXPECT_TRUE(r->values.empty());
}

TEST(SeriesValuesTest, RejectsMalformedItems) {
  for (const char* bad :
       {"abc", "1x", "1+2", "1+2x", "_y", "1x-2", "1m", "1..2", "-stale", "1+x3"}) {
    EXPECT_FALSE(ExpandSeriesValues(bad).ok()) << bad;
  }
}

TEST(SeriesLineTest, SplitsMetricAndValues) {
  Result<SeriesLineParts> p = SplitSeriesLine(R"(foo{a="x y}", b='}'} 1 2+1x3)");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->metric, R"(foo{a="x y}", b='}'})");
  EXPECT_EQ(p->values, "1 2+1x3");

  p = SplitSeriesLine("up 1");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->metric, "up");
  EXPECT_EQ(p->values, "1");

  p = SplitSeriesLine(R"({} 3)");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->metric, "{}");

  p = SplitSeriesLine(R"({"my.metric", a="b"} 3)");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->metric, R"({"my.metric", a="b"})");

  p = SplitSeriesLine("foo {{schema:0 sum:1}}");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->metric, "foo");
  EXPECT_EQ(p->values, "{{schema:0 sum:1}}");

  EXPECT_FALSE(SplitSeriesLine(R"(foo{a="b" 1)").ok());
  EXPECT_FALSE(SplitSeriesLine("1foo 2").ok());
}

TEST(ScriptNumberTest, ReadsGoNumbers) {
  EXPECT_EQ(*ParseScriptNumber("3"), 3);
  EXPECT_EQ(*ParseScriptNumber("-2.5"), -2.5);
  EXPECT_EQ(*ParseScriptNumber("0x10"), 16);
  EXPECT_EQ(*ParseScriptNumber("1e3"), 1000);
  EXPECT_EQ(*ParseScriptNumber("+Inf"), INFINITY);
  EXPECT_TRUE(std::isnan(*ParseScriptNumber("NaN")));
  EXPECT_FALSE(ParseScriptNumber("foo").has_value());
  EXPECT_FALSE(ParseScriptNumber("{} 3").has_value());
  EXPECT_FALSE(ParseScriptNumber("1 2").has_value());
}

}  // namespace
}  // namespace gpumon::promql::promqltest
