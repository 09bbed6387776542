// Private to libgpumon-fake-nvml.so (fake_nvml*.cc): the C declarations of
// what the library exports, and the library state and argument checks that
// every entry point shares. Not installed, not included anywhere else.
//
// Contract:
// - Every NVML entry point of GPUMON_NVML_FUNCTIONS (gpu/nvml_api.h) and the
//   gpumon* symbols are declared here with C linkage and default visibility;
//   everything else is hidden (this header's namespace by a visibility
//   pragma, the whole library by its build's hidden visibility and the
//   version script fake_nvml.map).
// - Current() is the state of the current initialization, or null outside
//   nvmlInit_v2 .. nvmlShutdown. Handles and event sets point into a State,
//   which is never freed before the library is unloaded (see fake_nvml.cc).
// - OnDevice/OnGpu apply NVML's order of return codes (fake_nvml.cc) before
//   running a query on the GPU under its lock.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "gpu/nvml_api.h"
#include "sim/fleet.h"
#include "sim/process_file.h"

// Declare every entry point with C linkage and default visibility (the rest
// of the library is hidden); a definition whose signature drifts from
// nvml_api.h fails to compile against these declarations.
#define GPUMON_FAKE_NVML_DECLARE(name, ret, params) \
  extern "C" __attribute__((visibility("default"))) ret name params;
GPUMON_NVML_FUNCTIONS(GPUMON_FAKE_NVML_DECLARE)
#undef GPUMON_FAKE_NVML_DECLARE

// The marker the agent looks for (GPUMON_SIMULATED_NVML_MARKER): whatever
// flag loaded this library, its data is labelled simulated.
extern "C" __attribute__((visibility("default"))) int gpumonSimulatedNvml(void);

// The virtual clock's control (GPUMON_SIM_CLOCK=virtual): sets the fleet's
// simulated time in milliseconds since nvmlInit_v2. Time never runs
// backwards: an earlier time than the current one is ignored. Without the
// virtual clock the call has no effect.
extern "C" __attribute__((visibility("default"))) void gpumonSimSetTimeMs(int64_t t_ms);

// The run's ground truth: writes the JSON document NUL-terminated into buf
// when it fits (len > its length) and returns its length without the NUL
// either way (0, and an empty string where len > 0, before init).
extern "C" __attribute__((visibility("default"))) size_t gpumonSimGroundTruth(char* buf,
                                                                              size_t len);

// Hidden even without the target's visibility preset.
#pragma GCC visibility push(hidden)

namespace gpumon::sim {
// Inline, so the entry points name these sim::X like the simulator's own
// names; a namespace of its own keeps their symbols apart from the
// simulator's.
inline namespace fake_nvml {

static_assert(nvmlClocksEventReasonGpuIdle == kReasonGpuIdle);
static_assert(nvmlClocksEventReasonSwPowerCap == kReasonSwPowerCap);
static_assert(nvmlClocksThrottleReasonHwSlowdown == kReasonHwSlowdown);
static_assert(nvmlClocksEventReasonSwThermalSlowdown == kReasonSwThermalSlowdown);
static_assert(nvmlClocksThrottleReasonHwThermalSlowdown == kReasonHwThermalSlowdown);
static_assert(nvmlClocksThrottleReasonHwPowerBrakeSlowdown == kReasonHwPowerBrakeSlowdown);
static_assert(NVML_NVLINK_MAX_LINKS == kMaxNvLinks);
static_assert(NVML_NVLINK_ERROR_DL_ECC_DATA == kNvLinkErrorKinds - 1);

// What an nvmlDevice_t points at: a physical GPU (mig < 0) or MIG device
// `mig` of GPU `gpu`.
struct DeviceHandle {
  int gpu = 0;
  int mig = -1;
};

struct EventSet {
  explicit EventSet(int gpus, uint64_t start)
      : registered_from(new std::atomic<uint64_t>[static_cast<size_t>(gpus)]), cursor(start) {
    for (int i = 0; i < gpus; ++i) registered_from[i].store(kNever);
  }
  static constexpr uint64_t kNever = ~uint64_t{0};
  // Per GPU: the first event sequence number this set delivers (kNever when
  // not registered), so events raised before registration are skipped.
  std::unique_ptr<std::atomic<uint64_t>[]> registered_from;
  std::mutex wait_mu;  // one waiter at a time advances the cursor
  uint64_t cursor;
};

struct State {
  std::unique_ptr<SimulatedFleet> fleet;
  bool virtual_clock = false;
  std::vector<DeviceHandle> gpus;
  std::vector<DeviceHandle> migs;
  std::vector<int> first_mig;  // per GPU: index into migs, or -1
  std::mutex sets_mu;
  std::unordered_set<EventSet*> live_sets;
  std::vector<std::unique_ptr<EventSet>> all_sets;  // freed sets are kept, see fake_nvml.cc
  // GPUMON_SIM_PROCESSES (fake_nvml_processes.cc); never null.
  std::unique_ptr<ProcessFile> processes;
};

State* Current();

template <typename T>
bool Within(const std::vector<T>& v, const T* p) {
  if (v.empty()) return false;
  return !std::less<const T*>()(p, v.data()) && std::less<const T*>()(p, v.data() + v.size());
}

inline nvmlDevice_t ToDevice(const DeviceHandle* h) {
  return reinterpret_cast<nvmlDevice_t>(const_cast<DeviceHandle*>(h));
}

// Resolves `device` in the current state. Returns SUCCESS or the error code.
inline nvmlReturn_t Resolve(nvmlDevice_t device, State** state, const DeviceHandle** handle) {
  State* s = Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto* h = reinterpret_cast<const DeviceHandle*>(device);
  if (!Within(s->gpus, h) && !Within(s->migs, h)) return NVML_ERROR_INVALID_ARGUMENT;
  *state = s;
  *handle = h;
  return NVML_SUCCESS;
}

// Runs fn(gpu, handle) for any handle (physical or MIG) after the common
// checks: init, handle, `args` (the caller's own argument checks), lost GPU.
template <typename Fn>
nvmlReturn_t OnDevice(nvmlDevice_t device, nvmlReturn_t args, Fn&& fn) {
  State* s = nullptr;
  const DeviceHandle* h = nullptr;
  if (nvmlReturn_t r = Resolve(device, &s, &h); r != NVML_SUCCESS) return r;
  if (args != NVML_SUCCESS) return args;
  return s->fleet->WithGpu(h->gpu, [&](SimulatedGpu& g) -> nvmlReturn_t {
    if (g.lost()) return NVML_ERROR_GPU_IS_LOST;
    return fn(g, *h);
  });
}

// As OnDevice, for calls MIG devices do not answer.
template <typename Fn>
nvmlReturn_t OnGpu(nvmlDevice_t device, nvmlReturn_t args, Fn&& fn) {
  return OnDevice(device, args, [&](SimulatedGpu& g, const DeviceHandle& h) -> nvmlReturn_t {
    if (h.mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
    return fn(g);
  });
}

// The integer a caller passed as a C enum. C callers may pass any value, and
// loading an out-of-range value as a C++ enum is undefined, so read the bytes.
template <typename E>
long long Raw(const E& value) {
  std::underlying_type_t<E> raw;
  static_assert(sizeof(raw) == sizeof(value));
  std::memcpy(&raw, &value, sizeof(raw));
  return static_cast<long long>(raw);
}

template <typename E>
bool InRange(const E& value, E lo, E hi) {
  const long long v = Raw(value);
  return v >= static_cast<long long>(lo) && v <= static_cast<long long>(hi);
}

inline nvmlReturn_t Check(bool ok) { return ok ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT; }

// The argument check of a versioned struct (its first member is `version`):
// null is INVALID_ARGUMENT, another version ARGUMENT_VERSION_MISMATCH.
template <typename T>
nvmlReturn_t CheckVersioned(const T* s, unsigned int version) {
  if (s == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return s->version == version ? NVML_SUCCESS : NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

// An index into a GPU's `count` parts (NVLink links, fans): NOT_SUPPORTED
// when it has none, INVALID_ARGUMENT past the last.
inline nvmlReturn_t CheckPart(unsigned int index, int count) {
  if (count == 0) return NVML_ERROR_NOT_SUPPORTED;
  return index < static_cast<unsigned int>(count) ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

inline nvmlReturn_t CopyString(std::string_view s, char* out, unsigned int length) {
  if (length < s.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return NVML_SUCCESS;
}

inline bool MigEnabled(const GpuProfile& p) { return p.has_mig && p.mig_instances > 0; }

// With MIG enabled the parent answers no remapped-row query (nvidia-smi shows
// none in the MIG readings), though the GPU still remaps rows.
inline bool RemappedRowsSupported(const GpuProfile& p) {
  return p.has_row_remapping && !MigEnabled(p);
}

// The GPU's temperature limits (profile.h) in whole degrees, as NVML
// reports them. A memory limit of 0 means the model has none.
inline int LimitC(double celsius) { return static_cast<int>(std::lround(celsius)); }
inline bool HasMemoryLimit(const GpuProfile& p) { return p.memory_max_operating_temp_c > 0; }

}  // namespace fake_nvml
}  // namespace gpumon::sim

#pragma GCC visibility pop
