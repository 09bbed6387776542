#include "promql/promqltest/duration.h"

#include <gtest/gtest.h>

namespace gpumon::promql::promqltest {
namespace {

TEST(ScriptDurationTest, ParsesUnitsInOrder) {
  EXPECT_EQ(ParseScriptDuration("0").value(), 0);
  EXPECT_EQ(ParseScriptDuration("1m").value(), 60'000);
  EXPECT_EQ(ParseScriptDuration("10s53ms").value(), 10'053);
  EXPECT_EQ(ParseScriptDuration("1h30m").value(), 5'400'000);
  EXPECT_EQ(ParseScriptDuration("2d").value(), 2LL * 86'400'000);
  EXPECT_EQ(ParseScriptDuration("1w").value(), 7LL * 86'400'000);
  EXPECT_EQ(ParseScriptDuration("1y").value(), 365LL * 86'400'000);
  EXPECT_EQ(ParseScriptDuration("5ms").value(), 5);
}

TEST(ScriptDurationTest, RejectsMalformed) {
  EXPECT_FALSE(ParseScriptDuration("").ok());
  EXPECT_FALSE(ParseScriptDuration("1").ok());      // no unit
  EXPECT_FALSE(ParseScriptDuration("30m1h").ok());  // out of order
  EXPECT_FALSE(ParseScriptDuration("1m1m").ok());   // repeated
  EXPECT_FALSE(ParseScriptDuration("-1m").ok());
  EXPECT_FALSE(ParseScriptDuration("1.5m").ok());
  EXPECT_FALSE(ParseScriptDuration("1q").ok());
  EXPECT_FALSE(ParseScriptDuration("99999999999999999999y").ok());
}

}  // namespace
}  // namespace gpumon::promql::promqltest
