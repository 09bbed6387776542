#include "sim/workload.h"

#include <algorithm>
#include <array>
#include <limits>

namespace gpumon::sim {
namespace {

constexpr int kKinds = 6;

// Relative frequency of each PhaseKind (in enum order) per workload mix.
constexpr std::array<double, kKinds> kDatacenterWeights = {0.15, 0.40, 0.12, 0.15, 0.18, 0.0};
constexpr std::array<double, kKinds> kWorkstationWeights = {0.20, 0.25, 0.10, 0.10, 0.25, 0.10};
constexpr std::array<double, kKinds> kConsumerWeights = {0.40, 0.12, 0.18, 0.05, 0.10, 0.15};

const std::array<double, kKinds>& WeightsFor(WorkloadMix mix) {
  switch (mix) {
    case WorkloadMix::kDatacenter:
      return kDatacenterWeights;
    case WorkloadMix::kWorkstation:
      return kWorkstationWeights;
    case WorkloadMix::kConsumer:
      return kConsumerWeights;
  }
  return kDatacenterWeights;
}

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;

}  // namespace

std::string_view PhaseName(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::kIdle:
      return "idle";
    case PhaseKind::kTraining:
      return "training";
    case PhaseKind::kBurst:
      return "burst";
    case PhaseKind::kMemoryBound:
      return "memory-bound";
    case PhaseKind::kInference:
      return "inference";
    case PhaseKind::kMedia:
      return "media";
  }
  return "unknown";
}

WorkloadSchedule::WorkloadSchedule(WorkloadMix mix, uint64_t seed)
    : mix_(mix), rng_(seed), current_(Generate(0, true)) {}

void WorkloadSchedule::AddRegime(const WorkloadRegime& regime) {
  regimes_.push_back(regime);
  regime_rngs_.emplace_back(regime.seed);
  // Cut the phase in progress at the new boundary.
  if (current_.end_ms > regime.from_ms) {
    current_.end_ms = std::max(regime.from_ms, current_.start_ms);
  }
}

Phase WorkloadSchedule::Generate(int64_t start_ms, bool first) {
  // The regime in effect: highest priority, then the one added last.
  int active = -1;
  int64_t boundary = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < regimes_.size(); ++i) {
    const WorkloadRegime& r = regimes_[i];
    if (r.from_ms > start_ms) boundary = std::min(boundary, r.from_ms);
    if (r.until_ms > start_ms) boundary = std::min(boundary, r.until_ms);
    if (r.from_ms <= start_ms && start_ms < r.until_ms &&
        (active < 0 || r.priority >= regimes_[static_cast<size_t>(active)].priority)) {
      active = static_cast<int>(i);
    }
  }
  Phase p = active < 0 ? GenerateMix(start_ms, first)
                       : GenerateRegime(static_cast<size_t>(active), start_ms);
  p.end_ms = std::min(p.end_ms, boundary);
  return p;
}

Phase WorkloadSchedule::GenerateRegime(size_t index, int64_t start_ms) {
  const WorkloadRegime& r = regimes_[index];
  SplitMix& rng = regime_rngs_[index];
  Phase p;
  p.start_ms = start_ms;
  p.noise_key = rng.Next();
  const double pick = rng.Unit();
  int64_t duration = 0;
  if (r.kind == RegimeKind::kTraining) {
    if (pick < 0.04) {
      // Now and then the job restarts (a new run, a failed node replaced).
      p.kind = PhaseKind::kIdle;
      p.pcie_rx_gbps = p.pcie_tx_gbps = 0.0005;
      duration = rng.UniformInt(1 * kMinute, 4 * kMinute);
    } else {
      p.kind = PhaseKind::kTraining;
      duration = rng.UniformInt(20 * kMinute, 60 * kMinute);
      p.util = std::clamp(r.util + rng.Uniform(-0.01, 0.01), 0.0, 1.0);
      p.mem_util = rng.Uniform(0.1, 0.4);
      p.intensity = rng.Uniform(0.95, 1.12);
      p.mem_fraction = rng.Uniform(0.7, 0.95);
      p.pcie_rx_gbps = rng.Uniform(0.5, 3.0);
      p.pcie_tx_gbps = rng.Uniform(0.05, 0.3);
      p.nvlink_gbps = rng.Uniform(60, 180);
      p.period_ms = rng.UniformInt(20 * kSecond, 90 * kSecond);
      p.checkpoint_every_ms = r.checkpoint_every_ms;
      p.checkpoint_ms = r.checkpoint_ms;
      p.checkpoint_offset_ms = r.checkpoint_offset_ms;
    }
  } else if (pick < 0.7) {
    p.kind = PhaseKind::kInference;
    duration = rng.UniformInt(30 * kSecond, 5 * kMinute);
    p.util = std::clamp(r.util + rng.Uniform(-0.15, 0.15), 0.05, 0.95);
    p.mem_util = rng.Uniform(0.1, 0.35);
    p.intensity = rng.Uniform(0.8, 1.0);
    p.mem_fraction = rng.Uniform(0.4, 0.8);
    p.pcie_rx_gbps = rng.Uniform(0.1, 1.0);
    p.pcie_tx_gbps = rng.Uniform(0.05, 0.5);
    p.nvlink_gbps = rng.Uniform(0, 5);
  } else if (pick < 0.9) {
    // A burst of requests.
    p.kind = PhaseKind::kBurst;
    duration = rng.UniformInt(10 * kSecond, 90 * kSecond);
    p.util = rng.Uniform(0.85, 1.0);
    p.mem_util = rng.Uniform(0.15, 0.4);
    p.intensity = rng.Uniform(0.9, 1.05);
    p.mem_fraction = rng.Uniform(0.4, 0.8);
    p.pcie_rx_gbps = rng.Uniform(0.2, 1.0);
    p.pcie_tx_gbps = rng.Uniform(0.05, 0.5);
    p.nvlink_gbps = rng.Uniform(0, 10);
    p.period_ms = rng.UniformInt(2 * kSecond, 12 * kSecond);
  } else {
    // No traffic for a while; the model stays loaded.
    p.kind = PhaseKind::kIdle;
    duration = rng.UniformInt(10 * kSecond, 2 * kMinute);
    p.mem_fraction = rng.Uniform(0.4, 0.8);
    p.pcie_rx_gbps = p.pcie_tx_gbps = 0.0005;
  }
  p.end_ms = start_ms + duration;
  return p;
}

Phase WorkloadSchedule::GenerateMix(int64_t start_ms, bool first) {
  const auto& weights = WeightsFor(mix_);
  double total = 0;
  for (double w : weights) total += w;
  double pick = rng_.Unit() * total;
  int kind = 0;
  while (kind < kKinds - 1 && pick >= weights[kind]) pick -= weights[kind++];
  // Skip kinds with zero weight that rounding might land on.
  while (weights[kind] == 0) kind = (kind + 1) % kKinds;

  Phase p;
  p.kind = static_cast<PhaseKind>(kind);
  p.start_ms = start_ms;
  p.noise_key = rng_.Next();
  int64_t duration = 0;
  switch (p.kind) {
    case PhaseKind::kIdle:
      duration = rng_.UniformInt(20 * kSecond, 4 * kMinute);
      p.pcie_rx_gbps = p.pcie_tx_gbps = 0.0005;
      break;
    case PhaseKind::kTraining:
      duration = rng_.UniformInt(1 * kMinute, 10 * kMinute);
      p.util = rng_.Uniform(0.94, 0.995);
      p.mem_util = rng_.Uniform(0.05, 0.45);
      p.intensity = rng_.Uniform(0.92, 1.22);
      p.mem_fraction = rng_.Uniform(0.55, 0.95);
      p.pcie_rx_gbps = rng_.Uniform(0.5, 3.0);
      p.pcie_tx_gbps = rng_.Uniform(0.05, 0.3);
      p.nvlink_gbps = rng_.Uniform(25, 180);
      p.period_ms = rng_.UniformInt(20 * kSecond, 90 * kSecond);
      break;
    case PhaseKind::kBurst:
      duration = rng_.UniformInt(20 * kSecond, 2 * kMinute);
      p.util = rng_.Uniform(0.9, 1.0);
      p.mem_util = rng_.Uniform(0.1, 0.4);
      p.intensity = rng_.Uniform(0.95, 1.15);
      p.mem_fraction = rng_.Uniform(0.2, 0.6);
      p.pcie_rx_gbps = rng_.Uniform(0.2, 1.0);
      p.pcie_tx_gbps = rng_.Uniform(0.02, 0.2);
      p.nvlink_gbps = rng_.Uniform(0, 30);
      p.period_ms = rng_.UniformInt(2 * kSecond, 12 * kSecond);
      break;
    case PhaseKind::kMemoryBound:
      duration = rng_.UniformInt(30 * kSecond, 3 * kMinute);
      p.util = rng_.Uniform(0.6, 0.85);
      p.mem_util = rng_.Uniform(0.7, 0.95);
      p.intensity = rng_.Uniform(0.75, 0.9);
      p.mem_fraction = rng_.Uniform(0.6, 0.95);
      p.pcie_rx_gbps = rng_.Uniform(0.1, 0.5);
      p.pcie_tx_gbps = rng_.Uniform(0.02, 0.1);
      p.nvlink_gbps = rng_.Uniform(5, 40);
      break;
    case PhaseKind::kInference:
      duration = rng_.UniformInt(30 * kSecond, 5 * kMinute);
      p.util = rng_.Uniform(0.2, 0.6);
      p.mem_util = rng_.Uniform(0.1, 0.3);
      p.intensity = rng_.Uniform(0.8, 1.0);
      p.mem_fraction = rng_.Uniform(0.3, 0.7);
      p.pcie_rx_gbps = rng_.Uniform(0.1, 1.0);
      p.pcie_tx_gbps = rng_.Uniform(0.05, 0.5);
      p.nvlink_gbps = rng_.Uniform(0, 5);
      break;
    case PhaseKind::kMedia:
      duration = rng_.UniformInt(1 * kMinute, 5 * kMinute);
      p.util = rng_.Uniform(0.08, 0.25);
      p.mem_util = rng_.Uniform(0.02, 0.1);
      p.intensity = 0.7;
      p.mem_fraction = rng_.Uniform(0.02, 0.1);
      p.pcie_rx_gbps = rng_.Uniform(0.05, 0.2);
      p.pcie_tx_gbps = rng_.Uniform(0.05, 0.2);
      p.encoder = rng_.Uniform(0.4, 0.85);
      p.decoder = rng_.Uniform(0.2, 0.7);
      break;
  }
  // The first phase is cut short at a random point so GPUs of one fleet do
  // not all change phase in lockstep.
  if (first)
    duration = std::max<int64_t>(5 * kSecond, static_cast<int64_t>(duration * rng_.Unit()));
  p.end_ms = start_ms + duration;
  return p;
}

WorkloadSample SampleAt(const Phase& p, int64_t t_ms) {
  WorkloadSample s;
  const int64_t in_phase = t_ms - p.start_ms;
  // Small per-100ms jitter, and a per-second level for bursty inference.
  const double jitter = ToUnit(Hash(p.noise_key, static_cast<uint64_t>(t_ms / 100))) - 0.5;
  const double level = ToUnit(Hash(p.noise_key, static_cast<uint64_t>(t_ms / 1000), 1));
  s.mem_util = p.mem_util;
  s.intensity = p.intensity;
  s.encoder = p.encoder;
  s.decoder = p.decoder;
  switch (p.kind) {
    case PhaseKind::kIdle:
      return s;
    case PhaseKind::kTraining:
      // The job's checkpoints: every GPU of it writes its state at once.
      if (p.checkpoint_every_ms > 0) {
        int64_t k = (t_ms - p.checkpoint_offset_ms) % p.checkpoint_every_ms;
        if (k < 0) k += p.checkpoint_every_ms;
        if (k < p.checkpoint_ms) {
          s.util = 0.08 + 0.06 * jitter;
          s.mem_util *= 0.2;
          break;
        }
      }
      // Periodic short dips (data loading, evaluation).
      if (p.period_ms > 0 && in_phase % p.period_ms < 1500) {
        s.util = 0.3 + 0.1 * jitter;
        s.mem_util *= 0.5;
      } else {
        s.util = p.util + 0.02 * jitter;
      }
      break;
    case PhaseKind::kBurst:
      if (p.period_ms > 0 && (in_phase / (p.period_ms / 2)) % 2 == 1) {
        s.util = 0.02 * level;
        s.mem_util *= 0.1;
      } else {
        s.util = p.util + 0.02 * jitter;
      }
      break;
    case PhaseKind::kMemoryBound:
      s.util = p.util + 0.04 * jitter;
      s.mem_util = p.mem_util + 0.04 * jitter;
      break;
    case PhaseKind::kInference:
      s.util = p.util + 0.4 * (level - 0.5);
      s.mem_util = p.mem_util * (0.5 + level);
      break;
    case PhaseKind::kMedia:
      s.util = p.util + 0.04 * jitter;
      s.encoder = p.encoder + 0.1 * (level - 0.5);
      s.decoder = p.decoder + 0.1 * (level - 0.5);
      break;
  }
  s.util = std::clamp(s.util, 0.0, 1.0);
  s.mem_util = std::clamp(s.mem_util, 0.0, 1.0);
  s.encoder = std::clamp(s.encoder, 0.0, 1.0);
  s.decoder = std::clamp(s.decoder, 0.0, 1.0);
  return s;
}

}  // namespace gpumon::sim
