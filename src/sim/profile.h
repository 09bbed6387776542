// GPU model profiles: the constants that make a simulated GPU look like a
// particular real one.
//
// Contract: a GpuProfile is immutable static data. Numbers are calibrated from
// the real nvidia-smi readings under ../shared/reference/gpu-readings (see the
// comments in profile.cc and docs/simulator.md); capability flags say which
// NVML signals the model has, and the fake NVML answers NOT_SUPPORTED for
// anything a flag rules out. FindProfile returns nullptr for unknown keys;
// pointers it returns stay valid for the life of the process.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gpumon::sim {

enum class ClockDomain { kGraphics = 0, kSm = 1, kMemory = 2, kVideo = 3 };

// Which mix of workload phases a GPU of this class runs (see workload.h).
enum class WorkloadMix { kDatacenter, kWorkstation, kConsumer };

struct GpuProfile {
  // Identity, as NVML reports it.
  std::string_view key{};   // spec key, e.g. "h200"
  std::string_view name{};  // nvmlDeviceGetName, e.g. "NVIDIA H200"
  std::string_view vbios_version{};
  uint32_t pci_device_id = 0;     // device << 16 | vendor
  uint32_t pci_subsystem_id = 0;  // subsystem device << 16 | subsystem vendor
  WorkloadMix workload_mix = WorkloadMix::kDatacenter;

  // Power, watts. Draw is idle_power_w + (load_power_w - idle_power_w) *
  // utilization * phase intensity; intensities above 1 push past the limit.
  double idle_power_w = 0;
  double load_power_w = 0;  // typical full-utilization draw (intensity 1)
  uint32_t power_limit_min_w = 0;
  uint32_t power_limit_default_w = 0;
  uint32_t power_limit_max_w = 0;

  // First-order thermal model: the die settles at ambient_c + die_c_per_w *
  // power with time constant die_tau_s; HBM at ambient_c + memory_offset_c +
  // memory_c_per_w * power + memory_c_per_bw_pct * memory utilization %.
  double ambient_c = 25;
  double die_c_per_w = 0;
  double die_tau_s = 20;
  // The GPU's own temperature limits, as NVML reports them
  // (nvmlDeviceGetTemperatureThreshold): the die's maximum operating
  // temperature (software thermal slowdown starts there), the slowdown
  // threshold (hardware slowdown), the shutdown threshold, and the HBM's
  // maximum operating temperature (0: the model reports none).
  double gpu_max_operating_temp_c = 87;
  double slowdown_temp_c = 89;
  double shutdown_temp_c = 92;
  double memory_max_operating_temp_c = 0;
  double memory_offset_c = 0;
  double memory_c_per_w = 0;
  double memory_c_per_bw_pct = 0;
  double memory_tau_s = 60;

  // Clocks, MHz: under load (max) and when idle.
  uint32_t max_graphics_mhz = 0;
  uint32_t max_sm_mhz = 0;
  uint32_t max_memory_mhz = 0;
  uint32_t max_video_mhz = 0;
  uint32_t idle_graphics_mhz = 0;
  uint32_t idle_sm_mhz = 0;
  uint32_t idle_memory_mhz = 0;
  uint32_t idle_video_mhz = 0;
  int pstate_idle = 0;
  int pstate_load = 0;

  // Frame buffer, bytes. Free = total - reserved - used (nvmlMemory_v2_t).
  uint64_t memory_total_bytes = 0;
  uint64_t memory_reserved_bytes = 0;
  uint64_t idle_memory_used_bytes = 0;

  // PCIe link; consumer cards drop to a low generation when idle.
  int pcie_max_gen = 0;
  int pcie_max_width = 0;
  int pcie_idle_gen = 0;

  // Capabilities: which NVML signals exist on this model.
  bool has_memory_temperature = false;
  int nvlink_links = 0;  // 0..18
  bool has_ecc = false;
  bool has_row_remapping = false;
  bool has_retired_pages = false;
  int num_fans = 0;
  bool has_power_instant = false;
  bool has_energy = false;
  bool has_clock_event_counters = false;
  bool has_pcie_byte_counters = false;
  bool has_encoder = false;  // NVML reports encoder utilization
  bool has_decoder = false;
  bool has_pcie_replay = false;
  int nvenc_engines = 0;  // 0: encoder utilization always reads 0

  // MIG. has_mig: the GPU supports MIG; mig_instances > 0: MIG is enabled
  // with that many GPU instances of mig_profile_name.
  bool has_mig = false;
  int max_mig_devices = 0;
  int mig_instances = 0;
  std::string_view mig_profile_name{};
  uint64_t mig_instance_memory_bytes = 0;
};

uint32_t MaxClockMhz(const GpuProfile& profile, ClockDomain domain);
uint32_t IdleClockMhz(const GpuProfile& profile, ClockDomain domain);

// Profile for a spec key ("h200", "h200mig", "h100", "h100mig", "l40s",
// "rtx4080s"), or nullptr.
const GpuProfile* FindProfile(std::string_view key);

// All keys, in a stable order (for error messages and docs).
std::vector<std::string_view> ProfileKeys();

}  // namespace gpumon::sim
