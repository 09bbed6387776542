#include "sim/fleet.h"

#include <limits>

namespace gpumon::sim {
namespace {

constexpr int64_t kNoFault = std::numeric_limits<int64_t>::max();

std::function<int64_t()> SteadyClockSinceNow() {
  const auto start = std::chrono::steady_clock::now();
  return [start] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  };
}

}  // namespace

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

  std::function<int64_t()> clock =
      options.clock_ms ? std::move(options.clock_ms) : SteadyClockSinceNow();
  std::unique_ptr<SimulatedFleet> fleet(new SimulatedFleet(options.seed, std::move(clock)));
  fleet->slots_.reserve(static_cast<size_t>(spec->total));
  int index = 0;
  for (const FleetSpecEntry& e : spec->entries) {
    for (int i = 0; i < e.count; ++i, ++index) {
      fleet->slots_.push_back(std::make_unique<Slot>(*e.profile, options.seed, index));
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
  std::vector<uint32_t> xids = gpu.TakePendingXids();
  {
    std::lock_guard<std::mutex> lock(events_mu_);
    for (uint32_t xid : xids) events_.push_back(XidEvent{index, xid, gpu.now_ms()});
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
