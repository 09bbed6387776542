// Checks the profiles against the real nvidia-smi readings in
// ../shared/reference/gpu-readings. Skips when that folder is absent.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "sim/gpu_model.h"
#include "sim/profile.h"

namespace gpumon::sim {
namespace {

namespace fs = std::filesystem;

// One readings file: first value of every metric, plus gpu_info labels.
struct Reading {
  std::map<std::string, double> values;
  std::map<std::string, std::string> info;

  std::optional<double> Get(const std::string& metric) const {
    auto it = values.find("nvidia_smi_" + metric);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  double At(const std::string& metric) const {
    std::optional<double> v = Get(metric);
    EXPECT_TRUE(v.has_value()) << metric;
    return v.value_or(-1);
  }
};

Reading Parse(const fs::path& path) {
  Reading r;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const size_t brace = line.find('{');
    const std::string name = line.substr(0, std::min(brace, line.find(' ')));
    r.values.emplace(name, std::stod(line.substr(space + 1)));
    if (name == "nvidia_smi_gpu_info" && brace != std::string::npos) {
      // label="value" pairs; values hold no quotes.
      size_t pos = brace + 1;
      while (true) {
        const size_t eq = line.find("=\"", pos);
        if (eq == std::string::npos) break;
        const size_t end = line.find('"', eq + 2);
        r.info[line.substr(pos, eq - pos)] = line.substr(eq + 2, end - eq - 2);
        pos = end + 2;  // skip '",'
      }
    }
  }
  return r;
}

fs::path ReadingsDir() { return fs::path(GPUMON_SHARED_DIR) / "reference" / "gpu-readings"; }

std::optional<Reading> Find(const std::string& model, const std::string& state) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ReadingsDir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find("__" + model + "__") != std::string::npos &&
        name.ends_with("__" + state + ".metrics")) {
      return Parse(entry.path());
    }
  }
  return std::nullopt;
}

struct Case {
  const char* key;
  const char* model;  // as in the readings' file names
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.key; }

class CalibrationTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!fs::is_directory(ReadingsDir())) GTEST_SKIP() << "no readings at " << ReadingsDir();
    profile_ = FindProfile(GetParam().key);
    ASSERT_NE(profile_, nullptr);
    idle_ = Find(GetParam().model, "idle");
    load_ = Find(GetParam().model, "load");
    if (!idle_ || !load_) GTEST_SKIP() << "no readings for " << GetParam().model;
  }
  const GpuProfile* profile_ = nullptr;
  std::optional<Reading> idle_, load_;
};

constexpr double kMiB = 1024.0 * 1024.0;

TEST_P(CalibrationTest, IdentityMatches) {
  const GpuProfile& p = *profile_;
  EXPECT_EQ(idle_->info["name"], p.name);
  EXPECT_EQ(idle_->info["vbios_version"], p.vbios_version);
  EXPECT_EQ(static_cast<uint32_t>(idle_->At("pci_device_id")), p.pci_device_id);
}

TEST_P(CalibrationTest, StaticLimitsMatch) {
  const GpuProfile& p = *profile_;
  for (const Reading* r : {&*idle_, &*load_}) {
    EXPECT_EQ(r->At("power_default_limit_watts"), p.power_limit_default_w);
    EXPECT_EQ(r->At("enforced_power_limit_watts"), p.power_limit_default_w);
    EXPECT_EQ(r->At("power_min_limit_watts"), p.power_limit_min_w);
    EXPECT_EQ(r->At("power_max_limit_watts"), p.power_limit_max_w);
    EXPECT_NEAR(r->At("memory_total_bytes"), static_cast<double>(p.memory_total_bytes), kMiB);
    EXPECT_NEAR(r->At("memory_reserved_bytes"), static_cast<double>(p.memory_reserved_bytes), kMiB);
    EXPECT_EQ(r->At("clocks_max_sm_clock_hz") / 1e6, p.max_sm_mhz);
    EXPECT_EQ(r->At("clocks_max_graphics_clock_hz") / 1e6, p.max_graphics_mhz);
    EXPECT_EQ(r->At("clocks_max_memory_clock_hz") / 1e6, p.max_memory_mhz);
    EXPECT_EQ(r->At("pcie_link_gen_max"), p.pcie_max_gen);
    EXPECT_EQ(r->At("pcie_link_width_max"), p.pcie_max_width);
    EXPECT_EQ(r->At("clocks_event_reasons_supported"), static_cast<double>(kSupportedReasons));
    // tlimit is the margin to the slowdown temperature, measured on a sensor
    // that can run a few degrees hotter than temperature.gpu under load.
    if (auto tlimit = r->Get("temperature_gpu_tlimit")) {
      const double slowdown = r->At("temperature_gpu") + *tlimit;
      EXPECT_LE(slowdown, p.gpu_max_operating_temp_c + 2);
      EXPECT_GE(slowdown, p.gpu_max_operating_temp_c - 10);
    }
  }
}

TEST_P(CalibrationTest, PowerAndIdleStateMatch) {
  const GpuProfile& p = *profile_;
  // Some "idle" readings were taken under load; compare only true idles
  // (MIG parents report no utilization, so rely on the idle reason there).
  const std::optional<double> idle_util = idle_->Get("utilization_gpu_ratio");
  if (idle_->At("clocks_event_reasons_gpu_idle") == 1 && idle_util.value_or(0) == 0) {
    EXPECT_NEAR(idle_->At("power_draw_watts"), p.idle_power_w, p.idle_power_w * 0.1);
    EXPECT_EQ(idle_->At("clocks_current_sm_clock_hz") / 1e6, p.idle_sm_mhz);
    EXPECT_EQ(idle_->At("clocks_current_memory_clock_hz") / 1e6, p.idle_memory_mhz);
    EXPECT_EQ(idle_->At("pstate"), p.pstate_idle);
    EXPECT_EQ(idle_->At("clocks_event_reasons_gpu_idle"), 1);
  }
  if (auto util = load_->Get("utilization_gpu_ratio"); util && *util >= 0.95) {
    EXPECT_NEAR(load_->At("power_draw_watts"), p.load_power_w, p.load_power_w * 0.1);
    EXPECT_EQ(load_->At("pstate"), p.pstate_load);
  }
}

TEST_P(CalibrationTest, SignalsExistWhereTheProfileSaysSo) {
  const GpuProfile& p = *profile_;
  for (const Reading* r : {&*idle_, &*load_}) {
    EXPECT_EQ(r->Get("temperature_memory").has_value(), p.has_memory_temperature);
    EXPECT_EQ(r->Get("fan_speed_ratio").has_value(), p.num_fans > 0);
    EXPECT_EQ(r->Get("ecc_mode_current").has_value(), p.has_ecc);
    EXPECT_EQ(r->Get("remapped_rows_correctable").has_value(),
              p.has_row_remapping && p.mig_instances == 0);
    EXPECT_EQ(r->Get("mig_mode_current").has_value(), p.has_mig);
    if (p.has_mig) {
      EXPECT_EQ(r->At("mig_mode_current"), p.mig_instances > 0 ? 1 : 0);
    }
    // With MIG enabled nvidia-smi shows no utilization for the parent.
    EXPECT_EQ(r->Get("utilization_gpu_ratio").has_value(), p.mig_instances == 0);
  }
}

TEST_P(CalibrationTest, ModelReproducesTheLoadTemperature) {
  const GpuProfile& p = *profile_;
  auto util = load_->Get("utilization_gpu_ratio");
  if (!util || *util < 0.95) GTEST_SKIP() << "load reading is not a full load";
  // Steady state of the thermal model at the reading's power.
  const double power = load_->At("power_draw_watts");
  EXPECT_NEAR(p.ambient_c + p.die_c_per_w * power, load_->At("temperature_gpu"), 3);
  if (p.has_memory_temperature) {
    const double mem = p.ambient_c + p.memory_offset_c + p.memory_c_per_w * power +
                       p.memory_c_per_bw_pct * load_->At("utilization_memory_ratio") * 100;
    EXPECT_NEAR(mem, load_->At("temperature_memory"), 4);
  }
  // And the running model gets there: settled full-load samples sit near it.
  SimulatedGpu g(p, 1, 0);
  int near = 0, full = 0;
  for (int64_t t = 1000; t < 4 * 3600 * 1000; t += 1000) {
    g.AdvanceTo(t);
    if (g.utilization_gpu_pct() < 95 || std::fabs(g.power_mw() / 1000.0 - power) > 30) continue;
    ++full;
    near += std::fabs(g.die_temperature() - load_->At("temperature_gpu")) < 4;
  }
  ASSERT_GT(full, 20);
  EXPECT_GT(near, full / 2);
}

INSTANTIATE_TEST_SUITE_P(
    Readings, CalibrationTest,
    ::testing::Values(Case{"h200", "nvidia-h200"}, Case{"h200mig", "nvidia-h200-mig"},
                      Case{"h100", "nvidia-h100-80gb-hbm3"}, Case{"h100mig", "nvidia-h100-mig"},
                      Case{"l40s", "nvidia-l40s"},
                      Case{"rtx4080s", "nvidia-geforce-rtx-4080-super"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.key); });

}  // namespace
}  // namespace gpumon::sim
