// SimulatedFleet: the GPUs of one simulated host, with faults, scenarios and
// XID events.
//
// Contract: a fleet is built from a fleet spec (fleet_spec.h), a seed, an
// optional fault schedule (fault_schedule.h) and an optional scenario list
// (scenario.h, compiled into per-GPU effects by scenario_effects.h); GPU i
// is seeded from (seed, i). Time is the injected clock, or the steady clock
// since creation times `speed`. Access is thread-safe with one lock per GPU:
// WithGpu(i, fn) advances GPU i to the current time (lazily, so untouched
// GPUs cost nothing) and runs fn under its lock. Scheduled faults are
// applied at their exact simulated time, before any access that happens
// after it. XID events (injected, scheduled, raised by lost/ecc faults or by
// scenarios as the model runs) go to one append-only log with consecutive
// sequence numbers, which the fake NVML's event sets read with cursors; an
// XID a GPU raises itself is logged with its own simulated time when the GPU
// is next advanced, and GPUs whose scenarios raise XIDs are advanced while
// someone waits for events, so those arrive on time too.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/fault_schedule.h"
#include "sim/fleet_spec.h"
#include "sim/gpu_model.h"
#include "sim/scenario.h"

namespace gpumon::sim {

struct FleetOptions {
  std::string spec = "h200x8";
  uint64_t seed = 1;
  std::string faults;                 // fault schedule; empty for none
  std::string scenarios;              // scenario list; empty for none
  int node_size = 8;                  // GPUs per node, for node= in scenarios
  double speed = 1;                   // steady clock multiplier (> 0)
  std::function<int64_t()> clock_ms;  // empty: steady clock since creation x speed
};

// A speed as GPUMON_SIM_SPEED and the CLI's --speed give it: the whole of
// `text` is a finite number greater than 0 (strtod's syntax). 0 when not.
double ParseSpeed(std::string_view text);

struct XidEvent {
  int gpu = 0;
  uint32_t xid = 0;
  int64_t t_ms = 0;  // simulated time it was raised
};

class SimulatedFleet {
 public:
  // Errors name the bad spec part or fault item.
  static Result<std::unique_ptr<SimulatedFleet>> Create(FleetOptions options);

  SimulatedFleet(const SimulatedFleet&) = delete;
  SimulatedFleet& operator=(const SimulatedFleet&) = delete;

  int size() const { return static_cast<int>(slots_.size()); }
  uint64_t seed() const { return seed_; }
  const std::string& spec() const { return spec_; }
  int node_size() const { return node_size_; }
  double speed() const { return speed_; }
  const std::vector<Scenario>& scenarios() const { return scenarios_; }
  const GpuProfile& profile(int index) const { return slots_[index]->gpu.profile(); }
  int64_t NowMs() const { return clock_(); }

  // Runs fn(SimulatedGpu&) on GPU `index` (0 <= index < size()) advanced to
  // NowMs(), holding that GPU's lock, and returns what fn returns.
  template <typename Fn>
  decltype(auto) WithGpu(int index, Fn&& fn) {
    const int64_t now = NowMs();
    if (now >= next_fault_ms_.load(std::memory_order_acquire)) ApplyDueFaults(now);
    Slot& slot = *slots_[index];
    std::lock_guard<std::mutex> lock(slot.mu);
    slot.gpu.AdvanceTo(now);
    if (slot.gpu.has_pending_xids()) DrainXidsLocked(index);
    return fn(slot.gpu);
  }

  // Immediate faults, at the current time.
  void InjectXid(int index, uint32_t xid);
  void MarkLost(int index);
  void SetCoolingFailure(int index, bool failed);
  void InjectUncorrectableEcc(int index);

  // Sequence number the next logged event will get.
  uint64_t EventSequence() const;

  // Waits up to `timeout` for the first logged event with sequence >= *cursor
  // that `wanted(event, sequence)` accepts, applying due faults meanwhile.
  // Advances *cursor past every event examined. Returns false on timeout.
  bool WaitForEvent(uint64_t* cursor, const std::function<bool(const XidEvent&, uint64_t)>& wanted,
                    std::chrono::milliseconds timeout, XidEvent* out);

 private:
  struct Slot {
    Slot(const GpuProfile& profile, uint64_t seed, int index) : gpu(profile, seed, index) {}
    std::mutex mu;
    SimulatedGpu gpu;
  };

  SimulatedFleet(uint64_t seed, std::function<int64_t()> clock);
  void ApplyDueFaults(int64_t now);
  // Moves GPU `index`'s pending XIDs to the log; caller holds the GPU's lock.
  void DrainXidsLocked(int index);
  template <typename Fn>
  void ApplyNow(int index, Fn&& fn);

  const uint64_t seed_;
  const std::function<int64_t()> clock_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::string spec_;
  int node_size_ = 8;
  double speed_ = 1;
  std::vector<Scenario> scenarios_;
  std::vector<int> watched_;  // GPUs whose scenarios raise XIDs

  std::mutex faults_mu_;
  std::vector<Fault> faults_;  // sorted by time
  size_t next_fault_ = 0;
  std::atomic<int64_t> next_fault_ms_;

  mutable std::mutex events_mu_;
  std::condition_variable events_cv_;
  std::vector<XidEvent> events_;
};

}  // namespace gpumon::sim
