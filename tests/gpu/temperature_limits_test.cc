// The GPU's own limits in the collector, against a scripted NVML: absolute
// thresholds first, the T.Limit fields (anchored by temperature + margin)
// where a driver no longer answers the thresholds, the margin itself, and the
// recommended recovery action; unsupported sources are absent, never zero.
#include "gpu/temperature_limits.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gpu/collector.h"
#include "gpu/family_builder.h"

namespace gpumon::gpu {
namespace {

// Scripted state, reset by the fixture. Device 0 is an HBM GPU; device 1 has
// no memory limit and no recovery action.
struct Script {
  nvmlReturn_t threshold_rc = NVML_SUCCESS;  // for the die thresholds
  nvmlReturn_t margin_rc = NVML_SUCCESS;
  int threshold_calls = 0;
  int temperature = 47;
  int margin = 40;              // so the reference point is 87
  int tlimit[3] = {-5, -2, 0};  // shutdown, slowdown, GPU max
  unsigned absolute[3] = {92, 89, 87};
  unsigned recovery = NVML_GPU_RECOVERY_ACTION_NONE;
  bool lost = false;
};
Script s;

nvmlDevice_t Handle(unsigned i) { return reinterpret_cast<nvmlDevice_t>(uintptr_t{i + 1}); }
unsigned Index(nvmlDevice_t d) { return static_cast<unsigned>(reinterpret_cast<uintptr_t>(d) - 1); }

nvmlReturn_t GetCount(unsigned* n) {
  *n = 2;
  return NVML_SUCCESS;
}
nvmlReturn_t GetHandle(unsigned i, nvmlDevice_t* d) {
  *d = Handle(i);
  return i < 2 ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}
nvmlReturn_t GetUuid(nvmlDevice_t d, char* buf, unsigned len) {
  std::snprintf(buf, len, "GPU-limits-%u", Index(d));
  return NVML_SUCCESS;
}
nvmlReturn_t GetTemperatureV(nvmlDevice_t, nvmlTemperature_t* t) {
  if (s.lost) return NVML_ERROR_GPU_IS_LOST;
  t->temperature = s.temperature;
  return NVML_SUCCESS;
}
nvmlReturn_t GetThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t type, unsigned* out) {
  ++s.threshold_calls;
  if (s.lost) return NVML_ERROR_GPU_IS_LOST;
  switch (type) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
      if (s.threshold_rc != NVML_SUCCESS) return s.threshold_rc;
      *out = s.absolute[type == NVML_TEMPERATURE_THRESHOLD_SHUTDOWN   ? 0
                        : type == NVML_TEMPERATURE_THRESHOLD_SLOWDOWN ? 1
                                                                      : 2];
      return NVML_SUCCESS;
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
      if (Index(d) == 1) return NVML_ERROR_NOT_SUPPORTED;
      *out = 95;
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
}
nvmlReturn_t GetMargin(nvmlDevice_t, nvmlMarginTemperature_t* m) {
  if (m->version != nvmlMarginTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (s.margin_rc != NVML_SUCCESS) return s.margin_rc;
  m->marginTemperature = s.margin;
  return NVML_SUCCESS;
}
nvmlReturn_t GetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t* f) {
  for (int i = 0; i < n; ++i) {
    f[i].nvmlReturn = NVML_SUCCESS;
    switch (f[i].fieldId) {
      case NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT:
        f[i].valueType = NVML_VALUE_TYPE_SIGNED_INT;
        f[i].value.siVal = s.tlimit[0];
        break;
      case NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT:
        f[i].valueType = NVML_VALUE_TYPE_SIGNED_INT;
        f[i].value.siVal = s.tlimit[1];
        break;
      case NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT:
        f[i].valueType = NVML_VALUE_TYPE_SIGNED_INT;
        f[i].value.siVal = s.tlimit[2];
        break;
      case NVML_FI_DEV_GET_GPU_RECOVERY_ACTION:
        f[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        f[i].value.uiVal = s.recovery;
        if (Index(d) == 1) f[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        break;
      default:
        f[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}

class TemperatureLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    s = Script{};
    lib_ = NvmlLibrary::CreateEmptyForTesting();
    lib_->nvmlDeviceGetCount_v2 = GetCount;
    lib_->nvmlDeviceGetHandleByIndex_v2 = GetHandle;
    lib_->nvmlDeviceGetUUID = GetUuid;
    lib_->nvmlDeviceGetTemperatureV = GetTemperatureV;
    lib_->nvmlDeviceGetTemperatureThreshold = GetThreshold;
    lib_->nvmlDeviceGetMarginTemperature = GetMargin;
    lib_->nvmlDeviceGetFieldValues = GetFieldValues;
  }
  void Discover() {
    collector_ = std::make_unique<GpuCollector>(lib_.get(), CollectorOptions{},
                                                SystemVersions{"590.48.01", "13.590.48", "13.1"});
    collector_->Discover();
  }
  std::map<int, double> Values(Metric m) {
    std::map<int, double> out;
    for (const auto& group : collector_->snapshot().groups) {
      if (!group) continue;
      for (const auto& v : group->values) {
        if (v.metric == m) out[v.device] = v.value;
      }
    }
    return out;
  }
  bool Unsupported(int device, Metric m) {
    return collector_->devices()[device].unsupported.test(static_cast<size_t>(m));
  }

  std::unique_ptr<NvmlLibrary> lib_;
  std::unique_ptr<GpuCollector> collector_;
};

TEST_F(TemperatureLimitsTest, ThresholdsAreReadAbsolutely) {
  s.tlimit[0] = -30;  // a T.Limit field that must not be used
  Discover();
  EXPECT_EQ(Values(Metric::kShutdownTemperature), (std::map<int, double>{{0, 92}, {1, 92}}));
  EXPECT_EQ(Values(Metric::kSlowdownTemperature)[0], 89);
  EXPECT_EQ(Values(Metric::kMaxOperatingTemperature)[1], 87);
  EXPECT_EQ(Values(Metric::kTemperatureMargin)[0], 40);
  // Only the HBM GPU has a memory limit; the other lacks it, not reads 0.
  EXPECT_EQ(Values(Metric::kMemoryMaxOperatingTemperature), (std::map<int, double>{{0, 95}}));
  EXPECT_TRUE(Unsupported(1, Metric::kMemoryMaxOperatingTemperature));
  EXPECT_EQ(collector_->devices()[0].tlimit_limits, 0);
  EXPECT_TRUE(collector_->nvml_errors().empty());
}

TEST_F(TemperatureLimitsTest, DerivesDieLimitsFromTlimitFieldsWhenThresholdsAreGone) {
  s.threshold_rc = NVML_ERROR_NOT_SUPPORTED;
  s.absolute[0] = 1;  // never read
  Discover();
  // limit = temperature 47 + margin 40 - offset.
  EXPECT_EQ(Values(Metric::kShutdownTemperature)[0], 92);
  EXPECT_EQ(Values(Metric::kSlowdownTemperature)[0], 89);
  EXPECT_EQ(Values(Metric::kMaxOperatingTemperature)[0], 87);
  EXPECT_EQ(Values(Metric::kMemoryMaxOperatingTemperature)[0], 95);  // still its threshold
  // The anchor moves with the die; the derived limits do not.
  s.temperature = 80;
  s.margin = 7;
  const int calls = s.threshold_calls;
  collector_->Collect(Group::kTemperature);
  EXPECT_EQ(Values(Metric::kSlowdownTemperature)[1], 89);
  EXPECT_EQ(Values(Metric::kTemperatureMargin)[1], 7);
  // After discovery only the memory threshold is still asked for, per GPU.
  EXPECT_EQ(s.threshold_calls - calls, 1);
  EXPECT_TRUE(collector_->nvml_errors().empty());
}

TEST_F(TemperatureLimitsTest, MissingThresholdCallAlsoFallsBack) {
  lib_->nvmlDeviceGetTemperatureThreshold = nullptr;
  Discover();
  EXPECT_EQ(Values(Metric::kShutdownTemperature)[1], 92);
  EXPECT_TRUE(Values(Metric::kMemoryMaxOperatingTemperature).empty());  // no memory anchor
  EXPECT_TRUE(Unsupported(0, Metric::kMemoryMaxOperatingTemperature));
}

TEST_F(TemperatureLimitsTest, NoMarginMeansNoDerivedLimits) {
  s.threshold_rc = NVML_ERROR_NOT_SUPPORTED;
  s.margin_rc = NVML_ERROR_NOT_SUPPORTED;
  Discover();
  EXPECT_TRUE(Values(Metric::kTemperatureMargin).empty());
  EXPECT_TRUE(Values(Metric::kShutdownTemperature).empty());
  EXPECT_TRUE(Unsupported(0, Metric::kSlowdownTemperature));
  EXPECT_TRUE(Unsupported(0, Metric::kTemperatureMargin));
  EXPECT_EQ(Values(Metric::kMemoryMaxOperatingTemperature)[0], 95);
}

TEST_F(TemperatureLimitsTest, MarginGoesNegativePastTheLimit) {
  Discover();
  s.temperature = 90;
  s.margin = -3;
  collector_->Collect(Group::kTemperature);
  EXPECT_EQ(Values(Metric::kTemperatureMargin)[0], -3);
}

TEST_F(TemperatureLimitsTest, ErrorAfterDiscoveryIsCountedNotAFallback) {
  Discover();
  s.threshold_rc = NVML_ERROR_TIMEOUT;
  collector_->Collect(Group::kTemperature);
  EXPECT_TRUE(Values(Metric::kShutdownTemperature).empty());
  EXPECT_EQ((collector_->nvml_errors()[{"nvmlDeviceGetTemperatureThreshold", "TIMEOUT"}]), 6u);
  EXPECT_EQ(collector_->devices()[0].tlimit_limits, 0);
  s.threshold_rc = NVML_SUCCESS;
  collector_->Collect(Group::kTemperature);
  EXPECT_EQ(Values(Metric::kShutdownTemperature)[0], 92);
}

TEST_F(TemperatureLimitsTest, LostGpuDropsItsLimits) {
  Discover();
  s.lost = true;
  collector_->Collect(Group::kTemperature);
  collector_->Collect(Group::kHealth);
  EXPECT_TRUE(Values(Metric::kShutdownTemperature).empty());
  EXPECT_EQ(Values(Metric::kLost), (std::map<int, double>{{0, 1}, {1, 1}}));
  EXPECT_TRUE(Values(Metric::kRecoveryAction).empty());
}

TEST_F(TemperatureLimitsTest, RecoveryActionIsAHealthGauge) {
  Discover();
  EXPECT_EQ(Values(Metric::kRecoveryAction), (std::map<int, double>{{0, 0}}));
  EXPECT_TRUE(Unsupported(1, Metric::kRecoveryAction));
  s.recovery = NVML_GPU_RECOVERY_ACTION_GPU_RESET;
  collector_->Collect(Group::kHealth);
  EXPECT_EQ(Values(Metric::kRecoveryAction)[0], 1);
  std::vector<exposition::MetricFamily> dcgm;
  BuildFamilies(*collector_, collector_->snapshot(), NameScheme::kDcgm, &dcgm);
  std::map<std::string, double> first;
  for (const auto& f : dcgm) {
    if (!f.samples.empty()) first[f.name] = f.samples[0].value;
  }
  EXPECT_EQ(first["DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION"], 1);
  EXPECT_EQ(first["DCGM_FI_DEV_SHUTDOWN_TEMP"], 92);
  EXPECT_EQ(first["DCGM_FI_DEV_SLOWDOWN_TEMP"], 89);
  EXPECT_EQ(first["DCGM_FI_DEV_GPU_MAX_OP_TEMP"], 87);
  EXPECT_EQ(first["DCGM_FI_DEV_MEM_MAX_OP_TEMP"], 95);
  EXPECT_EQ(first["DCGM_FI_DEV_GPU_TEMP_LIMIT"], 40);
}

TEST(TemperatureLimitsTableTest, CoversEveryLimitOnce) {
  std::set<Metric> metrics;
  for (const auto& l : kTemperatureLimits) {
    EXPECT_TRUE(metrics.insert(l.metric).second);
    EXPECT_EQ(Def(l.metric).group, Group::kTemperature);
  }
  EXPECT_EQ(metrics.size(), 4u);
  EXPECT_EQ(LimitFromTlimitOffset(28, 59, -5), 92);
}

}  // namespace
}  // namespace gpumon::gpu
