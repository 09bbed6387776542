// SimulatedGpu: a deterministic physical model of one GPU.
//
// Contract: the model integrates with a fixed step (kStepMs). AdvanceTo(t)
// runs every step up to t; accessors report the state after the last step.
// Everything is a pure function of (profile, seed, index, scenario effects,
// the times faults were injected) and of the step count, never of how often
// or when the model is queried: two models with the same inputs advanced to
// the same time hold bit-identical values, and different seeds give
// different series.
//
// Physics, per step: the workload schedule (workload.h) gives utilization and
// a power intensity; power = idle + (load - idle) * util * intensity * clock
// scale, capped at the enforced limit by lowering the SM clock (SwPowerCap);
// die and HBM temperatures follow power with first-order lags. Thermal
// protection works from the sensors at the start of the step: the die at its
// maximum operating temperature, or the HBM at its maximum operating
// temperature (the memory slowdown limit), lower the clocks with
// SwThermalSlowdown; the die at its slowdown temperature, or the HBM
// kMemoryHwSlowdownMarginC above its limit, halve them with HwThermalSlowdown
// + HwSlowdown. The memory slowdowns release kMemorySlowdownHysteresisC
// below their thresholds. An idle GPU reports GpuIdle and its idle clocks. Cumulative
// counters (energy, clock-event time, PCIe/NVLink traffic, ECC, replays, link
// errors) never decrease.
//
// Scenario effects (scenario_effects.h), set before the first step, change
// the workload, the cooling, the links and the error rates over time and
// raise XIDs at their own step times. Ground truth (scenario_truth.h) is
// recorded as things happen, whether a scenario, a fault or nothing caused
// them.
//
// Not thread-safe: SimulatedFleet holds a lock per GPU.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/profile.h"
#include "sim/scenario_effects.h"
#include "sim/scenario_truth.h"
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

// How far above its maximum operating temperature the HBM triggers the
// hardware slowdown.
inline constexpr double kMemoryHwSlowdownMarginC = 3.0;
// How far below its threshold the HBM must cool before a memory slowdown
// releases.
inline constexpr double kMemorySlowdownHysteresisC = 2.0;

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

// An owning pointer that copies what it points at (the model is copyable).
// Its members are instantiated only where T is complete.
template <typename T>
class ClonePtr {
 public:
  ClonePtr() = default;
  ClonePtr(const ClonePtr& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  ClonePtr& operator=(const ClonePtr& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  ClonePtr(ClonePtr&&) noexcept = default;
  ClonePtr& operator=(ClonePtr&&) noexcept = default;
  ~ClonePtr() = default;
  void reset(std::unique_ptr<T> p) { p_ = std::move(p); }
  T* get() const { return p_.get(); }
  T& operator*() const { return *p_; }
  T* operator->() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  std::unique_ptr<T> p_;
};

struct PendingXid {
  uint32_t xid = 0;
  int64_t t_ms = 0;  // simulated time it was raised
};

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
  ~SimulatedGpu();
  SimulatedGpu(const SimulatedGpu&);
  SimulatedGpu& operator=(const SimulatedGpu&);
  SimulatedGpu(SimulatedGpu&&) noexcept;
  SimulatedGpu& operator=(SimulatedGpu&&) noexcept;

  // What scenarios do to this GPU; call before the first AdvanceTo. Empty
  // effects change nothing.
  void SetEffects(const GpuEffects& effects);

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
  int pcie_width() const { return pcie_width_; }
  uint64_t pcie_tx_bytes() const { return static_cast<uint64_t>(pcie_tx_bytes_); }
  uint64_t pcie_rx_bytes() const { return static_cast<uint64_t>(pcie_rx_bytes_); }
  uint32_t pcie_replays() const { return pcie_replays_; }

  // NVLink (link < profile().nvlink_links).
  uint64_t nvlink_tx_kib(int link) const;
  uint64_t nvlink_rx_kib(int link) const;
  uint64_t nvlink_errors(int link, NvLinkError kind) const;
  bool nvlink_active(int link) const { return !(nvlink_down_mask_ >> link & 1); }

  // Memory errors.
  uint64_t ecc_errors(bool uncorrected, bool aggregate) const;
  RemappedRows remapped_rows() const { return remapped_; }

  // Faults.
  void InjectXid(uint32_t xid) { RaiseXid(xid, -1); }
  bool has_pending_xids() const { return !pending_xids_.empty(); }
  std::vector<uint32_t> TakePendingXids();         // codes only
  std::vector<PendingXid> TakePendingXidEvents();  // with their times
  void MarkLost() { Lose(-1); }                    // falls off the bus; queues XID 79
  bool lost() const { return lost_; }
  void SetCoolingFailure(bool failed) { cooling_failed_ = failed; }
  bool cooling_failed() const { return cooling_failed_; }
  // Uncorrectable ECC error: counts it, marks a row remap pending and queues
  // XID 48 (and 63 where rows are remapped).
  void InjectUncorrectableEcc() { UncorrectableEcc(-1); }

  // Ground truth, in the order it happened.
  const std::vector<TruthRecord>& truth() const { return truth_; }

 private:
  struct ScenarioState;
  struct StepConditions;

  void Step();
  void StepEffects(StepConditions* c);
  bool Chance(uint64_t channel, double rate_per_hour) const;
  void RaiseXid(uint32_t xid, int scenario);
  void Lose(int scenario);
  void UncorrectableEcc(int scenario);
  void RowRemapFailure(int scenario);
  void Record(TruthEvent event, int scenario, int64_t detail = -1);
  void RecordFirst(TruthEvent event, int64_t detail = -1);

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
  int pcie_width_ = 0;
  uint32_t nvlink_down_mask_ = 0;
  bool mem_sw_ = false;  // memory slowdown engaged (with hysteresis)
  bool mem_hw_ = false;

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
  std::vector<PendingXid> pending_xids_;

  // Scenarios; null when none touches this GPU.
  ClonePtr<ScenarioState> fx_;
  std::vector<TruthRecord> truth_;
  uint32_t truth_seen_ = 0;  // bit per TruthEvent already recorded
};

}  // namespace gpumon::sim
