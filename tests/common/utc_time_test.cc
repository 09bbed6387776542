// UTC timestamps with Go's trimmed millisecond fraction.
#include "common/utc_time.h"

#include <gtest/gtest.h>

namespace gpumon {
namespace {

constexpr const char* kRfc3339 = "%Y-%m-%dT%H:%M:%S";

TEST(UtcTimeTest, WholeSecondsHaveNoFraction) {
  EXPECT_EQ(FormatUtcMs(0, kRfc3339), "1970-01-01T00:00:00");
  EXPECT_EQ(FormatUtcMs(1'700'000'000'000, "%Y-%m-%d %H:%M:%S"), "2023-11-14 22:13:20");
}

TEST(UtcTimeTest, FractionDropsTrailingZeros) {
  EXPECT_EQ(FormatUtcMs(1'500, kRfc3339), "1970-01-01T00:00:01.5");
  EXPECT_EQ(FormatUtcMs(1'250, kRfc3339), "1970-01-01T00:00:01.25");
  EXPECT_EQ(FormatUtcMs(1'001, kRfc3339), "1970-01-01T00:00:01.001");
  EXPECT_EQ(FormatUtcMs(1'010, kRfc3339), "1970-01-01T00:00:01.01");
}

TEST(UtcTimeTest, BeforeTheEpochRoundsSecondsDown) {
  EXPECT_EQ(FormatUtcMs(-1, kRfc3339), "1969-12-31T23:59:59.999");
  EXPECT_EQ(FormatUtcMs(-1'000, kRfc3339), "1969-12-31T23:59:59");
  EXPECT_EQ(FormatUtcMs(-1'500, kRfc3339), "1969-12-31T23:59:58.5");
}

}  // namespace
}  // namespace gpumon
