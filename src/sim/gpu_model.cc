#include "sim/gpu_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/noise.h"

namespace gpumon::sim {
namespace {

// Noise channels: each random draw of a step uses its own channel so draws
// stay independent.
enum Channel : uint64_t {
  kChPowerNoise = 1,
  kChPcieNoise,
  kChNvlinkNoise,
  kChEccCorrected,
  kChPcieReplay,
  kChNvlinkReplay,
  kChNvlinkRecovery,
  kChNvlinkCrcFlit,
  kChNvlinkCrcData,
  kChWorkload,
  kChUuid,
  kChMigUuid,
  kChWeakness,
  kChLinks,
  kChHistory,
};

constexpr double kStepSeconds = SimulatedGpu::kStepMs / 1000.0;
constexpr double kMsPerHour = 3600.0 * 1000.0;

double Alpha(double tau_s) { return 1.0 - std::exp(-kStepSeconds / tau_s); }

std::string FormatUuid(const char* prefix, uint64_t hi, uint64_t lo) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%08x-%04x-%04x-%04x-%012llx", prefix,
                static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xFFFF),
                static_cast<unsigned>(hi & 0xFFFF), static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

// PCI buses of an 8-GPU HGX board; larger fleets continue in further domains.
constexpr uint32_t kBuses[8] = {0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB};

}  // namespace

SimulatedGpu::SimulatedGpu(const GpuProfile& profile, uint64_t fleet_seed, int index)
    : profile_(&profile),
      index_(index),
      seed_(Hash(fleet_seed, static_cast<uint64_t>(index))),
      uuid_(FormatUuid("GPU-", Hash(seed_, kChUuid, 0), Hash(seed_, kChUuid, 1))),
      schedule_(profile.workload_mix, Hash(seed_, kChWorkload)),
      alpha_power_(Alpha(1.0)),
      alpha_die_(Alpha(profile.die_tau_s)),
      alpha_mem_temp_(Alpha(profile.memory_tau_s)),
      alpha_mem_used_(Alpha(2.0)),
      alpha_fan_(Alpha(5.0)) {
  // A few GPUs of a fleet are chronically flaky; most never log an error.
  const double weak = ToUnit(Hash(seed_, kChWeakness, 0));
  if (profile.has_ecc && weak < 0.05) ecc_rate_per_hour_ = 3.0;
  if (ToUnit(Hash(seed_, kChWeakness, 1)) < 0.03) pcie_replay_rate_per_hour_ = 6.0;
  if (profile.nvlink_links > 0 && ToUnit(Hash(seed_, kChWeakness, 2)) < 0.03) {
    weak_link_ =
        static_cast<int>(Hash(seed_, kChWeakness, 3) % static_cast<uint64_t>(profile.nvlink_links));
  }
  // Traffic is spread unevenly but stably across links.
  double total = 0;
  for (int l = 0; l < profile.nvlink_links; ++l) {
    link_share_[l] = 0.9 + 0.2 * ToUnit(Hash(seed_, kChLinks, static_cast<uint64_t>(l)));
    total += link_share_[l];
  }
  for (int l = 0; l < profile.nvlink_links; ++l) link_share_[l] /= total;

  // History from before "boot": energy since the driver loaded and, for weak
  // GPUs, a few old corrected errors and remapped rows.
  const double uptime_h = 1 + 720 * ToUnit(Hash(seed_, kChHistory, 0));
  energy_mj_ =
      std::floor(uptime_h * kMsPerHour * 0.5 * (profile.idle_power_w + profile.load_power_w));
  if (ecc_rate_per_hour_ > 0) {
    ecc_corrected_history_ = 1 + Hash(seed_, kChHistory, 1) % 40;
    if (profile.has_row_remapping) {
      remapped_.correctable = 1 + static_cast<uint32_t>(Hash(seed_, kChHistory, 2) % 3);
    }
  }

  // Start idle and in thermal equilibrium.
  power_inst_w_ = power_avg_w_ = profile.idle_power_w;
  t_die_ = profile.ambient_c + profile.die_c_per_w * profile.idle_power_w;
  t_mem_ =
      profile.ambient_c + profile.memory_offset_c + profile.memory_c_per_w * profile.idle_power_w;
  mem_used_ = static_cast<double>(profile.idle_memory_used_bytes);
  for (ClockDomain d :
       {ClockDomain::kGraphics, ClockDomain::kSm, ClockDomain::kMemory, ClockDomain::kVideo}) {
    clocks_[static_cast<int>(d)] = IdleClockMhz(profile, d);
  }
  reasons_ = kReasonGpuIdle;
  pstate_ = profile.pstate_idle;
  pcie_gen_ = profile.pcie_idle_gen;
}

std::string SimulatedGpu::mig_uuid(int instance) const {
  const uint64_t i = static_cast<uint64_t>(instance);
  return FormatUuid("MIG-", Hash(seed_, kChMigUuid, 2 * i), Hash(seed_, kChMigUuid, 2 * i + 1));
}

uint32_t SimulatedGpu::pci_domain() const { return static_cast<uint32_t>(index_ / 8); }
uint32_t SimulatedGpu::pci_bus() const { return kBuses[index_ % 8]; }

void SimulatedGpu::AdvanceTo(int64_t t_ms) {
  if (lost_) return;  // a GPU off the bus reports nothing new
  while (now_ms_ + kStepMs <= t_ms) Step();
}

bool SimulatedGpu::Chance(uint64_t channel, double rate_per_hour) const {
  if (rate_per_hour <= 0) return false;
  return ToUnit(Hash(seed_, step_, channel)) < rate_per_hour * kStepMs / kMsPerHour;
}

void SimulatedGpu::Step() {
  const GpuProfile& p = *profile_;
  now_ms_ += kStepMs;
  ++step_;
  const Phase& phase = schedule_.PhaseAt(now_ms_);
  WorkloadSample w = SampleAt(phase, now_ms_);
  if (p.nvenc_engines == 0) w.encoder = 0;
  phase_ = phase.kind;
  const bool idle = w.util < 0.005;

  // Thermal protection lowers clocks from the current die temperature.
  uint64_t reasons = 0;
  double scale = 1.0;
  if (t_die_ >= p.hw_slowdown_temp_c) {
    scale = 0.5;
    reasons |= kReasonHwThermalSlowdown | kReasonHwSlowdown;
  } else if (t_die_ >= p.slowdown_temp_c) {
    scale = std::clamp(1.0 - 0.06 * (t_die_ - p.slowdown_temp_c), 0.55, 1.0);
    reasons |= kReasonSwThermalSlowdown;
  }

  // Power follows utilization; the power controller holds it at the limit by
  // lowering the clock further.
  const double limit = p.power_limit_default_w;
  const double dynamic = (p.load_power_w - p.idle_power_w) * w.util * w.intensity;
  double power = p.idle_power_w + dynamic * scale;
  if (power > limit && dynamic > 0) {
    scale *= (limit - p.idle_power_w) / (power - p.idle_power_w);
    power = limit;
    reasons |= kReasonSwPowerCap;
  }
  const double noise = ToUnit(Hash(seed_, step_, kChPowerNoise)) - 0.5;
  power_inst_w_ = power * (1.0 + 0.03 * noise);
  power_avg_w_ += (power_inst_w_ - power_avg_w_) * alpha_power_;
  energy_mj_ += power_inst_w_ * static_cast<double>(kStepMs);  // W * ms = mJ

  // First-order thermal lags toward the steady state for the current power.
  // Failed cooling raises the effective ambient and thermal resistance.
  const double ambient = p.ambient_c + (cooling_failed_ ? 15.0 : 0.0);
  const double resistance = p.die_c_per_w * (cooling_failed_ ? 4.0 : 1.0);
  t_die_ += (ambient + resistance * power_avg_w_ - t_die_) * alpha_die_;
  if (p.has_memory_temperature) {
    const double target = ambient + p.memory_offset_c +
                          p.memory_c_per_w * (cooling_failed_ ? 4.0 : 1.0) * power_avg_w_ +
                          p.memory_c_per_bw_pct * w.mem_util * 100.0;
    t_mem_ += (target - t_mem_) * alpha_mem_temp_;
  }
  if (p.num_fans > 0) {
    // Zero-RPM below 50 C, then a linear curve; a failed fan reads 0.
    double target = t_die_ < 50 ? 0.0 : std::clamp(30.0 + (t_die_ - 50.0) * 2.0, 30.0, 100.0);
    if (cooling_failed_) target = 0;
    fan_pct_ += (target - fan_pct_) * alpha_fan_;
  }

  // Clocks, P-state and PCIe link follow load.
  auto& c = clocks_;
  if (idle) {
    reasons |= kReasonGpuIdle;
    c[0] = p.idle_graphics_mhz;
    c[1] = p.idle_sm_mhz;
    c[2] = p.idle_memory_mhz;
    c[3] = (w.encoder > 0 || w.decoder > 0) ? p.max_video_mhz : p.idle_video_mhz;
    pstate_ = p.pstate_idle;
    pcie_gen_ = p.pcie_idle_gen;
  } else {
    // Clocks move in 15 MHz bins, never below the idle clock.
    const uint32_t sm = static_cast<uint32_t>(p.max_sm_mhz * scale / 15.0) * 15;
    c[1] = std::max(sm, p.idle_sm_mhz);
    c[0] = std::max(static_cast<uint32_t>(p.max_graphics_mhz * scale / 15.0) * 15,
                    p.idle_graphics_mhz);
    c[2] = p.max_memory_mhz;
    c[3] = p.max_video_mhz;
    pstate_ = p.pstate_load;
    pcie_gen_ = p.pcie_max_gen;
  }
  reasons_ = reasons;

  constexpr uint64_t kStepNs = static_cast<uint64_t>(kStepMs) * 1000000;
  if (reasons & kReasonSwPowerCap)
    event_ns_[static_cast<int>(ClockEventCounter::kSwPowerCap)] += kStepNs;
  if (reasons & kReasonSwThermalSlowdown)
    event_ns_[static_cast<int>(ClockEventCounter::kSwThermal)] += kStepNs;
  if (reasons & kReasonHwThermalSlowdown)
    event_ns_[static_cast<int>(ClockEventCounter::kHwThermal)] += kStepNs;
  if (reasons & kReasonHwPowerBrakeSlowdown)
    event_ns_[static_cast<int>(ClockEventCounter::kHwPowerBrake)] += kStepNs;
  if (idle) event_ns_[static_cast<int>(ClockEventCounter::kLowUtilization)] += kStepNs;

  // Utilization as NVML reports it, in whole percent.
  util_gpu_pct_ = static_cast<unsigned>(std::lround(w.util * 100));
  util_mem_pct_ = static_cast<unsigned>(std::lround(w.mem_util * 100));
  encoder_pct_ = static_cast<unsigned>(std::lround(w.encoder * 100));
  decoder_pct_ = static_cast<unsigned>(std::lround(w.decoder * 100));

  // Allocations ramp over a couple of seconds.
  const double usable = static_cast<double>(p.memory_total_bytes - p.memory_reserved_bytes -
                                            p.idle_memory_used_bytes);
  const double mem_target =
      static_cast<double>(p.idle_memory_used_bytes) + phase.mem_fraction * usable;
  mem_used_ += (mem_target - mem_used_) * alpha_mem_used_;

  // Traffic counters.
  const double jitter = 0.8 + 0.4 * ToUnit(Hash(seed_, step_, kChPcieNoise));
  pcie_rx_bytes_ += phase.pcie_rx_gbps * 1e9 * kStepSeconds * jitter;
  pcie_tx_bytes_ += phase.pcie_tx_gbps * 1e9 * kStepSeconds * jitter;
  if (p.nvlink_links > 0 && phase.nvlink_gbps > 0) {
    const double link_jitter = 0.9 + 0.2 * ToUnit(Hash(seed_, step_, kChNvlinkNoise));
    const double kib = phase.nvlink_gbps * 1e9 / 1024.0 * kStepSeconds * w.util;
    nvlink_tx_kib_ += kib * link_jitter;
    nvlink_rx_kib_ += kib * (2.0 - link_jitter);
  }

  // Rare errors; the busier the GPU, the likelier.
  const double load = idle ? 0.2 : 1.0;
  if (p.has_ecc && Chance(kChEccCorrected, (0.01 + ecc_rate_per_hour_) * load)) {
    ++ecc_corrected_volatile_;
  }
  if (Chance(kChPcieReplay, (0.01 + pcie_replay_rate_per_hour_) * load)) ++pcie_replays_;
  if (p.nvlink_links > 0) {
    const bool weak = weak_link_ >= 0;
    const int link =
        weak ? weak_link_ : static_cast<int>(step_ % static_cast<uint64_t>(p.nvlink_links));
    auto& e = nvlink_errors_[link];
    if (Chance(kChNvlinkReplay, weak ? 10.0 : 0.02)) ++e[static_cast<int>(NvLinkError::kReplay)];
    if (Chance(kChNvlinkRecovery, weak ? 0.5 : 0.0)) ++e[static_cast<int>(NvLinkError::kRecovery)];
    if (Chance(kChNvlinkCrcFlit, weak ? 4.0 : 0.01)) ++e[static_cast<int>(NvLinkError::kCrcFlit)];
    if (Chance(kChNvlinkCrcData, weak ? 0.5 : 0.0)) ++e[static_cast<int>(NvLinkError::kCrcData)];
  }
}

uint32_t SimulatedGpu::power_mw() const {
  return static_cast<uint32_t>(std::lround(power_avg_w_ * 1000));
}
uint32_t SimulatedGpu::power_instant_mw() const {
  return static_cast<uint32_t>(std::lround(power_inst_w_ * 1000));
}
int SimulatedGpu::temperature_c() const { return static_cast<int>(std::lround(t_die_)); }
int SimulatedGpu::memory_temperature_c() const { return static_cast<int>(std::lround(t_mem_)); }

unsigned SimulatedGpu::fan_speed_pct(int fan) const {
  if (fan < 0 || fan >= profile_->num_fans) return 0;
  // Fans of one card differ by a percent or so.
  const double v = fan_pct_ > 0.5 ? fan_pct_ + fan : 0.0;
  return static_cast<unsigned>(std::clamp(std::lround(v), 0L, 100L));
}

uint64_t SimulatedGpu::memory_used_bytes() const {
  // Reported in whole MiB, as the driver does.
  constexpr uint64_t kMiB = 1024 * 1024;
  const uint64_t used = static_cast<uint64_t>(mem_used_) / kMiB * kMiB;
  return std::min(used, profile_->memory_total_bytes - profile_->memory_reserved_bytes);
}

uint64_t SimulatedGpu::nvlink_tx_kib(int link) const {
  if (link < 0 || link >= profile_->nvlink_links) return 0;
  return static_cast<uint64_t>(nvlink_tx_kib_ * link_share_[link]);
}
uint64_t SimulatedGpu::nvlink_rx_kib(int link) const {
  if (link < 0 || link >= profile_->nvlink_links) return 0;
  return static_cast<uint64_t>(nvlink_rx_kib_ * link_share_[link]);
}
uint64_t SimulatedGpu::nvlink_errors(int link, NvLinkError kind) const {
  if (link < 0 || link >= profile_->nvlink_links) return 0;
  return nvlink_errors_[link][static_cast<int>(kind)];
}

uint64_t SimulatedGpu::ecc_errors(bool uncorrected, bool aggregate) const {
  if (uncorrected) return ecc_uncorrected_volatile_;  // none before this boot
  return ecc_corrected_volatile_ + (aggregate ? ecc_corrected_history_ : 0);
}

std::vector<uint32_t> SimulatedGpu::TakePendingXids() {
  std::vector<uint32_t> out;
  out.swap(pending_xids_);
  return out;
}

void SimulatedGpu::MarkLost() {
  if (lost_) return;
  lost_ = true;
  InjectXid(79);  // "GPU has fallen off the bus"
}

void SimulatedGpu::InjectUncorrectableEcc() {
  if (!profile_->has_ecc) return;
  ++ecc_uncorrected_volatile_;
  InjectXid(48);  // double-bit ECC error
  if (profile_->has_row_remapping) {
    ++remapped_.uncorrectable;
    remapped_.pending = true;
    InjectXid(63);  // row remapping recorded
  }
}

}  // namespace gpumon::sim
