#include "sim/profile.h"

#include <array>

namespace gpumon::sim {
namespace {

constexpr uint64_t kMiB = 1024ULL * 1024;

// Calibration sources (../shared/reference/gpu-readings, nvidia-smi):
//   h200:     nvidia-h200__590.48.01__{idle,load}.metrics
//   h100:     nvidia-h100-80gb-hbm3__590.48.01__{idle,load}.metrics
//   l40s:     nvidia-l40s__595.80__{idle,load}.metrics
//   rtx4080s: nvidia-geforce-rtx-4080-super__595.71.05__{idle,load}.metrics
// Slowdown temperatures are reading temperature.gpu + temperature.gpu.tlimit
// (the margin to slowdown). Thermal resistances come from the idle and load
// temperature/power pairs.

GpuProfile MakeH200() {
  return GpuProfile{
      .key = "h200",
      .name = "NVIDIA H200",
      .vbios_version = "96.00.A5.00.03",
      .pci_device_id = 0x233510DE,
      .pci_subsystem_id = 0x18BE10DE,
      .workload_mix = WorkloadMix::kDatacenter,
      .idle_power_w = 77.7,   // idle power.draw 77.71 W
      .load_power_w = 627.4,  // load power.draw 627.4 W at 100% utilization
      .power_limit_min_w = 200,
      .power_limit_default_w = 700,
      .power_limit_max_w = 700,
      // 28 C at 77.7 W, 52 C at 627.4 W.
      .ambient_c = 24.6,
      .die_c_per_w = 0.0437,
      .die_tau_s = 20,
      // Max operating: 28 + tlimit 59; 52 + 35. The others are what Hopper
      // boards report (nvidia-smi -q: slowdown 89, shutdown 92, memory 95).
      .gpu_max_operating_temp_c = 87,
      .slowdown_temp_c = 89,
      .shutdown_temp_c = 92,
      .memory_max_operating_temp_c = 95,
      // HBM 32 C idle, 40 C at 627 W with 7% memory utilization.
      .memory_offset_c = 6.0,
      .memory_c_per_w = 0.0145,
      .memory_c_per_bw_pct = 0.15,
      .memory_tau_s = 60,
      .max_graphics_mhz = 1980,
      .max_sm_mhz = 1980,
      .max_memory_mhz = 3201,
      .max_video_mhz = 1545,  // video clock under load
      .idle_graphics_mhz = 345,
      .idle_sm_mhz = 345,
      .idle_memory_mhz = 3201,  // HBM does not down-clock
      .idle_video_mhz = 765,
      .pstate_idle = 0,  // persistence mode keeps P0 even when idle
      .pstate_load = 0,
      .memory_total_bytes = 143771 * kMiB,  // 150754820096
      .memory_reserved_bytes = 614 * kMiB,  // 643825664
      .idle_memory_used_bytes = 0,
      .pcie_max_gen = 5,
      .pcie_max_width = 16,
      .pcie_idle_gen = 5,
      .has_memory_temperature = true,
      .nvlink_links = 18,
      .has_ecc = true,
      .has_row_remapping = true,
      .has_retired_pages = false,  // Hopper remaps rows instead of retiring pages
      .num_fans = 0,
      .has_power_instant = true,
      .has_energy = true,
      .has_clock_event_counters = true,
      .has_pcie_byte_counters = true,
      .has_encoder = true,  // NVML answers 0: Hopper has NVDEC but no NVENC
      .has_decoder = true,
      .has_pcie_replay = true,
      .nvenc_engines = 0,
      .has_mig = true,
      .max_mig_devices = 7,
  };
}

GpuProfile MakeH100() {
  GpuProfile p = MakeH200();
  p.key = "h100";
  p.name = "NVIDIA H100 80GB HBM3";
  p.vbios_version = "96.00.A5.00.01";
  p.pci_device_id = 0x233010DE;
  p.pci_subsystem_id = 0x16C110DE;
  p.idle_power_w = 69.9;   // idle power.draw 69.85 W
  p.load_power_w = 632.0;  // load power.draw 631.95 W
  // 59 C at 632 W; the idle reading (41 C) was still cooling down from load.
  p.ambient_c = 27;
  p.die_c_per_w = 0.0506;
  p.gpu_max_operating_temp_c = 86;  // 41 + 46 and 59 + 26
  p.slowdown_temp_c = 89;
  p.shutdown_temp_c = 92;
  p.memory_max_operating_temp_c = 95;
  // HBM 54 C at 632 W with 11% memory utilization.
  p.memory_offset_c = 8;
  p.memory_c_per_w = 0.028;
  p.memory_c_per_bw_pct = 0.15;
  p.max_memory_mhz = 2619;
  p.idle_memory_mhz = 2619;
  p.memory_total_bytes = 81559 * kMiB;   // 85520809984
  p.memory_reserved_bytes = 479 * kMiB;  // 502267904
  return p;
}

GpuProfile MakeL40s() {
  return GpuProfile{
      .key = "l40s",
      .name = "NVIDIA L40S",
      .vbios_version = "95.02.66.00.02",
      .pci_device_id = 0x26B910DE,
      .pci_subsystem_id = 0x185110DE,
      .workload_mix = WorkloadMix::kWorkstation,
      // The published "idle" reading ran at 100% utilization (145 W), so idle
      // draw is the card's typical figure; 350 W is the board limit.
      .idle_power_w = 36,
      .load_power_w = 300,
      .power_limit_min_w = 100,
      .power_limit_default_w = 350,
      .power_limit_max_w = 350,
      .ambient_c = 30,
      .die_c_per_w = 0.13,
      .die_tau_s = 25,
      .gpu_max_operating_temp_c = 88,  // 63 + 25 and 54 + 34
      // GDDR boards report no memory limit; Ada data-center boards slow
      // down and shut down a few degrees above the maximum operating one.
      .slowdown_temp_c = 92,
      .shutdown_temp_c = 95,
      .memory_tau_s = 60,
      .max_graphics_mhz = 2520,
      .max_sm_mhz = 2520,
      .max_memory_mhz = 9001,
      .max_video_mhz = 1965,
      .idle_graphics_mhz = 210,
      .idle_sm_mhz = 210,
      .idle_memory_mhz = 405,
      .idle_video_mhz = 1185,
      .pstate_idle = 8,
      .pstate_load = 0,
      .memory_total_bytes = 46068 * kMiB,   // 48305799168
      .memory_reserved_bytes = 609 * kMiB,  // 638582784
      .idle_memory_used_bytes = 0,
      .pcie_max_gen = 4,
      .pcie_max_width = 16,
      .pcie_idle_gen = 4,
      .has_memory_temperature = false,
      .nvlink_links = 0,
      .has_ecc = true,
      .has_row_remapping = true,
      .has_retired_pages = false,
      .num_fans = 0,  // passively cooled
      .has_power_instant = true,
      .has_energy = true,
      .has_clock_event_counters = true,
      .has_pcie_byte_counters = true,
      .has_encoder = true,
      .has_decoder = true,
      .has_pcie_replay = true,
      .nvenc_engines = 3,
      .has_mig = false,
  };
}

GpuProfile MakeRtx4080s() {
  return GpuProfile{
      .key = "rtx4080s",
      .name = "NVIDIA GeForce RTX 4080 SUPER",
      .vbios_version = "95.03.44.00.B2",
      .pci_device_id = 0x270210DE,
      .pci_subsystem_id = 0x51101462,
      .workload_mix = WorkloadMix::kConsumer,
      .idle_power_w = 26.2,  // idle power.draw 26.2 W
      .load_power_w = 285,
      .power_limit_min_w = 150,
      .power_limit_default_w = 320,
      .power_limit_max_w = 400,
      // 43 C at 26 W and 46 C at 84 W with fans stopped (zero-RPM mode).
      .ambient_c = 38,
      .die_c_per_w = 0.12,
      .die_tau_s = 15,
      // GeForce Ada boards: max operating 90, slowdown 97, shutdown 100.
      .gpu_max_operating_temp_c = 90,
      .slowdown_temp_c = 97,
      .shutdown_temp_c = 100,
      .memory_tau_s = 60,
      .max_graphics_mhz = 3165,
      .max_sm_mhz = 3165,
      .max_memory_mhz = 11501,
      .max_video_mhz = 2145,
      .idle_graphics_mhz = 210,
      .idle_sm_mhz = 210,
      .idle_memory_mhz = 405,
      .idle_video_mhz = 1185,
      .pstate_idle = 8,
      .pstate_load = 2,
      .memory_total_bytes = 16376 * kMiB,    // 17171480576
      .memory_reserved_bytes = 434 * kMiB,   // 455081984
      .idle_memory_used_bytes = 596 * kMiB,  // desktop use, 624951296
      .pcie_max_gen = 4,
      .pcie_max_width = 16,
      .pcie_idle_gen = 1,
      .has_memory_temperature = false,
      .nvlink_links = 0,
      .has_ecc = false,
      .has_row_remapping = false,
      .has_retired_pages = false,
      .num_fans = 2,
      .has_power_instant = true,  // the RTX 4080 SUPER reading has power.draw.instant
      .has_energy = true,
      .has_clock_event_counters = true,  // and clocks_event_reasons_counters.*
      .has_pcie_byte_counters = true,
      .has_encoder = true,
      .has_decoder = true,
      .has_pcie_replay = true,
      .nvenc_engines = 2,
      .has_mig = false,
  };
}

// MIG variants: two 3g instances, the layout of the published MIG readings'
// half-GPU partitions; with MIG on, the parent reports no utilization.
GpuProfile WithMig(GpuProfile p, std::string_view key, std::string_view profile_name,
                   uint64_t instance_bytes) {
  p.key = key;
  p.mig_instances = 2;
  p.mig_profile_name = profile_name;
  p.mig_instance_memory_bytes = instance_bytes;
  return p;
}

const std::array<GpuProfile, 6>& Profiles() {
  static const std::array<GpuProfile, 6> kProfiles = {
      MakeH200(), WithMig(MakeH200(), "h200mig", "3g.71gb", 71424 * kMiB),
      MakeH100(), WithMig(MakeH100(), "h100mig", "3g.40gb", 40320 * kMiB),
      MakeL40s(), MakeRtx4080s(),
  };
  return kProfiles;
}

}  // namespace

uint32_t MaxClockMhz(const GpuProfile& p, ClockDomain domain) {
  switch (domain) {
    case ClockDomain::kGraphics:
      return p.max_graphics_mhz;
    case ClockDomain::kSm:
      return p.max_sm_mhz;
    case ClockDomain::kMemory:
      return p.max_memory_mhz;
    case ClockDomain::kVideo:
      return p.max_video_mhz;
  }
  return 0;
}

uint32_t IdleClockMhz(const GpuProfile& p, ClockDomain domain) {
  switch (domain) {
    case ClockDomain::kGraphics:
      return p.idle_graphics_mhz;
    case ClockDomain::kSm:
      return p.idle_sm_mhz;
    case ClockDomain::kMemory:
      return p.idle_memory_mhz;
    case ClockDomain::kVideo:
      return p.idle_video_mhz;
  }
  return 0;
}

const GpuProfile* FindProfile(std::string_view key) {
  for (const GpuProfile& p : Profiles()) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::vector<std::string_view> ProfileKeys() {
  std::vector<std::string_view> keys;
  for (const GpuProfile& p : Profiles()) keys.push_back(p.key);
  return keys;
}

}  // namespace gpumon::sim
