#include "promql/promqltest/script.h"

#include <gtest/gtest.h>

namespace gpumon::promql::promqltest {
namespace {

template <typename T>
const T& As(const Script& s, size_t i) {
  EXPECT_LT(i, s.commands.size());
  EXPECT_TRUE(std::holds_alternative<T>(s.commands[i])) << "command " << i;
  return std::get<T>(s.commands[i]);
}

TEST(ScriptTest, LoadClearAndEvalWithLines) {
  Script s = ParseScript(R"(# comment
load 5m
  http_requests{job="api"} 0+10x10
  http_requests{job="db"} 1 _ stale

eval instant at 50m http_requests
  http_requests{job="api"} 100
  http_requests{job="db"} 1

clear
eval range from 0 to 10m step 5m sum(http_requests)
  {} 1 2 _
)",
                         "x.test");
  EXPECT_EQ(s.file, "x.test");
  ASSERT_EQ(s.commands.size(), 4u);
  const auto& load = As<LoadCommand>(s, 0);
  EXPECT_EQ(load.line, 2);
  EXPECT_EQ(load.interval_ms, 300'000);
  EXPECT_FALSE(load.with_nhcb);
  ASSERT_EQ(load.series.size(), 2u);
  EXPECT_EQ(load.series[0].metric, R"(http_requests{job="api"})");
  EXPECT_EQ(load.series[0].values.size(), 11u);
  EXPECT_EQ(load.series[1].line, 4);
  EXPECT_TRUE(load.series[1].values[1].omitted);

  const auto& inst = As<EvalCommand>(s, 1);
  EXPECT_EQ(inst.line, 6);
  EXPECT_FALSE(inst.is_range);
  EXPECT_EQ(inst.eval_ms, 50 * 60'000);
  EXPECT_EQ(inst.query, "http_requests");
  ASSERT_EQ(inst.expected.size(), 2u);
  EXPECT_EQ(inst.expected[1].values[0].value, 1);
  EXPECT_FALSE(inst.exclude_from_range_query);

  EXPECT_EQ(As<ClearCommand>(s, 2).line, 10);

  const auto& range = As<EvalCommand>(s, 3);
  EXPECT_TRUE(range.is_range);
  EXPECT_EQ(range.start_ms, 0);
  EXPECT_EQ(range.end_ms, 600'000);
  EXPECT_EQ(range.step_ms, 300'000);
  EXPECT_EQ(range.query, "sum(http_requests)");
  ASSERT_EQ(range.expected.size(), 1u);
  EXPECT_EQ(range.expected[0].metric, "{}");
  EXPECT_TRUE(range.expected[0].values[2].omitted);
}

TEST(ScriptTest, ExpectLines) {
  Script s = ParseScript(R"(eval instant at 1m sum by (env) (my_metric)
    expect warn msg: something went wrong
    expect info regex: something went (wrong|boom)
    expect ordered
    {env="prod"} 5

eval instant at 1m ceil(x)
  expect fail regex: vector cannot contain metrics .*

eval instant at 50m ("Foo")
  expect string "Fo\"o"

eval instant at 1m some_metric[1m]
  expect range vector from 10s to 1m step 10s
  some_metric{env="a"} 2 3 4 5 6
)",
                         "e.test");
  ASSERT_EQ(s.commands.size(), 4u);
  const auto& a = As<EvalCommand>(s, 0);
  ASSERT_EQ(a.expects.size(), 3u);
  EXPECT_EQ(a.expects[0].type, ExpectType::kWarn);
  EXPECT_EQ(a.expects[0].match, Expectation::Match::kMessage);
  EXPECT_EQ(a.expects[0].text, "something went wrong");
  EXPECT_EQ(a.expects[1].type, ExpectType::kInfo);
  EXPECT_EQ(a.expects[1].match, Expectation::Match::kRegex);
  EXPECT_EQ(a.expects[2].match, Expectation::Match::kAny);
  EXPECT_TRUE(a.IsOrdered());
  EXPECT_FALSE(a.IsFail());

  const auto& b = As<EvalCommand>(s, 1);
  EXPECT_TRUE(b.IsFail());
  EXPECT_TRUE(b.expected.empty());

  const auto& c = As<EvalCommand>(s, 2);
  ASSERT_TRUE(c.expected_string.has_value());
  EXPECT_EQ(*c.expected_string, "Fo\"o");
  EXPECT_TRUE(c.exclude_from_range_query);

  const auto& d = As<EvalCommand>(s, 3);
  EXPECT_TRUE(d.expect_range_vector);
  EXPECT_EQ(d.start_ms, 10'000);
  EXPECT_EQ(d.end_ms, 60'000);
  EXPECT_EQ(d.step_ms, 10'000);
  EXPECT_EQ(d.eval_ms, 60'000);
  EXPECT_EQ(d.expected[0].values.size(), 5u);
}

TEST(ScriptTest, DeprecatedFormsAndScalar) {
  Script s = ParseScript(R"(eval_fail instant at 0 label_replace(x, "a", "b", "c", ".*")
  expected_fail_message vector cannot contain metrics with the same labelset

eval_ordered instant at 1m topk(2, x)
  x{a="1"} 3

eval_warn range from 0 to 1m step 1m x

eval instant at 5m scalar(x)
  3.5
)",
                         "d.test");
  ASSERT_EQ(s.commands.size(), 4u);
  const auto& a = As<EvalCommand>(s, 0);
  EXPECT_TRUE(a.IsFail());
  EXPECT_EQ(a.expected_fail_message, "vector cannot contain metrics with the same labelset");
  EXPECT_TRUE(As<EvalCommand>(s, 1).IsOrdered());
  EXPECT_TRUE(As<EvalCommand>(s, 2).warn);
  EXPECT_TRUE(As<EvalCommand>(s, 2).is_range);
  EXPECT_EQ(As<EvalCommand>(s, 3).expected_scalar, 3.5);
}

TEST(ScriptTest, HistogramsAreFlagged) {
  Script s = ParseScript(R"(load_with_nhcb 5m
  foo_bucket{le="1"} 1+1x2
  h {{schema:0 sum:1 count:1}}x2

eval instant at 5m h
  h {{schema:0 sum:1 count:1}}
)",
                         "h.test");
  ASSERT_EQ(s.commands.size(), 2u);
  const auto& load = As<LoadCommand>(s, 0);
  EXPECT_TRUE(load.with_nhcb);
  EXPECT_FALSE(load.series[0].histogram);
  EXPECT_TRUE(load.series[1].histogram);
  EXPECT_TRUE(As<EvalCommand>(s, 1).ExpectsHistogram());
}

TEST(ScriptTest, ErrorsNameTheLineAndParsingResumes) {
  Script s = ParseScript(R"(load 5m
  foo 1 2

bogus command here
  with a continuation

eval instant at 1m foo
  foo 1 2

eval instant at 1x foo

eval instant at 1m foo
  expect warn
  expect no_warn

eval instant at 1m foo
  foo 1
)",
                         "bad.test");
  ASSERT_EQ(s.commands.size(), 6u);
  EXPECT_EQ(As<ErrorCommand>(s, 1).line, 4);
  const auto& multi = As<ErrorCommand>(s, 2);
  EXPECT_EQ(multi.line, 8);
  EXPECT_NE(multi.message.find("multiple values"), std::string::npos);
  EXPECT_EQ(As<ErrorCommand>(s, 3).line, 10);
  EXPECT_EQ(As<ErrorCommand>(s, 4).line, 14);
  EXPECT_EQ(As<EvalCommand>(s, 5).line, 16);
}

TEST(ScriptTest, CommentLineEndsABlock) {
  Script s = ParseScript("load 1m\n  a 1\n# note\n  b 2\n", "c.test");
  ASSERT_EQ(s.commands.size(), 2u);
  EXPECT_EQ(As<LoadCommand>(s, 0).series.size(), 1u);
  EXPECT_EQ(As<ErrorCommand>(s, 1).line, 4);
}

}  // namespace
}  // namespace gpumon::promql::promqltest
