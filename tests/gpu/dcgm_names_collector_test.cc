// The DCGM mapping table against what the agent actually exposes: for every
// native sample of a mapped metric, the table predicts a DCGM sample (name,
// labels renamed and fixed labels dropped, value scaled or bit of the mask)
// that the DCGM scheme of the same snapshot must contain. This checks the
// label renaming, the scales, the alias matches, the reason bits and the
// `complete` flags against the collector and family builder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "gpu/collector.h"
#include "gpu/dcgm_names.h"
#include "gpu/family_builder.h"
#include "gpu/nvml_session.h"

namespace gpumon::gpu {
namespace {

using exposition::Label;

std::string PrivateCopy(const std::string& tag) {
  auto dir =
      std::filesystem::temp_directory_path() / ("gpumon-dcgm-names-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / ("libnvml-" + tag + ".so");
  std::filesystem::copy_file(GPUMON_FAKE_NVML, path,
                             std::filesystem::copy_options::overwrite_existing);
  return path.string();
}

std::string Key(const std::string& name, std::vector<Label> labels) {
  std::sort(labels.begin(), labels.end(),
            [](const Label& a, const Label& b) { return a.name < b.name; });
  std::string k = name + "{";
  for (const auto& l : labels) k += l.name + "=" + l.value + ",";
  return k + "}";
}

class DcgmNamesCollectorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DcgmNamesCollectorTest, TablePredictsTheDcgmSamples) {
  const std::string key = GetParam();
  setenv("GPUMON_SIM_SPEC", (key + "x2").c_str(), 1);
  setenv("GPUMON_SIM_SEED", "11", 1);
  unsetenv("GPUMON_SIM_FAULTS");
  auto session = NvmlSession::Start(PrivateCopy(key));
  ASSERT_TRUE(session.ok()) << session.status().message();
  CollectorOptions options;
  options.hostname = "sim-host";
  options.simulated = true;
  GpuCollector collector(&(*session)->library(), options, (*session)->versions());
  collector.Discover();
  ASSERT_EQ(collector.devices().size(), 2u);
  for (int g = 0; g < kGroupCount; ++g) collector.Collect(static_cast<Group>(g));

  std::vector<exposition::MetricFamily> native, dcgm;
  BuildFamilies(collector, collector.snapshot(), NameScheme::kNative, &native);
  BuildFamilies(collector, collector.snapshot(), NameScheme::kDcgm, &dcgm);
  std::map<std::string, double> dcgm_samples;
  for (const auto& f : dcgm) {
    for (const auto& s : f.samples) {
      std::vector<Label> labels;
      for (const auto& l : s.labels) {
        if (l.name != "DCGM_FI_DRIVER_VERSION") labels.push_back(l);
      }
      dcgm_samples[Key(f.name, labels)] = s.value;
    }
  }
  auto rename = [](std::string_view native_label) {
    for (const auto& p : DcgmLabelNames()) {
      if (p.native == native_label) return std::string(p.dcgm);
    }
    return std::string(native_label);
  };
  size_t checked = 0, bits = 0;
  for (const auto& f : native) {
    const DcgmMetricMapping* m = FindDcgmMapping(f.name);
    if (!m) continue;
    for (const auto& s : f.samples) {
      auto value_of = [&](std::string_view label) -> std::string {
        for (const auto& l : s.labels) {
          if (l.name == label) return l.value;
        }
        return "";
      };
      const DcgmSeries* hit = nullptr;
      for (const auto& series : m->series) {
        bool match = true;
        for (const auto& [l, v] : series.fixed) match = match && value_of(l) == v;
        for (const auto& c : series.conditions) {
          bool present = false;
          for (const auto& l : s.labels) present = present || rename(l.name) == c.label;
          match = match && present == c.present;
        }
        if (match) hit = &series;
      }
      if (!hit) {
        EXPECT_FALSE(m->complete) << key << ": " << f.name << " claims complete but "
                                  << Key(f.name, s.labels) << " has no DCGM series";
        continue;
      }
      std::vector<Label> labels;
      for (const auto& l : s.labels) {
        bool fixed = false;
        for (const auto& [name, v] : hit->fixed) fixed = fixed || l.name == name;
        // Native-only labels have no DCGM counterpart.
        for (auto only : NativeOnlyLabels()) fixed = fixed || l.name == only;
        if (!fixed) labels.push_back({rename(l.name), l.value});
      }
      std::string k = Key(std::string(hit->name), labels);
      auto it = dcgm_samples.find(k);
      ASSERT_NE(it, dcgm_samples.end())
          << key << ": " << Key(f.name, s.labels) << " predicts " << k << ", which is not exposed";
      if (hit->bit) {
        double bit = std::fmod(std::floor(it->second / static_cast<double>(hit->bit)), 2);
        EXPECT_EQ(bit, s.value) << key << ": " << Key(f.name, s.labels);
        ++bits;
      } else {
        EXPECT_NEAR(it->second, s.value * hit->scale, 1e-9 * std::fabs(it->second))
            << key << ": " << Key(f.name, s.labels);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 20u) << key;
  EXPECT_GT(bits, 0u) << key << ": no clock event reason was checked";
}

INSTANTIATE_TEST_SUITE_P(Profiles, DcgmNamesCollectorTest,
                         ::testing::Values("h200", "h100", "l40s", "rtx4080s", "h200mig"));

}  // namespace
}  // namespace gpumon::gpu
