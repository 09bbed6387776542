// Workload schedules: what a simulated GPU is doing over time.
//
// Contract: a WorkloadSchedule is an endless sequence of phases (idle,
// training, bursts, memory-bound, inference, media), each lasting tens of
// seconds to minutes, drawn from a SplitMix generator seeded per GPU. The
// sequence depends only on (mix, seed), never on how often it is queried, so
// PhaseAt(t) is a pure function of t as long as t never decreases between
// calls. SampleAt gives the instantaneous demand inside a phase, also a pure
// function of (phase, t).
//
// Regimes (scenarios, scenario.h) replace the random mix for spans of time:
// training (long high-utilisation phases with data-loading dips and
// checkpoint dips on a schedule shared by every GPU of the job) or
// inference (bursty request load with short gaps). They are added before
// the schedule is first queried past their start; the phase covering a
// regime boundary is cut there. Where regimes overlap, the higher priority
// wins, then the one added last. Each regime draws from its own generator,
// so the sequence stays a pure function of (mix, seed, regimes).
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "sim/noise.h"
#include "sim/profile.h"

namespace gpumon::sim {

enum class PhaseKind { kIdle, kTraining, kBurst, kMemoryBound, kInference, kMedia };

std::string_view PhaseName(PhaseKind kind);

struct Phase {
  PhaseKind kind = PhaseKind::kIdle;
  int64_t start_ms = 0;
  int64_t end_ms = 0;       // exclusive
  double util = 0;          // base SM utilization, 0..1
  double mem_util = 0;      // memory-bandwidth utilization, 0..1
  double intensity = 0;     // power per unit of utilization (1 = profile load_power_w)
  double mem_fraction = 0;  // share of the usable frame buffer allocated
  double pcie_rx_gbps = 0;  // GB/s host -> device
  double pcie_tx_gbps = 0;  // GB/s device -> host
  double nvlink_gbps = 0;   // GB/s per direction, whole GPU
  double encoder = 0;       // 0..1
  double decoder = 0;       // 0..1
  int64_t period_ms = 0;    // burst on/off period, or training dip period
  // Training checkpoints: every checkpoint_every_ms (0: none), counted from
  // checkpoint_offset_ms in absolute time, utilization drops for
  // checkpoint_ms while the state is written out.
  int64_t checkpoint_every_ms = 0;
  int64_t checkpoint_ms = 0;
  int64_t checkpoint_offset_ms = 0;
  uint64_t noise_key = 0;
};

enum class RegimeKind { kTraining, kInference };

struct WorkloadRegime {
  RegimeKind kind = RegimeKind::kTraining;
  int64_t from_ms = 0;
  int64_t until_ms = std::numeric_limits<int64_t>::max();  // exclusive
  int priority = 0;
  double util = 0.97;  // training: busy utilization; inference: mean utilization
  int64_t checkpoint_every_ms = 0;
  int64_t checkpoint_ms = 0;
  int64_t checkpoint_offset_ms = 0;
  uint64_t seed = 0;  // this GPU's draws inside the regime
};

struct WorkloadSample {
  double util = 0;
  double mem_util = 0;
  double intensity = 0;
  double encoder = 0;
  double decoder = 0;
};

// Instantaneous demand at t_ms (start_ms <= t_ms < end_ms).
WorkloadSample SampleAt(const Phase& phase, int64_t t_ms);

class WorkloadSchedule {
 public:
  WorkloadSchedule(WorkloadMix mix, uint64_t seed);

  // The phase covering t_ms. t_ms must not decrease between calls.
  const Phase& PhaseAt(int64_t t_ms) {
    while (t_ms >= current_.end_ms) current_ = Generate(current_.end_ms, false);
    return current_;
  }

  // Adds a regime; call before PhaseAt has been asked for a time past
  // regime.from_ms.
  void AddRegime(const WorkloadRegime& regime);

 private:
  Phase Generate(int64_t start_ms, bool first);
  Phase GenerateMix(int64_t start_ms, bool first);
  Phase GenerateRegime(size_t regime, int64_t start_ms);

  WorkloadMix mix_;
  SplitMix rng_;
  std::vector<WorkloadRegime> regimes_;
  std::vector<SplitMix> regime_rngs_;
  Phase current_;
};

}  // namespace gpumon::sim
