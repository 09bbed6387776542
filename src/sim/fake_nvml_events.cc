// The fake NVML's event sets: XID critical errors from the fleet's event log
// (sim/fleet.h), delivered per set from the moment a GPU is registered. A
// freed set stays allocated (State::all_sets) so that a wait still running on
// another thread never touches freed memory.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "sim/fake_nvml_state.h"

namespace gpumon::sim {
namespace {

constexpr unsigned int kNoInstance = 0xFFFFFFFF;
constexpr unsigned long long kSupportedEvents = nvmlEventTypeXidCriticalError;

EventSet* FindSet(State* s, nvmlEventSet_t set) {
  auto* e = reinterpret_cast<EventSet*>(set);
  std::lock_guard<std::mutex> lock(s->sets_mu);
  return s->live_sets.count(e) != 0 ? e : nullptr;
}

}  // namespace
}  // namespace gpumon::sim

using gpumon::sim::SimulatedGpu;
namespace sim = gpumon::sim;

extern "C" {

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto e = std::make_unique<sim::EventSet>(s->fleet->size(), s->fleet->EventSequence());
  std::lock_guard<std::mutex> lock(s->sets_mu);
  s->live_sets.insert(e.get());
  *set = reinterpret_cast<nvmlEventSet_t>(e.get());
  s->all_sets.push_back(std::move(e));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long* eventTypes) {
  return sim::OnGpu(device, sim::Check(eventTypes != nullptr), [&](SimulatedGpu&) {
    *eventTypes = sim::kSupportedEvents;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  sim::EventSet* e = set == nullptr ? nullptr : sim::FindSet(s, set);
  const nvmlReturn_t args = sim::Check(e != nullptr && eventTypes != 0);
  return sim::OnGpu(device, args, [&](SimulatedGpu& g) {
    if ((eventTypes & ~sim::kSupportedEvents) != 0) return NVML_ERROR_NOT_SUPPORTED;
    // Deliver only events logged from now on; keep an earlier registration.
    const uint64_t from = s->fleet->EventSequence();
    std::atomic<uint64_t>& slot = e->registered_from[g.index()];
    uint64_t current = slot.load();
    while (from < current && !slot.compare_exchange_weak(current, from)) {
    }
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                 unsigned int timeoutms) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  sim::EventSet* e = set == nullptr ? nullptr : sim::FindSet(s, set);
  if (e == nullptr || data == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(e->wait_mu);
  sim::XidEvent event;
  const bool got = s->fleet->WaitForEvent(
      &e->cursor,
      [e](const sim::XidEvent& ev, uint64_t seq) {
        return seq >= e->registered_from[ev.gpu].load(std::memory_order_relaxed);
      },
      std::chrono::milliseconds(timeoutms), &event);
  if (!got) return NVML_ERROR_TIMEOUT;
  data->device = sim::ToDevice(&s->gpus[static_cast<size_t>(event.gpu)]);
  data->eventType = nvmlEventTypeXidCriticalError;
  data->eventData = event.xid;
  data->gpuInstanceId = sim::kNoInstance;
  data->computeInstanceId = sim::kNoInstance;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  auto* e = reinterpret_cast<sim::EventSet*>(set);
  std::lock_guard<std::mutex> lock(s->sets_mu);
  // The object itself stays allocated until process exit, so a wait still
  // running on another thread never touches freed memory.
  if (set == nullptr || s->live_sets.erase(e) == 0) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

}  // extern "C"
