#include "web/api/params.h"

#include <gtest/gtest.h>

namespace gpumon::web::api {
namespace {

TEST(ParamsTest, DecodesUrlEncoding) {
  EXPECT_EQ(UrlDecode("%7Bjob%3D%22a%22%7D+x"), "{job=\"a\"} x");
  EXPECT_EQ(UrlDecode("100%"), "100%");  // malformed escape stays
  EXPECT_EQ(UrlDecode("a%2"), "a%2");
}

TEST(ParamsTest, BodyValuesComeBeforeQueryValues) {
  Params p = Params::FromRequest("query=up&match[]=b", "application/x-www-form-urlencoded",
                                 "query=sum(x)&match%5B%5D=a&empty=");
  EXPECT_EQ(p.Get("query"), "sum(x)");
  EXPECT_EQ(p.GetAll("match[]"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(p.Has("empty"));
  EXPECT_EQ(p.Get("empty"), "");
  EXPECT_FALSE(p.Has("time"));
  EXPECT_EQ(p.Get("time"), "");
}

TEST(ParamsTest, BodyIgnoredUnlessFormEncoded) {
  Params p = Params::FromRequest("a=1", "application/json", "a=2");
  EXPECT_EQ(p.GetAll("a"), std::vector<std::string>{"1"});
}

TEST(ParseTimeTest, FloatSeconds) {
  EXPECT_EQ(ParseTime("0").value(), 0);
  EXPECT_EQ(ParseTime("1.5").value(), 1500);
  EXPECT_EQ(ParseTime("1435781451.781").value(), 1435781451781);
  EXPECT_EQ(ParseTime("-1.5").value(), -1500);
  EXPECT_EQ(ParseTime("1e3").value(), 1000000);
  EXPECT_EQ(ParseTime("1.0004").value(), 1000);  // rounded to ms
}

TEST(ParseTimeTest, Rfc3339) {
  EXPECT_EQ(ParseTime("2015-07-01T20:10:51.781Z").value(), 1435781451781);
  EXPECT_EQ(ParseTime("2015-07-01T20:10:51Z").value(), 1435781451000);
  EXPECT_EQ(ParseTime("2015-07-01T22:10:51.781+02:00").value(), 1435781451781);
  EXPECT_EQ(ParseTime("2015-07-01T19:10:51.781-01:00").value(), 1435781451781);
  EXPECT_EQ(ParseTime("1970-01-01T00:00:00Z").value(), 0);
  EXPECT_EQ(ParseTime("2024-02-29T00:00:00Z").value(), 1709164800000);
  EXPECT_EQ(ParseTime("-292273086-05-16T16:47:06Z").value(), kMinTimeMs);
  EXPECT_EQ(ParseTime("292277025-08-18T07:12:54.999999999Z").value(), kMaxTimeMs);
}

TEST(ParseTimeTest, RejectsWithPrometheusMessage) {
  for (const char* bad : {"abc", "", "2015-07-01", "2015-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
                          "2015-07-01T20:10:51", " 1"}) {
    auto r = ParseTime(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(),
              std::string("cannot parse \"") + bad + "\" to a valid timestamp");
  }
}

TEST(ParseDurationTest, FloatSecondsOrPrometheusDuration) {
  EXPECT_EQ(ParseDuration("15").value(), 15000);
  EXPECT_EQ(ParseDuration("1.5").value(), 1500);
  EXPECT_EQ(ParseDuration("5m").value(), 300000);
  EXPECT_EQ(ParseDuration("1h30m").value(), 5400000);
  EXPECT_EQ(ParseDuration("250ms").value(), 250);
  EXPECT_EQ(ParseDuration("-1").value(), -1000);
  auto bad = ParseDuration("5 minutes");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "cannot parse \"5 minutes\" to a valid duration");
  auto huge = ParseDuration("1e300");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(),
            "cannot parse \"1e300\" to a valid duration. It overflows int64");
  // 2^63 ns exactly is one past the largest duration (and no valid cast).
  EXPECT_FALSE(ParseDuration("9223372036.854775808").ok());
  EXPECT_TRUE(ParseDuration("9223372036").ok());
  EXPECT_FALSE(ParseDuration("inf").ok());
  EXPECT_FALSE(ParseDuration("nan").ok());
}

TEST(ParseLimitTest, NonNegativeIntegers) {
  EXPECT_EQ(ParseLimit("").value(), 0);
  EXPECT_EQ(ParseLimit("10").value(), 10);
  EXPECT_EQ(ParseLimit("-1").status().message(), "limit must be non-negative");
  EXPECT_EQ(ParseLimit("x").status().message(), "strconv.Atoi: parsing \"x\": invalid syntax");
  EXPECT_EQ(ParseLimit("1.5").status().message(), "strconv.Atoi: parsing \"1.5\": invalid syntax");
}

TEST(FormatRfc3339Test, UtcWithMilliseconds) {
  EXPECT_EQ(FormatRfc3339(1435781451781), "2015-07-01T20:10:51.781Z");
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(ParseTime(FormatRfc3339(1709164800123)).value(), 1709164800123);
}

}  // namespace
}  // namespace gpumon::web::api
