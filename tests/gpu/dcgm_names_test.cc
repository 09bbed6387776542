// The native <-> DCGM mapping table derived from the catalog.
#include "gpu/dcgm_names.h"

#include <gtest/gtest.h>

#include <set>

#include "gpu/nvml_api.h"

namespace gpumon::gpu {
namespace {

TEST(DcgmNamesTest, EveryAliasOfANativeMetricIsInTheTable) {
  for (const auto& def : Catalog()) {
    if (def.name.empty() || def.scope == Scope::kAgent) continue;
    const DcgmMetricMapping* m = FindDcgmMapping(def.name);
    std::set<std::string_view> want, got;
    for (const auto& a : def.dcgm) {
      if (!a.name.empty()) want.insert(a.name);
    }
    if (m) {
      EXPECT_EQ(m->def, &def);
      for (const auto& s : m->series) got.insert(s.name);
    }
    if (def.id == Metric::kClockEventActive) {
      ASSERT_NE(m, nullptr);
      EXPECT_EQ(got, std::set<std::string_view>{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"});
      continue;
    }
    EXPECT_EQ(want, got) << def.name;
  }
  // No alias, no entry: such metrics make a rule untranslatable.
  for (std::string_view name : {"gpu_lost", "gpu_xid_errors_total", "gpu_nvlink_up",
                                "gpu_nvlink_errors_total", "gpumon_gpus", "gpumon_nvml_up"}) {
    EXPECT_EQ(FindDcgmMapping(name), nullptr) << name;
  }
}

TEST(DcgmNamesTest, AliasesSelectedByLabelValuesFixThoseLabels) {
  const DcgmMetricMapping* ecc = FindDcgmMapping("gpu_ecc_errors_total");
  ASSERT_NE(ecc, nullptr);
  EXPECT_TRUE(ecc->complete);
  ASSERT_EQ(ecc->series.size(), 4u);
  bool found = false;
  for (const auto& s : ecc->series) {
    if (s.name != "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL") continue;
    found = true;
    using P = std::pair<std::string_view, std::string_view>;
    EXPECT_EQ(s.fixed, (std::vector<P>{{"error_type", "uncorrected"}, {"scope", "volatile"}}));
    EXPECT_EQ(s.scale, 1);
  }
  EXPECT_TRUE(found);
  const DcgmMetricMapping* events = FindDcgmMapping("gpu_clock_event_duration_seconds_total");
  ASSERT_NE(events, nullptr);
  EXPECT_FALSE(events->complete) << "only two of the reasons have DCGM counters";
  for (const auto& s : events->series) EXPECT_EQ(s.scale, 1e6) << s.name;  // microseconds
  const DcgmMetricMapping* fan = FindDcgmMapping("gpu_fan_speed_ratio");
  ASSERT_NE(fan, nullptr);
  EXPECT_FALSE(fan->complete);
  const DcgmMetricMapping* util = FindDcgmMapping("gpu_utilization_ratio");
  ASSERT_NE(util, nullptr);
  EXPECT_TRUE(util->complete);
  ASSERT_EQ(util->series.size(), 1u);
  EXPECT_EQ(util->series[0].name, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(util->series[0].scale, 100);
  EXPECT_TRUE(util->series[0].fixed.empty());
}

TEST(DcgmNamesTest, ClockEventReasonsAreBitsOfTheMask) {
  const DcgmMetricMapping* m = FindDcgmMapping("gpu_clock_event_reason_active");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->complete);
  ASSERT_EQ(m->series.size(), ClockEventReasons().size());
  uint64_t all = 0;
  for (size_t i = 0; i < m->series.size(); ++i) {
    const auto& s = m->series[i];
    ASSERT_EQ(s.fixed.size(), 1u);
    EXPECT_EQ(s.fixed[0].first, "reason");
    EXPECT_EQ(s.fixed[0].second, ClockEventReasons()[i].name);
    EXPECT_EQ(s.bit, ClockEventReasons()[i].bit);
    EXPECT_EQ(s.bit & (s.bit - 1), 0u) << "one bit each";
    EXPECT_EQ(all & s.bit, 0u) << "distinct bits";
    all |= s.bit;
  }
  EXPECT_EQ(all & nvmlClocksEventReasonSwThermalSlowdown, nvmlClocksEventReasonSwThermalSlowdown);
}

TEST(DcgmNamesTest, SharedFramebufferNamesAreToldApartByTheMigLabel) {
  const DcgmMetricMapping* whole = FindDcgmMapping("gpu_memory_used_bytes");
  const DcgmMetricMapping* mig = FindDcgmMapping("gpu_mig_memory_used_bytes");
  ASSERT_NE(whole, nullptr);
  ASSERT_NE(mig, nullptr);
  ASSERT_EQ(whole->series.size(), 1u);
  ASSERT_EQ(mig->series.size(), 1u);
  EXPECT_EQ(whole->series[0].name, mig->series[0].name);
  ASSERT_EQ(whole->series[0].conditions.size(), 1u);
  ASSERT_EQ(mig->series[0].conditions.size(), 1u);
  EXPECT_EQ(whole->series[0].conditions[0].label, "GPU_I_ID");
  EXPECT_FALSE(whole->series[0].conditions[0].present);
  EXPECT_TRUE(mig->series[0].conditions[0].present);
  // Names used once need no condition.
  EXPECT_TRUE(FindDcgmMapping("gpu_temperature_celsius")->series[0].conditions.empty());
}

TEST(DcgmNamesTest, LabelNames) {
  std::set<std::pair<std::string_view, std::string_view>> got;
  for (const auto& p : DcgmLabelNames()) got.insert({p.native, p.dcgm});
  EXPECT_TRUE(got.count({"hostname", "Hostname"}));
  EXPECT_TRUE(got.count({"uuid", "UUID"}));
  EXPECT_TRUE(got.count({"model", "modelName"}));
  EXPECT_TRUE(got.count({"gpu_instance_id", "GPU_I_ID"}));
  for (const auto& p : DcgmLabelNames()) {
    for (auto only : NativeOnlyLabels()) EXPECT_NE(p.native, only);
  }
}

}  // namespace
}  // namespace gpumon::gpu
