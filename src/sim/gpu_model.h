// SimulatedGpu: a deterministic physical model of one GPU.
//
// Contract: the model integrates with a fixed step (kStepMs). AdvanceTo(t)
// runs every step up to t; accessors report the state after the last step.
// Everything is a pure function of (profile, seed, index, the times faults
// were injected) and of the step count, never of how often or when the model
// is queried: two models with the same inputs advanced to the same time hold
// bit-identical values, and different seeds give different series.
//
// Physics, per step: the workload schedule (workload.h) gives utilization and
// a power intensity; power = idle + (load - idle) * util * intensity * clock
// scale, capped at the enforced limit by lowering the SM clock (SwPowerCap);
// die and HBM temperatures follow power with first-order lags; above the
// slowdown temperature clocks drop (SwThermal, then HwThermal + HwSlowdown);
// an idle GPU reports GpuIdle and its idle clocks. Cumulative counters
// (energy, clock-event time, PCIe/NVLink traffic, ECC, replays, link errors)
// never decrease.
//
// Not thread-safe: SimulatedFleet holds a lock per GPU.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/profile.h"
#include "sim/workload.h"

namespace gpumon::sim {

// Clock event reason bits; the values are NVML's (nvmlClocksEventReason*).
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSwThermalSlowdown = 0x20;
inline constexpr uint64_t kReasonHwThermalSlowdown = 0x40;
inline constexpr uint64_t kReasonHwPowerBrakeSlowdown = 0x80;
// Every reason NVML defines (0x1..0x100): what real GPUs report as supported.
inline constexpr uint64_t kSupportedReasons = 0x1FF;

// Cumulative time counters of clock events.
enum class ClockEventCounter {
  kSwPowerCap,
  kSyncBoost,
  kSwThermal,
  kHwThermal,
  kHwPowerBrake,
  kLowUtilization,
};
inline constexpr int kClockEventCounters = 6;

// NVLink error counters, in nvmlNvLinkErrorCounter_t order.
enum class NvLinkError { kReplay, kRecovery, kCrcFlit, kCrcData, kEccData };
inline constexpr int kNvLinkErrorKinds = 5;
inline constexpr int kMaxNvLinks = 18;

struct RemappedRows {
  uint32_t correctable = 0;
  uint32_t uncorrectable = 0;
  bool pending = false;
  bool failure = false;
};

class SimulatedGpu {
 public:
  static constexpr int64_t kStepMs = 100;

  SimulatedGpu(const GpuProfile& profile, uint64_t fleet_seed, int index);

  // Integrates up to t_ms (no-op when t_ms is not ahead of now_ms()).
  void AdvanceTo(int64_t t_ms);
  int64_t now_ms() const { return now_ms_; }

  const GpuProfile& profile() const { return *profile_; }
  int index() const { return index_; }

  // Identity.
  const std::string& uuid() const { return uuid_; }  // "GPU-xxxxxxxx-xxxx-..."
  std::string mig_uuid(int instance) const;          // "MIG-xxxxxxxx-xxxx-..."
  uint32_t pci_domain() const;
  uint32_t pci_bus() const;

  // Workload.
  PhaseKind phase() const { return phase_; }
  unsigned utilization_gpu_pct() const { return util_gpu_pct_; }
  unsigned utilization_memory_pct() const { return util_mem_pct_; }
  unsigned encoder_pct() const { return encoder_pct_; }
  unsigned decoder_pct() const { return decoder_pct_; }

  // Power.
  uint32_t power_mw() const;          // one-second average
  uint32_t power_instant_mw() const;  // this step
  uint32_t power_limit_mw() const { return profile_->power_limit_default_w * 1000; }
  uint64_t energy_mj() const { return static_cast<uint64_t>(energy_mj_); }

  // Thermal.
  double die_temperature() const { return t_die_; }
  double memory_temperature() const { return t_mem_; }
  int temperature_c() const;
  int memory_temperature_c() const;
  unsigned fan_speed_pct(int fan) const;

  // Clocks and performance state.
  uint32_t clock_mhz(ClockDomain domain) const { return clocks_[static_cast<int>(domain)]; }
  uint64_t clocks_event_reasons() const { return reasons_; }
  uint64_t clock_event_ns(ClockEventCounter c) const { return event_ns_[static_cast<int>(c)]; }
  int pstate() const { return pstate_; }

  // Memory.
  uint64_t memory_used_bytes() const;

  // PCIe.
  int pcie_gen() const { return pcie_gen_; }
  int pcie_width() const { return profile_->pcie_max_width; }
  uint64_t pcie_tx_bytes() const { return static_cast<uint64_t>(pcie_tx_bytes_); }
  uint64_t pcie_rx_bytes() const { return static_cast<uint64_t>(pcie_rx_bytes_); }
  uint32_t pcie_replays() const { return pcie_replays_; }

  // NVLink (link < profile().nvlink_links).
  uint64_t nvlink_tx_kib(int link) const;
  uint64_t nvlink_rx_kib(int link) const;
  uint64_t nvlink_errors(int link, NvLinkError kind) const;

  // Memory errors.
  uint64_t ecc_errors(bool uncorrected, bool aggregate) const;
  RemappedRows remapped_rows() const { return remapped_; }

  // Faults.
  void InjectXid(uint32_t xid) { pending_xids_.push_back(xid); }
  bool has_pending_xids() const { return !pending_xids_.empty(); }
  std::vector<uint32_t> TakePendingXids();
  void MarkLost();  // falls off the bus; queues XID 79
  bool lost() const { return lost_; }
  void SetCoolingFailure(bool failed) { cooling_failed_ = failed; }
  bool cooling_failed() const { return cooling_failed_; }
  // Uncorrectable ECC error: counts it, marks a row remap pending and queues
  // XID 48 (and 63 where rows are remapped).
  void InjectUncorrectableEcc();

 private:
  void Step();
  bool Chance(uint64_t channel, double rate_per_hour) const;

  const GpuProfile* profile_;
  int index_;
  uint64_t seed_;
  std::string uuid_;
  WorkloadSchedule schedule_;

  // Per-step smoothing factors, 1 - exp(-step / tau).
  double alpha_power_;
  double alpha_die_;
  double alpha_mem_temp_;
  double alpha_mem_used_;
  double alpha_fan_;

  // Chronic weaknesses chosen once from the seed: a few GPUs show errors.
  double ecc_rate_per_hour_ = 0;
  double pcie_replay_rate_per_hour_ = 0;
  int weak_link_ = -1;
  std::array<double, kMaxNvLinks> link_share_{};

  // State after the last step.
  int64_t now_ms_ = 0;
  uint64_t step_ = 0;
  PhaseKind phase_ = PhaseKind::kIdle;
  unsigned util_gpu_pct_ = 0;
  unsigned util_mem_pct_ = 0;
  unsigned encoder_pct_ = 0;
  unsigned decoder_pct_ = 0;
  double power_inst_w_ = 0;
  double power_avg_w_ = 0;
  double t_die_ = 0;
  double t_mem_ = 0;
  double fan_pct_ = 0;
  double mem_used_ = 0;
  std::array<uint32_t, 4> clocks_{};
  uint64_t reasons_ = 0;
  int pstate_ = 0;
  int pcie_gen_ = 0;

  // Counters.
  double energy_mj_ = 0;
  std::array<uint64_t, kClockEventCounters> event_ns_{};
  double pcie_tx_bytes_ = 0;
  double pcie_rx_bytes_ = 0;
  uint32_t pcie_replays_ = 0;
  double nvlink_tx_kib_ = 0;
  double nvlink_rx_kib_ = 0;
  std::array<std::array<uint64_t, kNvLinkErrorKinds>, kMaxNvLinks> nvlink_errors_{};
  uint64_t ecc_corrected_volatile_ = 0;
  uint64_t ecc_uncorrected_volatile_ = 0;
  uint64_t ecc_corrected_history_ = 0;  // aggregate before this boot
  RemappedRows remapped_;

  bool lost_ = false;
  bool cooling_failed_ = false;
  std::vector<uint32_t> pending_xids_;
};

}  // namespace gpumon::sim
