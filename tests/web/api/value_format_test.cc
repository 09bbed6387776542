#include "web/api/value_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace gpumon::web::api {
namespace {

// Expected strings are Go's strconv.FormatFloat(v, 'f'|'e', -1, 64) as
// Prometheus's jsonutil.MarshalFloat chooses the format.
TEST(FormatSampleValueTest, FixedNotationInTheMiddleRange) {
  EXPECT_EQ(FormatSampleValue(1), "1");
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(-2.5), "-2.5");
  EXPECT_EQ(FormatSampleValue(0.1), "0.1");
  EXPECT_EQ(FormatSampleValue(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(FormatSampleValue(123456789.125), "123456789.125");
  EXPECT_EQ(FormatSampleValue(0.000001), "0.000001");
  EXPECT_EQ(FormatSampleValue(1e20), "100000000000000000000");
}

// Whole numbers take a shortcut below 2^53; the text must be the same as
// the general path's (Go's shortest form).
TEST(FormatSampleValueTest, WholeNumbers) {
  EXPECT_EQ(FormatSampleValue(45), "45");
  EXPECT_EQ(FormatSampleValue(-45), "-45");
  EXPECT_EQ(FormatSampleValue(-0.0), "-0");
  EXPECT_EQ(FormatSampleValue(1e15), "1000000000000000");
  EXPECT_EQ(FormatSampleValue(9007199254740991.0), "9007199254740991");
  EXPECT_EQ(FormatSampleValue(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(FormatSampleValue(-9007199254740993.0), "-9007199254740992");
  EXPECT_EQ(FormatSampleValue(45.5), "45.5");
}

// Go pads the shortest round-trip digits with zeros rather than printing
// the exact binary value.
TEST(FormatSampleValueTest, LargeWholeNumbersUseShortestDigitsLikeGo) {
  EXPECT_EQ(FormatSampleValue(18446744073709551616.0), "18446744073709552000");
  EXPECT_EQ(FormatSampleValue(-18446744073709551616.0), "-18446744073709552000");
  EXPECT_EQ(FormatSampleValue(1e20), "100000000000000000000");
  EXPECT_EQ(FormatSampleValue(1.2345678901234568e20), "123456789012345680000");
  EXPECT_EQ(FormatSampleValue(9007199254740994.0), "9007199254740994");
  EXPECT_EQ(FormatSampleValue(9.999999999999999e20), "999999999999999900000");
}

TEST(FormatSampleValueTest, ExponentOutsideTheMiddleRange) {
  EXPECT_EQ(FormatSampleValue(1e-7), "1e-07");
  EXPECT_EQ(FormatSampleValue(-2.5e-9), "-2.5e-09");
  EXPECT_EQ(FormatSampleValue(1e21), "1e+21");
  EXPECT_EQ(FormatSampleValue(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(FormatSampleValue(5e-324), "5e-324");
}

TEST(FormatSampleValueTest, SpecialValues) {
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatSampleValue(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(FormatTimestampTest, SecondsWithMillisecondFraction) {
  EXPECT_EQ(FormatTimestamp(0), "0");
  EXPECT_EQ(FormatTimestamp(1000), "1");
  EXPECT_EQ(FormatTimestamp(1500), "1.500");
  EXPECT_EQ(FormatTimestamp(1), "0.001");
  EXPECT_EQ(FormatTimestamp(1435781451781), "1435781451.781");
  EXPECT_EQ(FormatTimestamp(1435781451010), "1435781451.010");
  EXPECT_EQ(FormatTimestamp(-1), "-0.001");
  EXPECT_EQ(FormatTimestamp(-1500), "-1.500");
  EXPECT_EQ(FormatTimestamp(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
  EXPECT_EQ(FormatTimestamp(std::numeric_limits<int64_t>::max()), "9223372036854775.807");
  // Every digit count of the seconds.
  int64_t sec = 9;
  std::string digits = "9";
  for (int n = 1; n <= 15; ++n, sec = sec * 10 + 7, digits += "7") {
    EXPECT_EQ(FormatTimestamp(sec * 1000 + 42), digits + ".042") << n;
    EXPECT_EQ(FormatTimestamp(-sec * 1000), "-" + digits) << n;
  }
  EXPECT_EQ(FormatTimestamp(10'000), "10");
  EXPECT_EQ(FormatTimestamp(100'000), "100");
}

}  // namespace
}  // namespace gpumon::web::api
