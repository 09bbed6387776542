// Return-code handling of the collector, against a scripted NVML whose
// entry points are installed one by one (the rest stay missing).
#include "gpu/collector.h"

#include <gtest/gtest.h>

#include <cstring>

#include "gpu/family_builder.h"

namespace gpumon::gpu {
namespace {

// Scripted NVML state, reset by the fixture.
struct FakeState {
  nvmlReturn_t power_rc = NVML_SUCCESS;
  bool device1_lost = false;
  int temperature_v_calls = 0;
};
FakeState g;

nvmlDevice_t Handle(unsigned i) { return reinterpret_cast<nvmlDevice_t>(uintptr_t{i + 1}); }
unsigned Index(nvmlDevice_t d) { return static_cast<unsigned>(reinterpret_cast<uintptr_t>(d) - 1); }

nvmlReturn_t GetCount(unsigned* n) {
  *n = 2;
  return NVML_SUCCESS;
}
nvmlReturn_t GetHandle(unsigned i, nvmlDevice_t* d) {
  if (i >= 2) return NVML_ERROR_INVALID_ARGUMENT;
  *d = Handle(i);
  return NVML_SUCCESS;
}
nvmlReturn_t GetUuid(nvmlDevice_t d, char* buf, unsigned len) {
  std::snprintf(buf, len, "GPU-test-%u", Index(d));
  return NVML_SUCCESS;
}
nvmlReturn_t GetName(nvmlDevice_t, char* buf, unsigned len) {
  std::snprintf(buf, len, "NVIDIA Test GPU");
  return NVML_SUCCESS;
}
nvmlReturn_t GetPci(nvmlDevice_t d, nvmlPciInfo_t* p) {
  std::snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", 0x10 + Index(d));
  return NVML_SUCCESS;
}
// Device 0 runs an old driver path: the versioned call reports a version
// mismatch, so the collector must fall back to nvmlDeviceGetTemperature.
nvmlReturn_t GetTemperatureV(nvmlDevice_t d, nvmlTemperature_t* t) {
  ++g.temperature_v_calls;
  if (Index(d) == 0) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (g.device1_lost) return NVML_ERROR_GPU_IS_LOST;
  if (t->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  t->temperature = 55;
  return NVML_SUCCESS;
}
nvmlReturn_t GetTemperature(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned* v) {
  *v = 41;
  return NVML_SUCCESS;
}
// Memory temperature: device 0 has no HBM sensor (per-field NOT_SUPPORTED).
nvmlReturn_t GetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t* f) {
  for (int i = 0; i < n; ++i) {
    if (f[i].fieldId == NVML_FI_DEV_MEMORY_TEMP && Index(d) == 1) {
      f[i].nvmlReturn = NVML_SUCCESS;
      f[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
      f[i].value.uiVal = 60;
    } else {
      f[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}
nvmlReturn_t GetPowerUsage(nvmlDevice_t d, unsigned* mw) {
  if (Index(d) == 1 && g.device1_lost) return NVML_ERROR_GPU_IS_LOST;
  *mw = 312500;
  return g.power_rc;
}
nvmlReturn_t GetMemoryInfoV2(nvmlDevice_t, nvmlMemory_v2_t* m) {
  if (m->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  m->total = 80ull << 30;
  m->reserved = 512ull << 20;
  m->used = 1ull << 30;
  m->free = m->total - m->reserved - m->used;
  return NVML_SUCCESS;
}
nvmlReturn_t NoPermission(nvmlDevice_t, unsigned*) { return NVML_ERROR_NO_PERMISSION; }

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g = FakeState{};
    lib_ = NvmlLibrary::CreateEmptyForTesting();
    lib_->nvmlDeviceGetCount_v2 = GetCount;
    lib_->nvmlDeviceGetHandleByIndex_v2 = GetHandle;
    lib_->nvmlDeviceGetUUID = GetUuid;
    lib_->nvmlDeviceGetName = GetName;
    lib_->nvmlDeviceGetPciInfo_v3 = GetPci;
    lib_->nvmlDeviceGetTemperatureV = GetTemperatureV;
    lib_->nvmlDeviceGetTemperature = GetTemperature;
    lib_->nvmlDeviceGetFieldValues = GetFieldValues;
    lib_->nvmlDeviceGetPowerUsage = GetPowerUsage;
    lib_->nvmlDeviceGetMemoryInfo_v2 = GetMemoryInfoV2;
    lib_->nvmlDeviceGetPcieReplayCounter = NoPermission;
    // nvmlDeviceGetEnforcedPowerLimit and everything else stay missing.
    CollectorOptions options;
    options.hostname = "node-a";
    collector_ = std::make_unique<GpuCollector>(lib_.get(), options,
                                                SystemVersions{"590.48.01", "13.590.48", "13.0"});
    collector_->Discover();
  }

  // Values of one metric in the latest snapshot, by device slot.
  std::map<int, double> Values(Metric m) {
    std::map<int, double> out;
    auto snap = collector_->snapshot();
    for (const auto& group : snap.groups) {
      if (!group) continue;
      for (const auto& v : group->values) {
        if (v.metric == m) out[v.device] = v.value;
      }
    }
    return out;
  }

  std::unique_ptr<NvmlLibrary> lib_;
  std::unique_ptr<GpuCollector> collector_;
};

TEST_F(CollectorTest, DiscoversIdentity) {
  EXPECT_FALSE(lib_->simulated());
  ASSERT_EQ(collector_->devices().size(), 2u);
  EXPECT_EQ(collector_->devices()[1].uuid, "GPU-test-1");
  EXPECT_EQ(collector_->devices()[1].pci_bus_id, "00000000:11:00.0");
  EXPECT_EQ(collector_->devices()[0].model, "NVIDIA Test GPU");
}

TEST_F(CollectorTest, FallsBackToLegacyTemperatureCall) {
  auto t = Values(Metric::kTemperature);
  EXPECT_EQ(t[0], 41);  // nvmlDeviceGetTemperature
  EXPECT_EQ(t[1], 55);  // nvmlDeviceGetTemperatureV
  int before = g.temperature_v_calls;
  collector_->Collect(Group::kTemperature);
  // The versioned call is no longer tried on device 0.
  EXPECT_EQ(g.temperature_v_calls, before + 1);
}

TEST_F(CollectorTest, UnsupportedFieldIsAbsentNotZero) {
  auto m = Values(Metric::kMemoryTemperature);
  EXPECT_EQ(m.count(0), 0u);
  EXPECT_EQ(m[1], 60);
  EXPECT_TRUE(
      collector_->devices()[0].unsupported.test(static_cast<size_t>(Metric::kMemoryTemperature)));
}

TEST_F(CollectorTest, MissingSymbolsAndNoPermissionMakeMetricsAbsent) {
  EXPECT_TRUE(Values(Metric::kPowerEnforcedLimit).empty());
  EXPECT_TRUE(Values(Metric::kPcieReplay).empty());
  EXPECT_TRUE(Values(Metric::kEnergy).empty());
  // Discovery failures are capabilities, not errors.
  EXPECT_TRUE(collector_->nvml_errors().empty());
}

TEST_F(CollectorTest, ErrorsAfterDiscoveryAreCountedAndValueDropped) {
  EXPECT_EQ(Values(Metric::kPowerUsage).size(), 2u);
  EXPECT_DOUBLE_EQ(Values(Metric::kPowerUsage)[0], 312.5);
  g.power_rc = NVML_ERROR_TIMEOUT;
  collector_->Collect(Group::kPower);
  EXPECT_TRUE(Values(Metric::kPowerUsage).empty());
  auto errors = collector_->nvml_errors();
  EXPECT_EQ((errors[{"nvmlDeviceGetPowerUsage", "TIMEOUT"}]), 2u);
  g.power_rc = NVML_SUCCESS;
  collector_->Collect(Group::kPower);
  EXPECT_EQ(Values(Metric::kPowerUsage).size(), 2u);
}

TEST_F(CollectorTest, LostGpuIsMarkedAndOthersContinue) {
  g.device1_lost = true;
  collector_->Collect(Group::kTemperature);
  collector_->Collect(Group::kPower);
  collector_->Collect(Group::kHealth);
  auto lost = Values(Metric::kLost);
  EXPECT_EQ(lost[0], 0);
  EXPECT_EQ(lost[1], 1);
  auto power = Values(Metric::kPowerUsage);
  EXPECT_EQ(power.count(0), 1u);
  EXPECT_EQ(power.count(1), 0u);
  EXPECT_EQ(Values(Metric::kTemperature).count(0), 1u);
  EXPECT_EQ((collector_->nvml_errors()[{"nvmlDeviceGetTemperatureV", "GPU_IS_LOST"}]), 1u);
}

TEST_F(CollectorTest, XidsAreCountedPerCode) {
  collector_->RecordXid(Handle(1), 79);
  collector_->RecordXid(Handle(1), 79);
  collector_->RecordXid(Handle(1), 48);
  collector_->Collect(Group::kXid);
  std::map<std::string, double> counts;
  double last = -1;
  for (const auto& v : collector_->snapshot().groups[static_cast<int>(Group::kXid)]->values) {
    EXPECT_EQ(v.device, 1);
    if (v.metric == Metric::kXidErrors) counts[v.labels[0]] = v.value;
    if (v.metric == Metric::kXidLast) last = v.value;
  }
  EXPECT_EQ(counts["79"], 2);
  EXPECT_EQ(counts["48"], 1);
  EXPECT_EQ(last, 48);
}

TEST_F(CollectorTest, BuildsNativeAndDcgmFamilies) {
  std::vector<exposition::MetricFamily> native, dcgm;
  BuildFamilies(*collector_, collector_->snapshot(), NameScheme::kNative, &native);
  BuildFamilies(*collector_, collector_->snapshot(), NameScheme::kDcgm, &dcgm);
  auto find = [](const std::vector<exposition::MetricFamily>& fs, const std::string& name) {
    for (const auto& f : fs) {
      if (f.name == name) return &f;
    }
    return static_cast<const exposition::MetricFamily*>(nullptr);
  };
  const auto* used = find(native, "gpu_memory_used_bytes");
  ASSERT_NE(used, nullptr);
  ASSERT_EQ(used->samples.size(), 2u);
  EXPECT_EQ(used->samples[0].value, double(1ull << 30));
  std::vector<exposition::Label> expected = {
      {"gpu", "0"},          {"uuid", "GPU-test-0"},       {"pci_bus_id", "00000000:10:00.0"},
      {"device", "nvidia0"}, {"model", "NVIDIA Test GPU"}, {"hostname", "node-a"}};
  EXPECT_EQ(used->samples[0].labels, expected);
  EXPECT_EQ(find(native, "DCGM_FI_DEV_FB_USED"), nullptr);

  const auto* fb = find(dcgm, "DCGM_FI_DEV_FB_USED");
  ASSERT_NE(fb, nullptr);
  EXPECT_EQ(fb->samples[0].value, 1024);  // MiB
  EXPECT_EQ(fb->samples[0].labels[1].name, "UUID");
  EXPECT_EQ(fb->samples[0].labels[4].name, "modelName");
  EXPECT_EQ(fb->samples[0].labels[5].name, "Hostname");
  EXPECT_EQ(find(dcgm, "gpu_memory_used_bytes"), nullptr);
  // Agent metrics keep their names in the DCGM scheme.
  collector_->Collect(Group::kAgent);
  dcgm.clear();
  BuildFamilies(*collector_, collector_->snapshot(), NameScheme::kDcgm, &dcgm);
  ASSERT_NE(find(dcgm, "gpumon_nvml_up"), nullptr);
  EXPECT_EQ(find(dcgm, "gpumon_nvml_up")->samples[0].value, 1);
}

TEST(CollectorWithoutNvmlTest, ServesOnlyAgentMetrics) {
  GpuCollector c(nullptr, CollectorOptions{}, SystemVersions{});
  c.Discover();
  EXPECT_TRUE(c.devices().empty());
  std::vector<exposition::MetricFamily> fs;
  BuildFamilies(c, c.snapshot(), NameScheme::kBoth, &fs);
  bool found = false;
  for (const auto& f : fs) {
    EXPECT_TRUE(f.name.starts_with("gpumon_") || f.name.starts_with("process_")) << f.name;
    if (f.name == "gpumon_nvml_up") {
      found = true;
      EXPECT_EQ(f.samples[0].value, 0);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace gpumon::gpu
