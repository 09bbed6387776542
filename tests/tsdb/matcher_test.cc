#include "tsdb/matcher.h"

#include <gtest/gtest.h>

namespace gpumon::tsdb {
namespace {

Matcher M(MatchType t, const char* name, const char* value) {
  auto m = Matcher::Make(t, name, value);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

TEST(MatcherTest, EqualityAndInequality) {
  Labels l{{"__name__", "up"}, {"job", "gpu"}};
  EXPECT_TRUE(M(MatchType::kEqual, "job", "gpu").Matches(l));
  EXPECT_FALSE(M(MatchType::kEqual, "job", "gp").Matches(l));
  EXPECT_TRUE(M(MatchType::kNotEqual, "job", "node").Matches(l));
  // A missing label is the empty string.
  EXPECT_TRUE(M(MatchType::kEqual, "instance", "").Matches(l));
  EXPECT_FALSE(M(MatchType::kNotEqual, "instance", "").Matches(l));
}

TEST(MatcherTest, RegexesAreAnchoredAndUseRe2Syntax) {
  EXPECT_TRUE(M(MatchType::kRegexMatch, "a", "gpu.*").Matches("gpu_temp"));
  EXPECT_FALSE(M(MatchType::kRegexMatch, "a", "gpu").Matches("gpu_temp"));
  EXPECT_FALSE(M(MatchType::kRegexMatch, "a", "temp").Matches("gpu_temp"));
  EXPECT_TRUE(M(MatchType::kRegexMatch, "a", "a|b").Matches("b"));
  EXPECT_TRUE(M(MatchType::kRegexNoMatch, "a", "a|b").Matches("c"));
  EXPECT_TRUE(M(MatchType::kRegexMatch, "a", ".*").MatchesEmpty());
  EXPECT_FALSE(M(MatchType::kRegexMatch, "a", ".+").MatchesEmpty());
  EXPECT_TRUE(M(MatchType::kRegexMatch, "a", "a.b").Matches("a\nb"));  // (?s)
  EXPECT_TRUE(M(MatchType::kRegexMatch, "a", "(?i)GPU").Matches("gpu"));
}

TEST(MatcherTest, BadRegexIsAnError) {
  auto m = Matcher::Make(MatchType::kRegexMatch, "a", "(unclosed");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("(unclosed"), std::string::npos);
}

TEST(MatcherTest, Prints) {
  EXPECT_EQ(M(MatchType::kRegexNoMatch, "job", "a\"b").ToString(), "job!~\"a\\\"b\"");
}

}  // namespace
}  // namespace gpumon::tsdb
