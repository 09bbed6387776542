// The GPU's own limits as the fake NVML reports them: absolute thresholds
// (nvmlDeviceGetTemperatureThreshold), the T.Limit margin and fields, and the
// recommended recovery action, per profile and in NVML's return-code order.
// Loads the built library with dlopen, as gpumon does.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "fake_nvml_loader.h"
#include "gpu/nvml_api.h"
#include "sim/profile.h"

namespace {

using Nvml = gpumon::testing::FakeNvml;
using gpumon::testing::Lib;

unsigned Whole(double celsius) { return static_cast<unsigned>(std::lround(celsius)); }

class FakeNvmlLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Lib().handle, nullptr) << dlerror();
    ASSERT_TRUE(Lib().missing.empty()) << Lib().missing.front();
    while (nvml().nvmlShutdown() == NVML_SUCCESS) {
    }
    unsetenv("GPUMON_SIM_SEED");
    unsetenv("GPUMON_SIM_FAULTS");
  }
  void TearDown() override {
    while (nvml().nvmlShutdown() == NVML_SUCCESS) {
    }
    unsetenv("GPUMON_SIM_FAULTS");
  }
  const Nvml& nvml() { return Lib(); }

  void Init(const char* spec, const char* faults = nullptr) {
    setenv("GPUMON_SIM_SPEC", spec, 1);
    if (faults != nullptr) setenv("GPUMON_SIM_FAULTS", faults, 1);
    ASSERT_EQ(nvml().nvmlInit_v2(), NVML_SUCCESS);
  }
  nvmlDevice_t Device(unsigned int index) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(nvml().nvmlDeviceGetHandleByIndex_v2(index, &d), NVML_SUCCESS);
    return d;
  }
  nvmlReturn_t Threshold(nvmlDevice_t d, int type, unsigned int* out) {
    return nvml().nvmlDeviceGetTemperatureThreshold(
        d, static_cast<nvmlTemperatureThresholds_t>(type), out);
  }
  nvmlFieldValue_t Field(nvmlDevice_t d, unsigned int id) {
    nvmlFieldValue_t v{};
    v.fieldId = id;
    EXPECT_EQ(nvml().nvmlDeviceGetFieldValues(d, 1, &v), NVML_SUCCESS);
    return v;
  }
};

// Each profile answers its own limits; only models with HBM have a memory one.
TEST_F(FakeNvmlLimitsTest, ThresholdsFollowTheProfile) {
  const std::vector<std::string> keys = {"h200", "h100", "l40s", "rtx4080s", "h200mig"};
  std::string spec;
  for (const auto& k : keys) spec += (spec.empty() ? "" : ",") + k + "x1";
  Init(spec.c_str());
  for (unsigned int i = 0; i < keys.size(); ++i) {
    const gpumon::sim::GpuProfile* p = gpumon::sim::FindProfile(keys[i]);
    ASSERT_NE(p, nullptr) << keys[i];
    nvmlDevice_t d = Device(i);
    unsigned int v = 0;
    ASSERT_EQ(Threshold(d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &v), NVML_SUCCESS) << keys[i];
    EXPECT_EQ(v, Whole(p->shutdown_temp_c)) << keys[i];
    ASSERT_EQ(Threshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v), NVML_SUCCESS) << keys[i];
    EXPECT_EQ(v, Whole(p->slowdown_temp_c)) << keys[i];
    ASSERT_EQ(Threshold(d, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, &v), NVML_SUCCESS) << keys[i];
    EXPECT_EQ(v, Whole(p->gpu_max_operating_temp_c)) << keys[i];
    const nvmlReturn_t mem = Threshold(d, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, &v);
    if (p->memory_max_operating_temp_c > 0) {
      ASSERT_EQ(mem, NVML_SUCCESS) << keys[i];
      EXPECT_EQ(v, Whole(p->memory_max_operating_temp_c)) << keys[i];
    } else {
      EXPECT_EQ(mem, NVML_ERROR_NOT_SUPPORTED) << keys[i];
    }
    // Acoustic and GPS thresholds are valid enum values no model reports.
    for (int t = NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN; t <= NVML_TEMPERATURE_THRESHOLD_GPS_CURR;
         ++t) {
      EXPECT_EQ(Threshold(d, t, &v), NVML_ERROR_NOT_SUPPORTED) << keys[i] << " type " << t;
    }
  }
  // H200: what real Hopper boards report, ordered as the hardware acts.
  nvmlDevice_t h200 = Device(0);
  unsigned int shutdown = 0, slowdown = 0, gpu_max = 0, mem_max = 0;
  Threshold(h200, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &shutdown);
  Threshold(h200, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &slowdown);
  Threshold(h200, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, &gpu_max);
  Threshold(h200, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, &mem_max);
  EXPECT_EQ(std::vector<unsigned>({gpu_max, slowdown, shutdown, mem_max}),
            std::vector<unsigned>({87, 89, 92, 95}));
}

TEST_F(FakeNvmlLimitsTest, ReturnCodesFollowNvmlOrder) {
  unsigned int v = 0;
  EXPECT_EQ(Threshold(nullptr, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &v), NVML_ERROR_UNINITIALIZED);
  Init("h200x2,l40sx1,h200migx1", "lost:gpu=1:at=0s");
  nvmlDevice_t fine = Device(0);
  nvmlDevice_t lost = Device(1);
  nvmlDevice_t l40s = Device(2);
  // Bad enum values and null pointers come before everything else.
  for (int bad : {-1, static_cast<int>(NVML_TEMPERATURE_THRESHOLD_COUNT), 1000}) {
    EXPECT_EQ(Threshold(fine, bad, &v), NVML_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_EQ(Threshold(lost, bad, &v), NVML_ERROR_INVALID_ARGUMENT) << bad;
  }
  EXPECT_EQ(Threshold(fine, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Threshold(l40s, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Threshold(nullptr, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &v),
            NVML_ERROR_INVALID_ARGUMENT);
  // Then the lost GPU, then what the model lacks.
  EXPECT_EQ(Threshold(lost, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &v), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(Threshold(lost, NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN, &v), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(Threshold(l40s, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, &v), NVML_ERROR_NOT_SUPPORTED);
  nvmlMarginTemperature_t m{};
  m.version = nvmlMarginTemperature_v1;
  EXPECT_EQ(nvml().nvmlDeviceGetMarginTemperature(lost, &m), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(nvml().nvmlDeviceGetMarginTemperature(fine, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  m.version = nvmlTemperature_v1;  // another struct's version
  EXPECT_EQ(nvml().nvmlDeviceGetMarginTemperature(fine, &m), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  EXPECT_EQ(nvml().nvmlDeviceGetMarginTemperature(lost, &m), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  nvmlFieldValue_t f{};
  f.fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
  EXPECT_EQ(nvml().nvmlDeviceGetFieldValues(lost, 1, &f), NVML_ERROR_GPU_IS_LOST);
  // MIG devices answer none of these; their parent does.
  nvmlDevice_t parent = Device(3), mig = nullptr;
  ASSERT_EQ(nvml().nvmlDeviceGetMigDeviceHandleByIndex(parent, 0, &mig), NVML_SUCCESS);
  EXPECT_EQ(Threshold(mig, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v), NVML_ERROR_NOT_SUPPORTED);
  m.version = nvmlMarginTemperature_v1;
  EXPECT_EQ(nvml().nvmlDeviceGetMarginTemperature(mig, &m), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(Field(mig, NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT).nvmlReturn,
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(Threshold(parent, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, &v), NVML_SUCCESS);
  EXPECT_EQ(nvml().nvmlDeviceGetMarginTemperature(parent, &m), NVML_SUCCESS);
}

// The margin is the headroom to the maximum operating temperature (positive
// while below it, as nvidia-smi's temperature.gpu.tlimit), and the T.Limit
// fields are the limits as offsets from that same reference, so both routes
// give the same absolute limits.
TEST_F(FakeNvmlLimitsTest, MarginAndTlimitFieldsAgreeWithThresholds) {
  Init("h200x1,h100x1,l40sx1,rtx4080sx1");
  for (unsigned int i = 0; i < 4; ++i) {
    nvmlDevice_t d = Device(i);
    nvmlMarginTemperature_t m{};
    m.version = nvmlMarginTemperature_v1;
    unsigned int temp = 0, gpu_max = 0;
    ASSERT_EQ(nvml().nvmlDeviceGetMarginTemperature(d, &m), NVML_SUCCESS);
    ASSERT_EQ(nvml().nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
    ASSERT_EQ(Threshold(d, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, &gpu_max), NVML_SUCCESS);
    EXPECT_GT(m.marginTemperature, 0) << "an idle GPU is below its limit";
    EXPECT_EQ(static_cast<int>(temp) + m.marginTemperature, static_cast<int>(gpu_max)) << i;
    const struct {
      unsigned int field;
      int threshold;
    } kDie[] = {{NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN},
                {NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN},
                {NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT, NVML_TEMPERATURE_THRESHOLD_GPU_MAX}};
    for (const auto& k : kDie) {
      nvmlFieldValue_t f = Field(d, k.field);
      ASSERT_EQ(f.nvmlReturn, NVML_SUCCESS) << k.field;
      EXPECT_EQ(f.valueType, NVML_VALUE_TYPE_SIGNED_INT);
      EXPECT_LE(f.value.siVal, 0) << "limits at or past the reference are offsets <= 0";
      unsigned int absolute = 0;
      ASSERT_EQ(Threshold(d, k.threshold, &absolute), NVML_SUCCESS);
      EXPECT_EQ(static_cast<int>(temp) + m.marginTemperature - f.value.siVal,
                static_cast<int>(absolute))
          << "GPU " << i << " field " << k.field;
    }
    unsigned int mem = 0;
    const bool has_memory_limit =
        Threshold(d, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, &mem) == NVML_SUCCESS;
    nvmlFieldValue_t f = Field(d, NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT);
    EXPECT_EQ(f.nvmlReturn, has_memory_limit ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED) << i;
    if (has_memory_limit) {
      EXPECT_EQ(f.value.siVal, 0);
    }
  }
  // H200: slowdown two and shutdown five degrees past the maximum.
  EXPECT_EQ(Field(Device(0), NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT).value.siVal, -2);
  EXPECT_EQ(Field(Device(0), NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT).value.siVal, -5);
}

TEST_F(FakeNvmlLimitsTest, RecoveryActionFollowsPendingRowRemap) {
  Init("h200x2,rtx4080sx1", "ecc:gpu=1:at=0s");
  nvmlFieldValue_t healthy = Field(Device(0), NVML_FI_DEV_GET_GPU_RECOVERY_ACTION);
  ASSERT_EQ(healthy.nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(healthy.valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_EQ(healthy.value.uiVal, static_cast<unsigned>(NVML_GPU_RECOVERY_ACTION_NONE));
  // GPU 1 took an uncorrectable error: a row remap is pending until a reset.
  unsigned int corr = 0, unc = 0, pending = 0, failure = 0;
  ASSERT_EQ(nvml().nvmlDeviceGetRemappedRows(Device(1), &corr, &unc, &pending, &failure),
            NVML_SUCCESS);
  EXPECT_EQ(pending, 1u);
  nvmlFieldValue_t hit = Field(Device(1), NVML_FI_DEV_GET_GPU_RECOVERY_ACTION);
  ASSERT_EQ(hit.nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(hit.value.uiVal, static_cast<unsigned>(NVML_GPU_RECOVERY_ACTION_GPU_RESET));
  // GeForce reports no recovery action.
  EXPECT_EQ(Field(Device(2), NVML_FI_DEV_GET_GPU_RECOVERY_ACTION).nvmlReturn,
            NVML_ERROR_NOT_SUPPORTED);
}

}  // namespace
