#include "sim/fleet.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "sim/scenario_effects.h"

namespace gpumon::sim {
namespace {

constexpr int64_t kNoFault = std::numeric_limits<int64_t>::max();

std::function<int64_t()> SteadyClockSinceNow(double speed) {
  const auto start = std::chrono::steady_clock::now();
  if (speed == 1.0) {
    return [start] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - start)
          .count();
    };
  }
  return [start, speed] {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    return static_cast<int64_t>(static_cast<double>(us) * speed / 1000.0);
  };
}

}  // namespace

double ParseSpeed(std::string_view text) {
  if (text.empty()) return 0;
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !(v > 0) || !std::isfinite(v)) return 0;
  return v;
}

SimulatedFleet::SimulatedFleet(uint64_t seed, std::function<int64_t()> clock)
    : seed_(seed), clock_(std::move(clock)), next_fault_ms_(kNoFault) {}

Result<std::unique_ptr<SimulatedFleet>> SimulatedFleet::Create(FleetOptions options) {
  Result<FleetSpec> spec = ParseFleetSpec(options.spec);
  if (!spec.ok()) return spec.status();
  Result<std::vector<Fault>> faults = ParseFaultSchedule(options.faults, spec->total);
  if (!faults.ok()) return faults.status();
  for (const Fault& f : *faults) {
    if (f.kind == FaultKind::kEcc && !spec->ProfileOf(f.gpu).has_ecc) {
      return Status::Error("fault \"" + f.text + "\": GPU " + std::to_string(f.gpu) + " (" +
                           std::string(spec->ProfileOf(f.gpu).key) + ") has no ECC");
    }
  }

  if (!(options.speed > 0) || !std::isfinite(options.speed)) {
    return Status::Error("speed must be a number greater than 0");
  }
  if (options.node_size < 1) return Status::Error("node size must be at least 1");
  ScenarioContext context{&spec.value(), options.node_size, options.seed};
  Result<std::vector<Scenario>> scenarios = ParseScenarios(options.scenarios, context);
  if (!scenarios.ok()) return scenarios.status();
  const std::vector<GpuEffects> effects =
      CompileScenarios(*scenarios, *spec, options.seed, options.node_size);

  std::function<int64_t()> clock =
      options.clock_ms ? std::move(options.clock_ms) : SteadyClockSinceNow(options.speed);
  std::unique_ptr<SimulatedFleet> fleet(new SimulatedFleet(options.seed, std::move(clock)));
  fleet->spec_ = options.spec;
  fleet->node_size_ = options.node_size;
  fleet->speed_ = options.speed;
  fleet->scenarios_ = std::move(scenarios).value();
  fleet->slots_.reserve(static_cast<size_t>(spec->total));
  int index = 0;
  for (const FleetSpecEntry& e : spec->entries) {
    for (int i = 0; i < e.count; ++i, ++index) {
      fleet->slots_.push_back(std::make_unique<Slot>(*e.profile, options.seed, index));
      const GpuEffects& fx = effects[static_cast<size_t>(index)];
      if (!fx.empty()) fleet->slots_.back()->gpu.SetEffects(fx);
      if (fx.raises_xids()) fleet->watched_.push_back(index);
    }
  }
  fleet->faults_ = std::move(faults).value();
  if (!fleet->faults_.empty()) fleet->next_fault_ms_.store(fleet->faults_.front().at_ms);
  return fleet;
}

void SimulatedFleet::ApplyDueFaults(int64_t now) {
  std::lock_guard<std::mutex> faults_lock(faults_mu_);
  while (next_fault_ < faults_.size() && faults_[next_fault_].at_ms <= now) {
    const Fault& f = faults_[next_fault_++];
    Slot& slot = *slots_[f.gpu];
    std::lock_guard<std::mutex> lock(slot.mu);
    // Bring the GPU to the fault's own time so its effect does not depend on
    // when the fleet noticed it was due.
    slot.gpu.AdvanceTo(f.at_ms);
    switch (f.kind) {
      case FaultKind::kXid:
        slot.gpu.InjectXid(f.xid);
        break;
      case FaultKind::kLost:
        slot.gpu.MarkLost();
        break;
      case FaultKind::kHot:
        slot.gpu.SetCoolingFailure(true);
        break;
      case FaultKind::kEcc:
        slot.gpu.InjectUncorrectableEcc();
        break;
    }
    DrainXidsLocked(f.gpu);
  }
  next_fault_ms_.store(next_fault_ < faults_.size() ? faults_[next_fault_].at_ms : kNoFault,
                       std::memory_order_release);
}

void SimulatedFleet::DrainXidsLocked(int index) {
  SimulatedGpu& gpu = slots_[index]->gpu;
  if (!gpu.has_pending_xids()) return;
  std::vector<PendingXid> xids = gpu.TakePendingXidEvents();
  {
    std::lock_guard<std::mutex> lock(events_mu_);
    for (const PendingXid& x : xids) events_.push_back(XidEvent{index, x.xid, x.t_ms});
  }
  events_cv_.notify_all();
}

template <typename Fn>
void SimulatedFleet::ApplyNow(int index, Fn&& fn) {
  const int64_t now = NowMs();
  if (now >= next_fault_ms_.load(std::memory_order_acquire)) ApplyDueFaults(now);
  Slot& slot = *slots_[index];
  std::lock_guard<std::mutex> lock(slot.mu);
  slot.gpu.AdvanceTo(now);
  fn(slot.gpu);
  DrainXidsLocked(index);
}

void SimulatedFleet::InjectXid(int index, uint32_t xid) {
  ApplyNow(index, [xid](SimulatedGpu& g) { g.InjectXid(xid); });
}
void SimulatedFleet::MarkLost(int index) {
  ApplyNow(index, [](SimulatedGpu& g) { g.MarkLost(); });
}
void SimulatedFleet::SetCoolingFailure(int index, bool failed) {
  ApplyNow(index, [failed](SimulatedGpu& g) { g.SetCoolingFailure(failed); });
}
void SimulatedFleet::InjectUncorrectableEcc(int index) {
  ApplyNow(index, [](SimulatedGpu& g) { g.InjectUncorrectableEcc(); });
}

uint64_t SimulatedFleet::EventSequence() const {
  std::lock_guard<std::mutex> lock(events_mu_);
  return events_.size();
}

bool SimulatedFleet::WaitForEvent(uint64_t* cursor,
                                  const std::function<bool(const XidEvent&, uint64_t)>& wanted,
                                  std::chrono::milliseconds timeout, XidEvent* out) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Scheduled faults are applied lazily, so poll for them in short slices.
  constexpr auto kSlice = std::chrono::milliseconds(10);
  while (true) {
    const int64_t now = NowMs();
    if (now >= next_fault_ms_.load(std::memory_order_acquire)) ApplyDueFaults(now);
    // GPUs that raise XIDs themselves log them when advanced.
    for (int index : watched_) WithGpu(index, [](SimulatedGpu&) {});
    std::unique_lock<std::mutex> lock(events_mu_);
    while (*cursor < events_.size()) {
      const uint64_t seq = (*cursor)++;
      if (wanted(events_[seq], seq)) {
        *out = events_[seq];
        return true;
      }
    }
    const auto now_real = std::chrono::steady_clock::now();
    if (now_real >= deadline) return false;
    events_cv_.wait_until(lock, std::min(deadline, now_real + kSlice),
                          [&] { return *cursor < events_.size(); });
  }
}

}  // namespace gpumon::sim
