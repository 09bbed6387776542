#include "sim/profile.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace gpumon::sim {
namespace {

TEST(ProfileTest, FindsEveryListedKey) {
  std::vector<std::string_view> keys = ProfileKeys();
  for (std::string_view key : {"h200", "h200mig", "h100", "l40s", "rtx4080s"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  std::set<std::string_view> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size());
  for (std::string_view key : keys) {
    const GpuProfile* p = FindProfile(key);
    ASSERT_NE(p, nullptr) << key;
    EXPECT_EQ(p->key, key);
  }
}

TEST(ProfileTest, UnknownKeyIsNull) {
  EXPECT_EQ(FindProfile("h300"), nullptr);
  EXPECT_EQ(FindProfile(""), nullptr);
  EXPECT_EQ(FindProfile("H200"), nullptr);
}

TEST(ProfileTest, H200CalibrationIsSane) {
  const GpuProfile* p = FindProfile("h200");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "NVIDIA H200");
  EXPECT_GE(p->idle_power_w, 60);
  EXPECT_LE(p->idle_power_w, 100);
  EXPECT_NEAR(p->load_power_w, 627, 40);
  EXPECT_EQ(p->power_limit_default_w, 700u);
  EXPECT_EQ(p->power_limit_max_w, 700u);
  EXPECT_EQ(p->power_limit_min_w, 200u);
  EXPECT_EQ(p->max_sm_mhz, 1980u);
  EXPECT_EQ(p->idle_sm_mhz, 345u);
  EXPECT_EQ(p->pcie_max_gen, 5);
  EXPECT_GT(p->memory_total_bytes, 140ULL << 30);
  EXPECT_LT(p->memory_reserved_bytes, p->memory_total_bytes / 100);
  // Steady-state die temperature at the reading's load power: 52 C.
  EXPECT_NEAR(p->ambient_c + p->die_c_per_w * 627.4, 52, 2);
  EXPECT_NEAR(p->ambient_c + p->die_c_per_w * 77.7, 28, 2);
  EXPECT_GE(p->ambient_c, 20);
  EXPECT_LE(p->ambient_c, 30);
}

TEST(ProfileTest, CapabilitiesPerModel) {
  const GpuProfile& h200 = *FindProfile("h200");
  EXPECT_TRUE(h200.has_memory_temperature);
  EXPECT_EQ(h200.nvlink_links, 18);
  EXPECT_TRUE(h200.has_ecc);
  EXPECT_TRUE(h200.has_row_remapping);
  EXPECT_FALSE(h200.has_retired_pages);
  EXPECT_EQ(h200.num_fans, 0);
  EXPECT_TRUE(h200.has_power_instant);
  EXPECT_TRUE(h200.has_energy);
  EXPECT_TRUE(h200.has_clock_event_counters);
  EXPECT_TRUE(h200.has_pcie_byte_counters);
  EXPECT_TRUE(h200.has_mig);
  EXPECT_EQ(h200.mig_instances, 0);

  const GpuProfile& h100 = *FindProfile("h100");
  EXPECT_EQ(h100.name, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(h100.has_memory_temperature);
  EXPECT_EQ(h100.nvlink_links, 18);

  const GpuProfile& l40s = *FindProfile("l40s");
  EXPECT_FALSE(l40s.has_memory_temperature);
  EXPECT_EQ(l40s.nvlink_links, 0);
  EXPECT_TRUE(l40s.has_ecc);
  EXPECT_TRUE(l40s.has_row_remapping);
  EXPECT_EQ(l40s.num_fans, 0);
  EXPECT_FALSE(l40s.has_mig);

  const GpuProfile& rtx = *FindProfile("rtx4080s");
  EXPECT_EQ(rtx.name, "NVIDIA GeForce RTX 4080 SUPER");
  EXPECT_FALSE(rtx.has_memory_temperature);
  EXPECT_EQ(rtx.nvlink_links, 0);
  EXPECT_FALSE(rtx.has_ecc);
  EXPECT_FALSE(rtx.has_row_remapping);
  EXPECT_FALSE(rtx.has_retired_pages);
  EXPECT_EQ(rtx.num_fans, 2);
  // As in the real card's readings.
  EXPECT_TRUE(rtx.has_power_instant);
  EXPECT_TRUE(rtx.has_clock_event_counters);
  EXPECT_FALSE(rtx.has_mig);
}

TEST(ProfileTest, MigVariantDiffersOnlyInMig) {
  const GpuProfile& h200 = *FindProfile("h200");
  const GpuProfile& mig = *FindProfile("h200mig");
  EXPECT_EQ(mig.name, h200.name);
  EXPECT_EQ(mig.memory_total_bytes, h200.memory_total_bytes);
  EXPECT_EQ(mig.mig_instances, 2);
  EXPECT_EQ(mig.mig_profile_name, "3g.71gb");
  EXPECT_LE(mig.mig_instance_memory_bytes * mig.mig_instances,
            mig.memory_total_bytes - mig.memory_reserved_bytes);
  EXPECT_LE(mig.mig_instances, mig.max_mig_devices);
}

TEST(ProfileTest, ClockAccessorsMatchFields) {
  for (std::string_view key : ProfileKeys()) {
    const GpuProfile& p = *FindProfile(key);
    EXPECT_EQ(MaxClockMhz(p, ClockDomain::kSm), p.max_sm_mhz);
    EXPECT_EQ(MaxClockMhz(p, ClockDomain::kMemory), p.max_memory_mhz);
    EXPECT_EQ(IdleClockMhz(p, ClockDomain::kVideo), p.idle_video_mhz);
    for (ClockDomain d :
         {ClockDomain::kGraphics, ClockDomain::kSm, ClockDomain::kMemory, ClockDomain::kVideo}) {
      EXPECT_GT(IdleClockMhz(p, d), 0u) << key;
      EXPECT_LE(IdleClockMhz(p, d), MaxClockMhz(p, d)) << key;
    }
    EXPECT_LT(p.idle_power_w, p.load_power_w) << key;
    EXPECT_LE(p.load_power_w, p.power_limit_default_w) << key;
    EXPECT_LE(p.power_limit_min_w, p.power_limit_default_w) << key;
    EXPECT_LE(p.power_limit_default_w, p.power_limit_max_w) << key;
    EXPECT_LT(p.gpu_max_operating_temp_c, p.slowdown_temp_c) << key;
    EXPECT_LT(p.slowdown_temp_c, p.shutdown_temp_c) << key;
    EXPECT_EQ(p.memory_max_operating_temp_c > 0, p.has_memory_temperature) << key;
  }
}

}  // namespace
}  // namespace gpumon::sim
