// The agent's real NVML path (dlopen, symbol resolution, discovery,
// collection, exposition) against the simulator's fake NVML: for every
// simulated profile, the exposed metrics are exactly the catalog metrics the
// profile supports.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "exposition/text_writer.h"
#include "gpu/catalog.h"
#include "gpu/collector.h"
#include "gpu/family_builder.h"
#include "gpu/nvml_session.h"
#include "gpu/xid_watcher.h"
#include "sim/profile.h"

namespace gpumon::gpu {
namespace {

// Each profile needs its own copy of the library: NVML state is global to a
// loaded library, and dlopen of the same path returns the same instance.
std::string PrivateCopy(const std::string& tag) {
  auto dir =
      std::filesystem::temp_directory_path() / ("gpumon-fake-nvml-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / ("libnvml-" + tag + ".so");
  std::filesystem::copy_file(GPUMON_FAKE_NVML, path,
                             std::filesystem::copy_options::overwrite_existing);
  return path.string();
}

bool Supports(const sim::GpuProfile& p, Feature f) {
  const bool mig_on = p.has_mig && p.mig_instances > 0;
  switch (f) {
    case Feature::kAny:
      return true;
    case Feature::kMemoryTemperature:
      return p.has_memory_temperature;
    case Feature::kPowerInstant:
      return p.has_power_instant;
    case Feature::kEnergy:
      return p.has_energy;
    case Feature::kUtilization:
      return !mig_on;
    case Feature::kEncoder:
      return p.has_encoder && !mig_on;
    case Feature::kDecoder:
      return p.has_decoder && !mig_on;
    case Feature::kClockEventCounters:
      return p.has_clock_event_counters;
    case Feature::kMemoryReserved:
      return true;
    case Feature::kEcc:
      return p.has_ecc;
    case Feature::kRetiredPages:
      return p.has_retired_pages;
    case Feature::kRowRemapping:
      // The MIG readings show no remapped-row counters on the parent.
      return p.has_row_remapping && !mig_on;
    case Feature::kPcieReplay:
      return p.has_pcie_replay;
    case Feature::kPcieByteCounters:
      return p.has_pcie_byte_counters;
    case Feature::kNvlink:
      return p.nvlink_links > 0;
    case Feature::kFans:
      return p.num_fans > 0;
    case Feature::kMig:
      return p.has_mig;
    case Feature::kXidEvents:
      return true;
    case Feature::kThermalMargin:
      return true;  // every profile is Ada or Hopper
    case Feature::kRecoveryAction:
      return p.has_row_remapping;
    case Feature::kCount:
      break;
  }
  return false;
}

class FakeNvmlCoverageTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FakeNvmlCoverageTest, ExposesExactlyTheSupportedMetrics) {
  const std::string key = GetParam();
  const sim::GpuProfile* profile = sim::FindProfile(key);
  ASSERT_NE(profile, nullptr) << key;
  setenv("GPUMON_SIM_SPEC", (key + "x2").c_str(), 1);
  setenv("GPUMON_SIM_SEED", "7", 1);
  // An XID one second in on GPU 1 (after the watcher registers) makes the XID metrics appear.
  setenv("GPUMON_SIM_FAULTS", "xid:gpu=1:code=79:at=1s", 1);
  auto session = NvmlSession::Start(PrivateCopy(key));
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_TRUE((*session)->library().simulated());
  CollectorOptions options;
  options.hostname = "sim-host";
  options.simulated = true;
  GpuCollector collector(&(*session)->library(), options, (*session)->versions());
  collector.Discover();
  ASSERT_EQ(collector.devices().size(), 2u);
  XidWatcher xids((*session)->library());
  ASSERT_GT(xids.Start({&collector}), 0);
  for (int i = 0; i < 50; ++i) {
    collector.Collect(Group::kXid);
    bool seen = false;
    for (const auto& v : collector.snapshot().groups[static_cast<int>(Group::kXid)]->values) {
      seen |= v.metric == Metric::kXidErrors;
    }
    if (seen) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  xids.Stop();
  collector.Collect(Group::kAgent);

  for (NameScheme scheme : {NameScheme::kNative, NameScheme::kDcgm}) {
    std::vector<exposition::MetricFamily> families;
    BuildFamilies(collector, collector.snapshot(), scheme, &families);
    std::set<std::string> got;
    for (const auto& f : families) {
      got.insert(f.name);
      for (const auto& s : f.samples) {
        bool simulated = false;
        for (const auto& l : s.labels) simulated |= l.name == "simulated" && l.value == "true";
        EXPECT_TRUE(simulated) << f.name << " lacks simulated=\"true\"";
      }
    }
    std::set<std::string> want;
    for (const auto& def : Catalog()) {
      if (!Supports(*profile, def.feature)) continue;
      if (def.scope == Scope::kMigInstance && profile->mig_instances == 0) continue;
      if (def.scope == Scope::kAgent || scheme == NameScheme::kNative) {
        if (!def.name.empty()) want.insert(std::string(def.name));
        if (def.scope == Scope::kAgent) continue;
      }
      if (scheme == NameScheme::kDcgm) {
        for (const auto& a : def.dcgm) {
          if (!a.name.empty()) want.insert(std::string(a.name));
        }
      }
    }
    // No NVML call fails in a healthy simulation.
    want.erase("gpumon_nvml_errors_total");
    std::vector<std::string> missing, extra;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                        std::back_inserter(missing));
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(),
                        std::back_inserter(extra));
    EXPECT_TRUE(missing.empty()) << key
                                 << ": supported but absent: " << ::testing::PrintToString(missing);
    EXPECT_TRUE(extra.empty()) << key
                               << ": exposed but unsupported: " << ::testing::PrintToString(extra);
  }
  EXPECT_TRUE(collector.nvml_errors().empty())
      << ::testing::PrintToString(collector.nvml_errors().size());
}

INSTANTIATE_TEST_SUITE_P(Profiles, FakeNvmlCoverageTest,
                         ::testing::Values("h200", "h100", "l40s", "rtx4080s", "h200mig"));

}  // namespace
}  // namespace gpumon::gpu
