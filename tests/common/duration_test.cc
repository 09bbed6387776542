#include "common/duration.h"

#include <gtest/gtest.h>

namespace gpumon {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, ParsesPrometheusDurations) {
  EXPECT_EQ(ParseDuration("1s").value(), milliseconds(1000));
  EXPECT_EQ(ParseDuration("250ms").value(), milliseconds(250));
  EXPECT_EQ(ParseDuration("1m30s").value(), milliseconds(90000));
  EXPECT_EQ(ParseDuration("2h").value(), milliseconds(7200000));
  EXPECT_EQ(ParseDuration("1d").value(), milliseconds(86400000));
  EXPECT_EQ(ParseDuration("0s").value(), milliseconds(0));
}

TEST(DurationTest, RejectsBadInput) {
  for (const char* bad : {"", "s", "1", "1x", "1s1m", "-1s", "1.5s", "1ss"}) {
    auto r = ParseDuration(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("invalid duration"), std::string::npos);
    }
  }
}

// Values past int64 milliseconds are errors, not a wrapped (UB) total:
// 9999999999y fits the digit limit but not the product.
TEST(DurationTest, RejectsOverflow) {
  EXPECT_FALSE(ParseDuration("9999999999y").ok());
  // The largest whole number of years, then one millisecond past int64.
  EXPECT_TRUE(ParseDuration("292471208y21366775807ms").ok());
  EXPECT_FALSE(ParseDuration("292471208y21366775808ms").ok());
}

TEST(DurationTest, FormatRoundTrips) {
  for (int64_t ms : {0, 1, 999, 1000, 61000, 90000, 3600000, 90061001}) {
    auto text = FormatDuration(milliseconds(ms));
    EXPECT_EQ(ParseDuration(text).value(), milliseconds(ms)) << text;
  }
  EXPECT_EQ(FormatDuration(milliseconds(90000)), "1m30s");
}

}  // namespace
}  // namespace gpumon
