#include "sim/fleet_spec.h"

#include <gtest/gtest.h>

namespace gpumon::sim {
namespace {

TEST(FleetSpecTest, ParsesSingleModel) {
  Result<FleetSpec> spec = ParseFleetSpec("h200x8");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_EQ(spec->entries.size(), 1u);
  EXPECT_EQ(spec->entries[0].profile->key, "h200");
  EXPECT_EQ(spec->entries[0].count, 8);
  EXPECT_EQ(spec->total, 8);
}

TEST(FleetSpecTest, ParsesMixedFleetInOrder) {
  // "rtx4080s" contains an 'x' itself: the count follows the last one.
  Result<FleetSpec> spec = ParseFleetSpec("h200x4, rtx4080sx1,l40sx2");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_EQ(spec->entries.size(), 3u);
  EXPECT_EQ(spec->total, 7);
  EXPECT_EQ(spec->ProfileOf(0).key, "h200");
  EXPECT_EQ(spec->ProfileOf(3).key, "h200");
  EXPECT_EQ(spec->ProfileOf(4).key, "rtx4080s");
  EXPECT_EQ(spec->ProfileOf(5).key, "l40s");
  EXPECT_EQ(spec->ProfileOf(6).key, "l40s");
}

TEST(FleetSpecTest, BareKeyIsOneGpu) {
  Result<FleetSpec> spec = ParseFleetSpec("rtx4080s");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->total, 1);
  EXPECT_EQ(spec->entries[0].profile->key, "rtx4080s");
}

TEST(FleetSpecTest, AcceptsMaximumSize) {
  Result<FleetSpec> spec = ParseFleetSpec("h200x60000,h100x40000");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->total, kMaxFleetSize);
}

TEST(FleetSpecTest, UnknownModelNamesPartAndListsKeys) {
  Result<FleetSpec> spec = ParseFleetSpec("h200x2,b200x4");
  ASSERT_FALSE(spec.ok());
  const std::string& m = spec.status().message();
  EXPECT_NE(m.find("\"b200x4\""), std::string::npos) << m;
  EXPECT_NE(m.find("unknown model \"b200\""), std::string::npos) << m;
  for (std::string_view key : ProfileKeys()) EXPECT_NE(m.find(key), std::string::npos) << m;
}

TEST(FleetSpecTest, RejectsBadCounts) {
  for (const char* text : {"h200x0", "h200x", "h200x-1", "h200x1.5", "h200xabc", "h200x100001",
                           "h200x99999999999999999999"}) {
    Result<FleetSpec> spec = ParseFleetSpec(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_NE(spec.status().message().find(text), std::string::npos) << spec.status().message();
  }
}

TEST(FleetSpecTest, RejectsTotalAboveLimit) {
  Result<FleetSpec> spec = ParseFleetSpec("h200x60000,h100x40001");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("h100x40001"), std::string::npos);
  EXPECT_NE(spec.status().message().find("100000"), std::string::npos);
}

TEST(FleetSpecTest, RejectsEmptyParts) {
  for (const char* text : {"", "  ", "h200x1,", ",h200x1", "h200x1,,h100x1"}) {
    Result<FleetSpec> spec = ParseFleetSpec(text);
    EXPECT_FALSE(spec.ok()) << "\"" << text << "\"";
  }
}

}  // namespace
}  // namespace gpumon::sim
