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
  kChScenarioEcc,
  kChScenarioReplay,
  kChFlapReplay,
  kChFlapCrc,
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

// Which first_* event each tracked clock event reason stands for.
constexpr uint64_t kThermalReasons = kReasonSwThermalSlowdown | kReasonHwThermalSlowdown;
constexpr uint64_t kTrackedReasons =
    kThermalReasons | kReasonHwSlowdown | kReasonHwPowerBrakeSlowdown;

constexpr uint32_t Bit(TruthEvent e) { return 1u << static_cast<unsigned>(e); }
constexpr uint32_t kFirstEvents = Bit(TruthEvent::kFirstMemorySlowdown) |
                                  Bit(TruthEvent::kFirstThermalSlowdown) |
                                  Bit(TruthEvent::kFirstHwSlowdown) |
                                  Bit(TruthEvent::kFirstPowerBrake) | Bit(TruthEvent::kFirstXid);

// A thermal-runaway's degradation stops growing at this multiple of the
// time it takes to bring the HBM to its limit.
constexpr double kRunawayMaxProgress = 2.5;
// The HBM's memory utilization the thermal-runaway is calibrated at.
constexpr double kRunawayReferenceBwPct = 25;

}  // namespace

// What the step's scenario effects add to the physics.
struct SimulatedGpu::StepConditions {
  double ambient_c = 0;         // added to the profile's ambient
  double resistance_scale = 1;  // die and HBM thermal resistance factor
  double die_c_per_w = 0;       // added thermal resistance
  double mem_c_per_w = 0;
  double brake_scale = 1;  // < 1: the power brake is asserted
  int pcie_gen_cap = 0;    // 0: none
  int pcie_width = 0;      // 0: the maximum
  double replay_rate = 0;  // added PCIe replays per hour
  double ecc_rate = 0;     // added corrected ECC errors per hour
  int flap_link = -1;      // a flapping link and its error rate per hour
  double link_rate = 0;
};

// Timed actions of the scenarios, and what the model keeps between steps.
struct SimulatedGpu::ScenarioState {
  enum class Action { kStart, kEccDbe, kEccFailure, kFallOff, kCoolingEnd, kPcieDegraded };
  struct Timed {
    int64_t t_ms;
    Action action;
    int scenario;
  };

  GpuEffects effects;
  std::vector<Timed> timed;  // sorted by time
  size_t next = 0;
  int started_fault = -1;  // the first fault scenario that has begun
  // Thermal runaway: added resistance at progress 1, time spent hot.
  double mem_c_per_w_at_limit = 0;
  double die_c_per_w_at_limit = 0;
  int64_t runaway_hot_ms = 0;
  bool runaway_failed = false;
  std::vector<uint8_t> flap_down;  // per flap: down at the last step
  // Per-link traffic, kept only where links flap (a down link moves none).
  bool per_link = false;
  std::array<double, kMaxNvLinks> link_tx_kib{};
  std::array<double, kMaxNvLinks> link_rx_kib{};
};

SimulatedGpu::~SimulatedGpu() = default;
SimulatedGpu::SimulatedGpu(const SimulatedGpu&) = default;
SimulatedGpu& SimulatedGpu::operator=(const SimulatedGpu&) = default;
SimulatedGpu::SimulatedGpu(SimulatedGpu&&) noexcept = default;
SimulatedGpu& SimulatedGpu::operator=(SimulatedGpu&&) noexcept = default;

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
  pcie_width_ = profile.pcie_max_width;
}

void SimulatedGpu::SetEffects(const GpuEffects& effects) {
  if (effects.empty()) return;
  const GpuProfile& p = *profile_;
  fx_.reset(std::make_unique<ScenarioState>());
  ScenarioState& s = *fx_;
  s.effects = effects;
  for (const WorkloadRegime& r : effects.regimes) schedule_.AddRegime(r);
  using A = ScenarioState::Action;
  auto at = [&](int64_t t, A a, int scenario) { s.timed.push_back({t, a, scenario}); };
  for (const auto& e : effects.runaway) {
    at(e.start_ms, A::kStart, e.scenario);
    // Extra resistance that brings the HBM (die: die_share of the way) to
    // its limit at the profile's load, relative to where it settles now.
    const double ref_w = std::min<double>(p.load_power_w, p.power_limit_default_w);
    const double ambient = p.ambient_c + effects.ambient_offset_c;
    const double mem_ref = ambient + p.memory_offset_c + p.memory_c_per_w * ref_w +
                           p.memory_c_per_bw_pct * kRunawayReferenceBwPct;
    const double die_ref = ambient + p.die_c_per_w * ref_w;
    s.mem_c_per_w_at_limit = std::max(0.0, p.memory_max_operating_temp_c - mem_ref) / ref_w;
    s.die_c_per_w_at_limit =
        e.die_share * std::max(0.0, p.gpu_max_operating_temp_c - die_ref) / ref_w;
  }
  for (const auto& e : effects.cooling) {
    at(e.start_ms, A::kStart, e.scenario);
    if (e.end_ms != kForever) at(e.end_ms, A::kCoolingEnd, e.scenario);
  }
  for (const auto& e : effects.ecc) {
    at(e.start_ms, A::kStart, e.scenario);
    at(e.dbe_ms, A::kEccDbe, e.scenario);
    if (e.failure_ms != kForever) at(e.failure_ms, A::kEccFailure, e.scenario);
  }
  for (const auto& e : effects.flaps) at(e.start_ms, A::kStart, e.scenario);
  for (const auto& e : effects.pcie) {
    at(e.start_ms, A::kStart, e.scenario);
    at(e.start_ms, A::kPcieDegraded, e.scenario);
  }
  for (const auto& e : effects.brakes) at(e.start_ms, A::kStart, e.scenario);
  if (effects.fall_off_ms != kForever) {
    at(effects.fall_off_ms, A::kStart, effects.fall_off_scenario);
    at(effects.fall_off_ms, A::kFallOff, effects.fall_off_scenario);
  }
  std::stable_sort(s.timed.begin(), s.timed.end(),
                   [](const auto& a, const auto& b) { return a.t_ms < b.t_ms; });
  s.flap_down.assign(effects.flaps.size(), 0);
  s.per_link = !effects.flaps.empty() && p.nvlink_links > 0;
}

std::string SimulatedGpu::mig_uuid(int instance) const {
  const uint64_t i = static_cast<uint64_t>(instance);
  return FormatUuid("MIG-", Hash(seed_, kChMigUuid, 2 * i), Hash(seed_, kChMigUuid, 2 * i + 1));
}

uint32_t SimulatedGpu::pci_domain() const { return static_cast<uint32_t>(index_ / 8); }
uint32_t SimulatedGpu::pci_bus() const { return kBuses[index_ % 8]; }

void SimulatedGpu::AdvanceTo(int64_t t_ms) {
  // A GPU off the bus reports nothing new.
  while (!lost_ && now_ms_ + kStepMs <= t_ms) Step();
}

bool SimulatedGpu::Chance(uint64_t channel, double rate_per_hour) const {
  if (rate_per_hour <= 0) return false;
  return ToUnit(Hash(seed_, step_, channel)) < rate_per_hour * kStepMs / kMsPerHour;
}

void SimulatedGpu::StepEffects(StepConditions* c) {
  ScenarioState& s = *fx_;
  const GpuEffects& e = s.effects;
  const GpuProfile& p = *profile_;
  const int64_t t = now_ms_;
  using A = ScenarioState::Action;
  while (s.next < s.timed.size() && s.timed[s.next].t_ms <= t) {
    const ScenarioState::Timed& a = s.timed[s.next++];
    switch (a.action) {
      case A::kStart:
        if (s.started_fault < 0) s.started_fault = a.scenario;
        Record(TruthEvent::kDegradationStart, a.scenario);
        break;
      case A::kEccDbe:
        UncorrectableEcc(a.scenario);
        break;
      case A::kEccFailure:
        RowRemapFailure(a.scenario);
        break;
      case A::kFallOff:
        Lose(a.scenario);
        return;
      case A::kCoolingEnd:
        Record(TruthEvent::kCoolingRestored, a.scenario);
        break;
      case A::kPcieDegraded:
        Record(TruthEvent::kPcieDegraded, a.scenario);
        break;
    }
  }
  c->ambient_c += e.ambient_offset_c;
  for (const auto& r : e.runaway) {
    if (t < r.start_ms) continue;
    const double progress = std::min(
        kRunawayMaxProgress, static_cast<double>(t - r.start_ms) / static_cast<double>(r.time_ms));
    c->mem_c_per_w += progress * s.mem_c_per_w_at_limit;
    c->die_c_per_w += progress * s.die_c_per_w_at_limit;
    // Sustained over-temperature (time in the memory's hardware slowdown)
    // ends in an uncorrectable error in the HBM.
    if (!s.runaway_failed && mem_hw_) {
      s.runaway_hot_ms += kStepMs;
      if (s.runaway_hot_ms >= r.hold_ms) {
        s.runaway_failed = true;
        UncorrectableEcc(r.scenario);
      }
    }
  }
  for (const auto& cl : e.cooling) {
    if (t < cl.start_ms || t >= cl.end_ms) continue;
    const double g =
        cl.ramp_ms > 0
            ? std::min(1.0, static_cast<double>(t - cl.start_ms) / static_cast<double>(cl.ramp_ms))
            : 1.0;
    c->ambient_c += g * cl.ambient_c;
    c->resistance_scale *= 1.0 + g * (cl.airflow - 1.0);
  }
  for (const auto& storm : e.ecc) {
    if (t < storm.start_ms) continue;
    const double base = std::min(30.0, storm.rate_per_hour);
    const double frac = storm.dbe_ms > storm.start_ms
                            ? std::min(1.0, static_cast<double>(t - storm.start_ms) /
                                                static_cast<double>(storm.dbe_ms - storm.start_ms))
                            : 1.0;
    c->ecc_rate += base + (storm.rate_per_hour - base) * frac;
  }
  nvlink_down_mask_ = 0;
  for (size_t i = 0; i < e.flaps.size(); ++i) {
    const NvlinkFlapEffect& f = e.flaps[i];
    if (t < f.start_ms || f.link >= p.nvlink_links) continue;
    const int64_t elapsed = t - f.start_ms;
    const int64_t cycle = f.down_ms + f.up_ms;
    const bool flapping = f.count == 0 || elapsed / cycle < f.count;
    const bool down = flapping && elapsed % cycle < f.down_ms;
    if (down != static_cast<bool>(s.flap_down[i])) {
      s.flap_down[i] = down;
      if (down) {
        Record(TruthEvent::kLinkDown, f.scenario, f.link);
        RaiseXid(74, f.scenario);  // NVLink error
      } else {
        Record(TruthEvent::kLinkUp, f.scenario, f.link);
        ++nvlink_errors_[f.link][static_cast<int>(NvLinkError::kRecovery)];
      }
    }
    if (down) nvlink_down_mask_ |= 1u << f.link;
    if (flapping) {
      c->flap_link = f.link;
      c->link_rate = f.rate_per_hour;
    }
  }
  for (const auto& d : e.pcie) {
    if (t < d.start_ms) continue;
    if (d.gen > 0) c->pcie_gen_cap = d.gen;
    if (d.width > 0) c->pcie_width = d.width;
    c->replay_rate += d.rate_per_hour;
  }
  for (const auto& b : e.brakes) {
    if (t < b.start_ms) continue;
    const int64_t elapsed = t - b.start_ms;
    const bool on = b.duration_ms == 0 || (b.every_ms > 0 ? elapsed % b.every_ms < b.duration_ms
                                                          : elapsed < b.duration_ms);
    if (on) c->brake_scale = std::min(c->brake_scale, b.scale);
  }
}

void SimulatedGpu::Step() {
  const GpuProfile& p = *profile_;
  now_ms_ += kStepMs;
  ++step_;
  StepConditions cond;
  if (fx_) {
    StepEffects(&cond);
    if (lost_) return;
  }
  const Phase& phase = schedule_.PhaseAt(now_ms_);
  WorkloadSample w = SampleAt(phase, now_ms_);
  if (p.nvenc_engines == 0) w.encoder = 0;
  phase_ = phase.kind;
  const bool idle = w.util < 0.005;

  // Thermal protection lowers clocks from the current die and HBM
  // temperatures.
  uint64_t reasons = 0;
  double scale = 1.0;
  const double mem_limit = p.memory_max_operating_temp_c;
  // The memory slowdown engages at the limit and, like the hardware's,
  // releases only kMemorySlowdownHysteresisC below it.
  if (mem_limit > 0) {
    const double h = kMemorySlowdownHysteresisC;
    mem_sw_ = t_mem_ >= mem_limit || (mem_sw_ && t_mem_ >= mem_limit - h);
    const double hw = mem_limit + kMemoryHwSlowdownMarginC;
    mem_hw_ = t_mem_ >= hw || (mem_hw_ && t_mem_ >= hw - h);
  }
  const bool mem_hot = mem_sw_;
  if (t_die_ >= p.slowdown_temp_c || mem_hw_) {
    scale = 0.5;
    reasons |= kReasonHwThermalSlowdown | kReasonHwSlowdown;
  } else {
    if (t_die_ >= p.gpu_max_operating_temp_c) {
      scale = std::clamp(1.0 - 0.06 * (t_die_ - p.gpu_max_operating_temp_c), 0.55, 1.0);
      reasons |= kReasonSwThermalSlowdown;
    }
    if (mem_hot) {
      // The memory slowdown limit: clocks step down at once, more the
      // hotter the HBM.
      scale = std::min(scale, std::clamp(0.9 - 0.1 * std::max(0.0, t_mem_ - mem_limit), 0.55, 0.9));
      reasons |= kReasonSwThermalSlowdown;
    }
  }
  // The external power brake cuts clocks by half or more.
  if (cond.brake_scale < 1.0) {
    scale = std::min(scale, cond.brake_scale);
    reasons |= kReasonHwPowerBrakeSlowdown | kReasonHwSlowdown;
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
  const double failed = cooling_failed_ ? 4.0 : 1.0;
  const double ambient = p.ambient_c + (cooling_failed_ ? 15.0 : 0.0) + cond.ambient_c;
  const double resistance = p.die_c_per_w * failed * cond.resistance_scale + cond.die_c_per_w;
  t_die_ += (ambient + resistance * power_avg_w_ - t_die_) * alpha_die_;
  if (p.has_memory_temperature) {
    const double mem_resistance =
        p.memory_c_per_w * failed * cond.resistance_scale + cond.mem_c_per_w;
    const double target = ambient + p.memory_offset_c + mem_resistance * power_avg_w_ +
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
  if (cond.pcie_gen_cap > 0) pcie_gen_ = std::min(pcie_gen_, cond.pcie_gen_cap);
  pcie_width_ = cond.pcie_width > 0 ? cond.pcie_width : p.pcie_max_width;
  reasons_ = reasons;
  if (mem_hot && !(truth_seen_ & Bit(TruthEvent::kFirstMemorySlowdown))) {
    RecordFirst(TruthEvent::kFirstMemorySlowdown);
  }
  if (reasons & kTrackedReasons) {
    if (reasons & kThermalReasons) RecordFirst(TruthEvent::kFirstThermalSlowdown);
    if (reasons & kReasonHwSlowdown) RecordFirst(TruthEvent::kFirstHwSlowdown);
    if (reasons & kReasonHwPowerBrakeSlowdown) RecordFirst(TruthEvent::kFirstPowerBrake);
  }

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
    if (fx_ && fx_->per_link) {
      for (int l = 0; l < p.nvlink_links; ++l) {
        if (nvlink_down_mask_ >> l & 1) continue;
        fx_->link_tx_kib[l] += kib * link_jitter * link_share_[l];
        fx_->link_rx_kib[l] += kib * (2.0 - link_jitter) * link_share_[l];
      }
    }
  }

  // Rare errors; the busier the GPU, the likelier.
  const double load = idle ? 0.2 : 1.0;
  if (p.has_ecc && Chance(kChEccCorrected, (0.01 + ecc_rate_per_hour_) * load)) {
    ++ecc_corrected_volatile_;
  }
  if (Chance(kChPcieReplay, (0.01 + pcie_replay_rate_per_hour_) * load)) ++pcie_replays_;
  // HBM near or past its limit corrects more and more bit errors.
  double ecc_extra = cond.ecc_rate;
  if (mem_limit > 0 && t_mem_ > mem_limit - 10) {
    ecc_extra += 40.0 * std::exp((t_mem_ - mem_limit) / 3.0);
  }
  if (p.has_ecc && ecc_extra > 0 && Chance(kChScenarioEcc, ecc_extra)) ++ecc_corrected_volatile_;
  if (cond.replay_rate > 0 && Chance(kChScenarioReplay, cond.replay_rate)) ++pcie_replays_;
  if (cond.flap_link >= 0) {
    auto& e = nvlink_errors_[cond.flap_link];
    if (Chance(kChFlapReplay, cond.link_rate)) ++e[static_cast<int>(NvLinkError::kReplay)];
    if (Chance(kChFlapCrc, cond.link_rate * 0.3)) ++e[static_cast<int>(NvLinkError::kCrcFlit)];
  }
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
  if (fx_ && fx_->per_link) return static_cast<uint64_t>(fx_->link_tx_kib[link]);
  return static_cast<uint64_t>(nvlink_tx_kib_ * link_share_[link]);
}
uint64_t SimulatedGpu::nvlink_rx_kib(int link) const {
  if (link < 0 || link >= profile_->nvlink_links) return 0;
  if (fx_ && fx_->per_link) return static_cast<uint64_t>(fx_->link_rx_kib[link]);
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
  out.reserve(pending_xids_.size());
  for (const PendingXid& x : pending_xids_) out.push_back(x.xid);
  pending_xids_.clear();
  return out;
}

std::vector<PendingXid> SimulatedGpu::TakePendingXidEvents() {
  std::vector<PendingXid> out;
  out.swap(pending_xids_);
  return out;
}

void SimulatedGpu::RaiseXid(uint32_t xid, int scenario) {
  pending_xids_.push_back(PendingXid{xid, now_ms_});
  if (!(truth_seen_ & Bit(TruthEvent::kFirstXid))) {
    truth_seen_ |= Bit(TruthEvent::kFirstXid);
    Record(TruthEvent::kFirstXid, scenario, xid);
  }
  Record(TruthEvent::kXid, scenario, xid);
}

void SimulatedGpu::Lose(int scenario) {
  if (lost_) return;
  lost_ = true;
  RaiseXid(79, scenario);  // "GPU has fallen off the bus"
  Record(TruthEvent::kGpuLost, scenario);
}

void SimulatedGpu::UncorrectableEcc(int scenario) {
  if (!profile_->has_ecc) return;
  ++ecc_uncorrected_volatile_;
  RaiseXid(48, scenario);  // double-bit ECC error
  if (profile_->has_row_remapping) {
    ++remapped_.uncorrectable;
    remapped_.pending = true;
    RaiseXid(63, scenario);  // row remapping recorded
  }
  Record(TruthEvent::kUncorrectableEcc, scenario);
}

void SimulatedGpu::RowRemapFailure(int scenario) {
  if (!profile_->has_ecc) return;
  ++ecc_uncorrected_volatile_;
  RaiseXid(48, scenario);
  if (profile_->has_row_remapping) {
    remapped_.failure = true;
    RaiseXid(64, scenario);  // row remapping failed
  }
  Record(TruthEvent::kRowRemapFailure, scenario);
}

void SimulatedGpu::Record(TruthEvent event, int scenario, int64_t detail) {
  if (truth_.size() >= kMaxTruthRecords && !(Bit(event) & kFirstEvents)) return;
  truth_.push_back(TruthRecord{event, now_ms_, scenario, detail});
}

void SimulatedGpu::RecordFirst(TruthEvent event, int64_t detail) {
  if (truth_seen_ & Bit(event)) return;
  truth_seen_ |= Bit(event);
  // State-driven events belong to the fault scenario acting on the GPU.
  Record(event, fx_ ? fx_->started_fault : -1, detail);
}

}  // namespace gpumon::sim
