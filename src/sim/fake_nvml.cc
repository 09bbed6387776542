// The fake NVML: every entry point of GPUMON_NVML_FUNCTIONS (gpu/nvml_api.h),
// with C linkage and NVML's exact signatures, answered from one process-wide
// SimulatedFleet. Built as libgpumon-fake-nvml.so, which gpumon opens with
// dlopen exactly as it opens the real libnvidia-ml.so.1.
//
// Configuration, read by nvmlInit_v2 when the reference count goes from 0
// to 1: GPUMON_SIM_SPEC (fleet spec, default "h200x8"), GPUMON_SIM_SEED
// (unsigned integer, default 1), GPUMON_SIM_FAULTS (fault schedule, default
// none), GPUMON_SIM_CLOCK ("steady", the default: simulated time is the
// steady clock since init; "virtual": it is 0 at init and moves only when
// the caller sets it through gpumonSimSetTimeMs, so data can be generated
// for any span of time as fast as the CPU allows), GPUMON_SIM_SCENARIO
// (scenario list, sim/scenario.h, default none), GPUMON_SIM_SPEED (steady
// clock multiplier, a number > 0, default 1; the virtual clock ignores it)
// and GPUMON_SIM_NODE_SIZE (GPUs per node for the scenarios' node=, default
// 8). A bad value makes nvmlInit_v2 print the reason to stderr and return
// NVML_ERROR_UNKNOWN. gpumonSimGroundTruth hands out the run's ground truth
// (docs/formats/ground-truth.md); it is never visible through NVML.
//
// Return codes follow NVML's documented order: UNINITIALIZED before init,
// then INVALID_ARGUMENT (unknown handle, null pointer, bad index or enum),
// ARGUMENT_VERSION_MISMATCH for versioned structs, GPU_IS_LOST for a GPU that
// fell off the bus, NOT_SUPPORTED for signals the profile lacks, and
// INSUFFICIENT_SIZE for short string buffers. Handles stay valid until the
// final nvmlShutdown; state from before a shutdown is kept (not freed) so a
// late call with an old handle gets INVALID_ARGUMENT, never a crash.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "gpu/nvml_api.h"
#include "sim/fleet.h"
#include "sim/scenario_report.h"

// Declare every entry point with C linkage and default visibility (the rest
// of the library is hidden); a definition below whose signature drifts from
// nvml_api.h fails to compile against these declarations.
#define GPUMON_FAKE_NVML_DECLARE(name, ret, params) \
  extern "C" __attribute__((visibility("default"))) ret name params;
GPUMON_NVML_FUNCTIONS(GPUMON_FAKE_NVML_DECLARE)
#undef GPUMON_FAKE_NVML_DECLARE

// The marker the agent looks for (GPUMON_SIMULATED_NVML_MARKER): whatever
// flag loaded this library, its data is labelled simulated.
extern "C" __attribute__((visibility("default"))) int gpumonSimulatedNvml(void) { return 1; }

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

namespace gpumon::sim {
namespace {

static_assert(nvmlClocksEventReasonGpuIdle == kReasonGpuIdle);
static_assert(nvmlClocksEventReasonSwPowerCap == kReasonSwPowerCap);
static_assert(nvmlClocksThrottleReasonHwSlowdown == kReasonHwSlowdown);
static_assert(nvmlClocksEventReasonSwThermalSlowdown == kReasonSwThermalSlowdown);
static_assert(nvmlClocksThrottleReasonHwThermalSlowdown == kReasonHwThermalSlowdown);
static_assert(nvmlClocksThrottleReasonHwPowerBrakeSlowdown == kReasonHwPowerBrakeSlowdown);
static_assert(NVML_NVLINK_MAX_LINKS == kMaxNvLinks);
static_assert(NVML_NVLINK_ERROR_DL_ECC_DATA == kNvLinkErrorKinds - 1);

constexpr const char* kDriverVersion = "590.48.01";
constexpr const char* kNvmlVersion = "13.590.48.01";
constexpr int kCudaDriverVersion = 13010;  // CUDA 13.1, as driver 590.48.01 reports
constexpr unsigned int kSamplingPeriodUs = 167000;
constexpr unsigned int kNoInstance = 0xFFFFFFFF;
constexpr unsigned long long kSupportedEvents = nvmlEventTypeXidCriticalError;

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
  std::vector<std::unique_ptr<EventSet>> all_sets;  // freed sets are kept, see file comment
};

std::mutex g_init_mu;
int g_refcount = 0;
// The virtual clock's time; reset to 0 by the nvmlInit_v2 that builds a
// fleet on it.
std::atomic<int64_t> g_virtual_ms{0};
std::atomic<State*> g_state{nullptr};
std::vector<std::unique_ptr<State>>& States() {
  // Freed when the library is unloaded (or at exit), so nothing leaks.
  static std::vector<std::unique_ptr<State>> states;
  return states;
}

State* Current() { return g_state.load(std::memory_order_acquire); }

template <typename T>
bool Within(const std::vector<T>& v, const T* p) {
  if (v.empty()) return false;
  return !std::less<const T*>()(p, v.data()) && std::less<const T*>()(p, v.data() + v.size());
}

nvmlDevice_t ToDevice(const DeviceHandle* h) {
  return reinterpret_cast<nvmlDevice_t>(const_cast<DeviceHandle*>(h));
}

// Resolves `device` in the current state. Returns SUCCESS or the error code.
nvmlReturn_t Resolve(nvmlDevice_t device, State** state, const DeviceHandle** handle) {
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

nvmlReturn_t Check(bool ok) { return ok ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT; }

nvmlReturn_t CopyString(std::string_view s, char* out, unsigned int length) {
  if (length < s.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return NVML_SUCCESS;
}

bool MigEnabled(const GpuProfile& p) { return p.has_mig && p.mig_instances > 0; }

// With MIG enabled the parent answers no remapped-row query (nvidia-smi shows
// none in the MIG readings), though the GPU still remaps rows.
bool RemappedRowsSupported(const GpuProfile& p) { return p.has_row_remapping && !MigEnabled(p); }

// The GPU's temperature limits (profile.h) in whole degrees, as NVML
// reports them. A memory limit of 0 means the model has none.
int LimitC(double celsius) { return static_cast<int>(std::lround(celsius)); }
bool HasMemoryLimit(const GpuProfile& p) { return p.memory_max_operating_temp_c > 0; }

// A T.Limit field: the limit as an offset from the die's maximum operating
// temperature, the reference the margin is measured against (negative =
// hotter), so H200's slowdown at 89 against 87 reads -2.
int TlimitOffset(const GpuProfile& p, double limit_c) {
  return LimitC(p.gpu_max_operating_temp_c) - LimitC(limit_c);
}

// The recovery action the driver recommends, a function of the GPU's state:
// a GPU reset while a row remap is pending (an uncorrectable error's remap
// takes effect at the next reset), else none. Reported where rows are
// remapped (Ampere and newer data-center GPUs).
bool RecoveryActionSupported(const GpuProfile& p) { return p.has_row_remapping; }
unsigned int RecoveryAction(const SimulatedGpu& g) {
  return g.remapped_rows().pending ? NVML_GPU_RECOVERY_ACTION_GPU_RESET
                                   : NVML_GPU_RECOVERY_ACTION_NONE;
}

void FillField(const SimulatedGpu& g, nvmlFieldValue_t& v) {
  const GpuProfile& p = g.profile();
  v.nvmlReturn = NVML_SUCCESS;
  v.latencyUsec = 0;
  std::memset(&v.value, 0, sizeof(v.value));
  auto ull = [&](bool supported, uint64_t x) {
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    if (supported) {
      v.value.ullVal = x;
    } else {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  };
  auto ui = [&](bool supported, unsigned int x) {
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (supported) {
      v.value.uiVal = x;
    } else {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  };
  auto si = [&](bool supported, int x) {
    v.valueType = NVML_VALUE_TYPE_SIGNED_INT;
    if (supported) {
      v.value.siVal = x;
    } else {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  };
  auto ns = [&](ClockEventCounter c) { ull(p.has_clock_event_counters, g.clock_event_ns(c)); };
  auto link = [&](bool tx) {
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    if (p.nvlink_links == 0) {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    } else if (v.scopeId >= static_cast<unsigned int>(p.nvlink_links)) {
      v.nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
    } else {
      const int l = static_cast<int>(v.scopeId);
      v.value.ullVal = tx ? g.nvlink_tx_kib(l) : g.nvlink_rx_kib(l);
    }
  };
  const RemappedRows rows = g.remapped_rows();
  switch (v.fieldId) {
    case NVML_FI_DEV_PERF_POLICY_POWER:
      return ns(ClockEventCounter::kSwPowerCap);
    case NVML_FI_DEV_PERF_POLICY_THERMAL:
      return ull(p.has_clock_event_counters, g.clock_event_ns(ClockEventCounter::kSwThermal) +
                                                 g.clock_event_ns(ClockEventCounter::kHwThermal));
    case NVML_FI_DEV_PERF_POLICY_SYNC_BOOST:
      return ns(ClockEventCounter::kSyncBoost);
    case NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT:
    case NVML_FI_DEV_PERF_POLICY_RELIABILITY:
      return ull(p.has_clock_event_counters, 0);
    case NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION:
      return ns(ClockEventCounter::kLowUtilization);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN:
      return ns(ClockEventCounter::kSwThermal);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN:
      return ns(ClockEventCounter::kHwThermal);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN:
      return ns(ClockEventCounter::kHwPowerBrake);
    case NVML_FI_DEV_MEMORY_TEMP:
      return ui(p.has_memory_temperature, static_cast<unsigned int>(g.memory_temperature_c()));
    case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
      return ull(p.has_energy, g.energy_mj());
    case NVML_FI_DEV_NVLINK_LINK_COUNT:
      return ui(p.nvlink_links > 0, static_cast<unsigned int>(p.nvlink_links));
    case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
      return ui(p.has_pcie_replay, g.pcie_replays());
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
      return link(true);
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
      return link(false);
    case NVML_FI_DEV_REMAPPED_COR:
      return ui(RemappedRowsSupported(p), rows.correctable);
    case NVML_FI_DEV_REMAPPED_UNC:
      return ui(RemappedRowsSupported(p), rows.uncorrectable);
    case NVML_FI_DEV_REMAPPED_PENDING:
      return ui(RemappedRowsSupported(p), rows.pending ? 1 : 0);
    case NVML_FI_DEV_REMAPPED_FAILURE:
      return ui(RemappedRowsSupported(p), rows.failure ? 1 : 0);
    case NVML_FI_DEV_POWER_INSTANT:
      return ui(p.has_power_instant, g.power_instant_mw());
    case NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT:
      return si(true, TlimitOffset(p, p.shutdown_temp_c));
    case NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT:
      return si(true, TlimitOffset(p, p.slowdown_temp_c));
    case NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT:
      return si(HasMemoryLimit(p), 0);  // from the memory's own maximum, as Hopper reports
    case NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT:
      return si(true, 0);
    case NVML_FI_DEV_GET_GPU_RECOVERY_ACTION:
      return ui(RecoveryActionSupported(p), RecoveryAction(g));
    case NVML_FI_DEV_PCIE_COUNT_TX_BYTES:
      return ull(p.has_pcie_byte_counters, g.pcie_tx_bytes());
    case NVML_FI_DEV_PCIE_COUNT_RX_BYTES:
      return ull(p.has_pcie_byte_counters, g.pcie_rx_bytes());
    default:
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      return;
  }
}

// Frame buffer numbers of a physical GPU or a MIG instance, NVML v2 style.
void MemoryOf(const SimulatedGpu& g, const DeviceHandle& h, nvmlMemory_v2_t* m) {
  const GpuProfile& p = g.profile();
  if (h.mig < 0) {
    m->total = p.memory_total_bytes;
    m->reserved = p.memory_reserved_bytes;
    m->used = g.memory_used_bytes();
  } else {
    // Instances share the parent's allocations evenly.
    m->total = p.mig_instance_memory_bytes;
    m->reserved = 0;
    m->used = std::min<unsigned long long>(g.memory_used_bytes() / p.mig_instances, m->total);
  }
  m->free = m->total - m->reserved - m->used;
}

// Parses GPUMON_SIM_SEED; false when malformed.
bool ParseSeed(const char* text, uint64_t* seed) {
  if (text == nullptr || *text == '\0') return false;
  uint64_t n = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return false;
    const uint64_t next = n * 10 + static_cast<uint64_t>(*c - '0');
    if (next / 10 != n) return false;  // overflow
    n = next;
  }
  *seed = n;
  return true;
}

std::unique_ptr<State> BuildState(std::string* error) {
  FleetOptions options;
  if (const char* spec = std::getenv("GPUMON_SIM_SPEC"); spec != nullptr && *spec != '\0') {
    options.spec = spec;
  }
  if (const char* seed = std::getenv("GPUMON_SIM_SEED"); seed != nullptr && *seed != '\0') {
    if (!ParseSeed(seed, &options.seed)) {
      *error = std::string("GPUMON_SIM_SEED \"") + seed + "\" is not an unsigned integer";
      return nullptr;
    }
  }
  if (const char* faults = std::getenv("GPUMON_SIM_FAULTS"); faults != nullptr) {
    options.faults = faults;
  }
  if (const char* scenarios = std::getenv("GPUMON_SIM_SCENARIO"); scenarios != nullptr) {
    options.scenarios = scenarios;
  }
  if (const char* speed = std::getenv("GPUMON_SIM_SPEED"); speed != nullptr && *speed != '\0') {
    char* end = nullptr;
    const double v = std::strtod(speed, &end);
    if (end == speed || *end != '\0' || !(v > 0) || !std::isfinite(v)) {
      *error = std::string("GPUMON_SIM_SPEED \"") + speed + "\" must be a number greater than 0";
      return nullptr;
    }
    options.speed = v;
  }
  if (const char* size = std::getenv("GPUMON_SIM_NODE_SIZE"); size != nullptr && *size != '\0') {
    uint64_t n = 0;
    if (!ParseSeed(size, &n) || n < 1 || n > static_cast<uint64_t>(kMaxFleetSize)) {
      *error = std::string("GPUMON_SIM_NODE_SIZE \"") + size + "\" must be an integer in 1.." +
               std::to_string(kMaxFleetSize);
      return nullptr;
    }
    options.node_size = static_cast<int>(n);
  }
  bool virtual_clock = false;
  if (const char* clock = std::getenv("GPUMON_SIM_CLOCK"); clock != nullptr && *clock != '\0') {
    if (std::string_view(clock) == "virtual") {
      virtual_clock = true;
    } else if (std::string_view(clock) != "steady") {
      *error = std::string("GPUMON_SIM_CLOCK \"") + clock + "\" must be steady or virtual";
      return nullptr;
    }
  }
  if (virtual_clock) {
    g_virtual_ms.store(0, std::memory_order_relaxed);
    options.clock_ms = [] { return g_virtual_ms.load(std::memory_order_acquire); };
  }
  Result<std::unique_ptr<SimulatedFleet>> fleet = SimulatedFleet::Create(std::move(options));
  if (!fleet.ok()) {
    *error = fleet.status().message();
    return nullptr;
  }
  auto state = std::make_unique<State>();
  state->fleet = std::move(fleet).value();
  state->virtual_clock = virtual_clock;
  const int n = state->fleet->size();
  state->gpus.resize(static_cast<size_t>(n));
  state->first_mig.assign(static_cast<size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    state->gpus[i] = DeviceHandle{i, -1};
    const GpuProfile& p = state->fleet->profile(i);
    if (MigEnabled(p)) {
      state->first_mig[i] = static_cast<int>(state->migs.size());
      for (int k = 0; k < p.mig_instances; ++k) state->migs.push_back(DeviceHandle{i, k});
    }
  }
  return state;
}

EventSet* FindSet(State* s, nvmlEventSet_t set) {
  auto* e = reinterpret_cast<EventSet*>(set);
  std::lock_guard<std::mutex> lock(s->sets_mu);
  return s->live_sets.count(e) != 0 ? e : nullptr;
}

}  // namespace
}  // namespace gpumon::sim

using gpumon::sim::ClockDomain;
using gpumon::sim::DeviceHandle;
using gpumon::sim::GpuProfile;
using gpumon::sim::SimulatedGpu;
namespace sim = gpumon::sim;

extern "C" {

void gpumonSimSetTimeMs(int64_t t_ms) {
  int64_t current = sim::g_virtual_ms.load(std::memory_order_relaxed);
  while (t_ms > current &&
         !sim::g_virtual_ms.compare_exchange_weak(current, t_ms, std::memory_order_release,
                                                  std::memory_order_relaxed)) {
  }
}

size_t gpumonSimGroundTruth(char* buf, size_t len) {
  sim::State* s = sim::Current();
  std::string json;
  if (s != nullptr) json = sim::GroundTruthJson(*s->fleet, s->virtual_clock ? "virtual" : "steady");
  if (buf != nullptr && len > json.size()) {
    std::memcpy(buf, json.data(), json.size());
    buf[json.size()] = '\0';
  }
  return json.size();
}

nvmlReturn_t nvmlInit_v2(void) {
  std::lock_guard<std::mutex> lock(sim::g_init_mu);
  if (sim::g_refcount > 0) {
    ++sim::g_refcount;
    return NVML_SUCCESS;
  }
  std::string error;
  std::unique_ptr<sim::State> state = sim::BuildState(&error);
  if (state == nullptr) {
    std::fprintf(stderr, "gpumon-fake-nvml: %s\n", error.c_str());
    return NVML_ERROR_UNKNOWN;
  }
  sim::g_state.store(state.get(), std::memory_order_release);
  sim::States().push_back(std::move(state));
  sim::g_refcount = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  std::lock_guard<std::mutex> lock(sim::g_init_mu);
  if (sim::g_refcount == 0) return NVML_ERROR_UNINITIALIZED;
  if (--sim::g_refcount == 0) sim::g_state.store(nullptr, std::memory_order_release);
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (sim::Raw(result)) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "Already Initialized";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_IRQ_ISSUE:
      return "Interrupt request issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
      return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "The operating system has blocked the request";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch";
    case NVML_ERROR_IN_USE:
      return "In use by another client";
    case NVML_ERROR_MEMORY:
      return "Insufficient Memory";
    case NVML_ERROR_NO_DATA:
      return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_ENABLED:
      return "The requested vgpu operation is not available on target device, because ECC is "
             "enabled";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "Insufficient resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
      return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED:
      return "Deprecated";
    case NVML_ERROR_NOT_READY:
      return "Not Ready";
    case NVML_ERROR_GPU_NOT_FOUND:
      return "GPU not found";
    case NVML_ERROR_INVALID_STATE:
      return "Invalid state";
    case NVML_ERROR_UNKNOWN:
      return "Unknown Error";
  }
  return "Unknown Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (sim::Current() == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return sim::CopyString(sim::kDriverVersion, version, length);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  if (sim::Current() == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return sim::CopyString(sim::kNvmlVersion, version, length);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  if (sim::Current() == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (cudaDriverVersion == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *cudaDriverVersion = sim::kCudaDriverVersion;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (deviceCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = static_cast<unsigned int>(s->gpus.size());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= s->gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  // Handles of lost GPUs are still handed out; every call on them then
  // reports GPU_IS_LOST, which lets callers tell "lost" from "absent".
  *device = sim::ToDevice(&s->gpus[index]);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return sim::OnDevice(
      device, sim::Check(name != nullptr), [&](SimulatedGpu& g, const DeviceHandle& h) {
        const GpuProfile& p = g.profile();
        if (h.mig < 0) return sim::CopyString(p.name, name, length);
        std::string mig_name = std::string(p.name) + " MIG " + std::string(p.mig_profile_name);
        return sim::CopyString(mig_name, name, length);
      });
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return sim::OnDevice(device, sim::Check(uuid != nullptr),
                       [&](SimulatedGpu& g, const DeviceHandle& h) {
                         if (h.mig < 0) return sim::CopyString(g.uuid(), uuid, length);
                         return sim::CopyString(g.mig_uuid(h.mig), uuid, length);
                       });
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return sim::OnGpu(device, sim::Check(pci != nullptr), [&](SimulatedGpu& g) {
    std::memset(pci, 0, sizeof(*pci));
    pci->domain = g.pci_domain();
    pci->bus = g.pci_bus();
    pci->device = 0;
    pci->pciDeviceId = g.profile().pci_device_id;
    pci->pciSubSystemId = g.profile().pci_subsystem_id;
    std::snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", pci->domain, pci->bus,
                  pci->device);
    std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0",
                  pci->domain & 0xFFFF, pci->bus, pci->device);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version, unsigned int length) {
  return sim::OnGpu(device, sim::Check(version != nullptr), [&](SimulatedGpu& g) {
    return sim::CopyString(g.profile().vbios_version, version, length);
  });
}

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* temperature) {
  nvmlReturn_t args = sim::Check(temperature != nullptr);
  if (args == NVML_SUCCESS && temperature->version != nvmlTemperature_v1) {
    args = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  } else if (args == NVML_SUCCESS && sim::Raw(temperature->sensorType) != NVML_TEMPERATURE_GPU) {
    args = NVML_ERROR_INVALID_ARGUMENT;
  }
  return sim::OnGpu(device, args, [&](SimulatedGpu& g) {
    temperature->temperature = g.temperature_c();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int* temp) {
  return sim::OnGpu(device,
                    sim::Check(temp != nullptr && sim::Raw(sensorType) == NVML_TEMPERATURE_GPU),
                    [&](SimulatedGpu& g) {
                      *temp = static_cast<unsigned int>(std::max(0, g.temperature_c()));
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                               nvmlTemperatureThresholds_t thresholdType,
                                               unsigned int* temp) {
  const bool ok =
      temp != nullptr && sim::InRange(thresholdType, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN,
                                      NVML_TEMPERATURE_THRESHOLD_GPS_CURR);
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    const GpuProfile& p = g.profile();
    double limit = 0;
    switch (sim::Raw(thresholdType)) {
      case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
        limit = p.shutdown_temp_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
        limit = p.slowdown_temp_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
        if (!sim::HasMemoryLimit(p)) return NVML_ERROR_NOT_SUPPORTED;
        limit = p.memory_max_operating_temp_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
        limit = p.gpu_max_operating_temp_c;
        break;
      default:
        return NVML_ERROR_NOT_SUPPORTED;  // acoustic and GPS thresholds
    }
    *temp = static_cast<unsigned int>(sim::LimitC(limit));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMarginTemperature(nvmlDevice_t device,
                                            nvmlMarginTemperature_t* marginTempInfo) {
  nvmlReturn_t args = sim::Check(marginTempInfo != nullptr);
  if (args == NVML_SUCCESS && marginTempInfo->version != nvmlMarginTemperature_v1) {
    args = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  return sim::OnGpu(device, args, [&](SimulatedGpu& g) {
    // Degrees below the maximum operating temperature (nvidia-smi's T.Limit).
    marginTempInfo->marginTemperature =
        sim::LimitC(g.profile().gpu_max_operating_temp_c) - g.temperature_c();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return sim::OnGpu(device, sim::Check(power != nullptr), [&](SimulatedGpu& g) {
    *power = g.power_mw();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  return sim::OnGpu(device, sim::Check(limit != nullptr), [&](SimulatedGpu& g) {
    *limit = g.power_limit_mw();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return sim::OnGpu(device, sim::Check(limit != nullptr), [&](SimulatedGpu& g) {
    *limit = g.power_limit_mw();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  return sim::OnGpu(device, sim::Check(energy != nullptr), [&](SimulatedGpu& g) {
    if (!g.profile().has_energy) return NVML_ERROR_NOT_SUPPORTED;
    *energy = g.energy_mj();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  return sim::OnGpu(device, sim::Check(utilization != nullptr), [&](SimulatedGpu& g) {
    // With MIG on, utilization exists only per instance (nvidia-smi shows "-").
    if (sim::MigEnabled(g.profile())) return NVML_ERROR_NOT_SUPPORTED;
    utilization->gpu = g.utilization_gpu_pct();
    utilization->memory = g.utilization_memory_pct();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                             unsigned int* samplingPeriodUs) {
  return sim::OnGpu(device, sim::Check(utilization != nullptr && samplingPeriodUs != nullptr),
                    [&](SimulatedGpu& g) {
                      if (!g.profile().has_encoder || sim::MigEnabled(g.profile())) {
                        return NVML_ERROR_NOT_SUPPORTED;
                      }
                      *utilization = g.encoder_pct();
                      *samplingPeriodUs = sim::kSamplingPeriodUs;
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                             unsigned int* samplingPeriodUs) {
  return sim::OnGpu(device, sim::Check(utilization != nullptr && samplingPeriodUs != nullptr),
                    [&](SimulatedGpu& g) {
                      if (!g.profile().has_decoder || sim::MigEnabled(g.profile())) {
                        return NVML_ERROR_NOT_SUPPORTED;
                      }
                      *utilization = g.decoder_pct();
                      *samplingPeriodUs = sim::kSamplingPeriodUs;
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                    unsigned int* clock) {
  return sim::OnGpu(
      device,
      sim::Check(clock != nullptr && sim::InRange(type, NVML_CLOCK_GRAPHICS, NVML_CLOCK_VIDEO)),
      [&](SimulatedGpu& g) {
        *clock = g.clock_mhz(static_cast<ClockDomain>(type));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int* clock) {
  return sim::OnGpu(
      device,
      sim::Check(clock != nullptr && sim::InRange(type, NVML_CLOCK_GRAPHICS, NVML_CLOCK_VIDEO)),
      [&](SimulatedGpu& g) {
        *clock = sim::MaxClockMhz(g.profile(), static_cast<ClockDomain>(type));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* clocksEventReasons) {
  return sim::OnGpu(device, sim::Check(clocksEventReasons != nullptr), [&](SimulatedGpu& g) {
    *clocksEventReasons = g.clocks_event_reasons();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(
    nvmlDevice_t device, unsigned long long* supportedClocksEventReasons) {
  return sim::OnGpu(device, sim::Check(supportedClocksEventReasons != nullptr), [&](SimulatedGpu&) {
    *supportedClocksEventReasons = sim::kSupportedReasons;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  nvmlReturn_t args = sim::Check(memory != nullptr);
  if (args == NVML_SUCCESS && memory->version != nvmlMemory_v2) {
    args = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  return sim::OnDevice(device, args, [&](SimulatedGpu& g, const DeviceHandle& h) {
    sim::MemoryOf(g, h, memory);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return sim::OnDevice(device, sim::Check(memory != nullptr),
                       [&](SimulatedGpu& g, const DeviceHandle& h) {
                         nvmlMemory_v2_t m{};
                         sim::MemoryOf(g, h, &m);
                         // v1 counts reserved memory as used.
                         memory->total = m.total;
                         memory->used = m.used + m.reserved;
                         memory->free = m.free;
                         return NVML_SUCCESS;
                       });
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType,
                                         unsigned long long* eccCounts) {
  const bool ok = eccCounts != nullptr &&
                  sim::InRange(errorType, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                               NVML_MEMORY_ERROR_TYPE_UNCORRECTED) &&
                  sim::InRange(counterType, NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC);
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    if (!g.profile().has_ecc) return NVML_ERROR_NOT_SUPPORTED;
    *eccCounts = g.ecc_errors(errorType == NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                              counterType == NVML_AGGREGATE_ECC);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned int* pageCount, unsigned long long* addresses) {
  const bool ok = pageCount != nullptr &&
                  sim::InRange(cause, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
                               NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
  (void)addresses;  // the model never retires pages, so nothing is written
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    if (!g.profile().has_retired_pages) return NVML_ERROR_NOT_SUPPORTED;
    *pageCount = 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device,
                                                    nvmlEnableState_t* isPending) {
  return sim::OnGpu(device, sim::Check(isPending != nullptr), [&](SimulatedGpu& g) {
    if (!g.profile().has_retired_pages) return NVML_ERROR_NOT_SUPPORTED;
    *isPending = NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int* corrRows,
                                       unsigned int* uncRows, unsigned int* isPending,
                                       unsigned int* failureOccurred) {
  const bool ok = corrRows != nullptr && uncRows != nullptr && isPending != nullptr &&
                  failureOccurred != nullptr;
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    if (!sim::RemappedRowsSupported(g.profile())) return NVML_ERROR_NOT_SUPPORTED;
    const sim::RemappedRows rows = g.remapped_rows();
    *corrRows = rows.correctable;
    *uncRows = rows.uncorrectable;
    *isPending = rows.pending ? 1 : 0;
    *failureOccurred = rows.failure ? 1 : 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  return sim::OnGpu(device, sim::Check(value != nullptr), [&](SimulatedGpu& g) {
    if (!g.profile().has_pcie_replay) return NVML_ERROR_NOT_SUPPORTED;
    *value = g.pcie_replays();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* currLinkGen) {
  return sim::OnGpu(device, sim::Check(currLinkGen != nullptr), [&](SimulatedGpu& g) {
    *currLinkGen = static_cast<unsigned int>(g.pcie_gen());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* currLinkWidth) {
  return sim::OnGpu(device, sim::Check(currLinkWidth != nullptr), [&](SimulatedGpu& g) {
    *currLinkWidth = static_cast<unsigned int>(g.pcie_width());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGen) {
  return sim::OnGpu(device, sim::Check(maxLinkGen != nullptr), [&](SimulatedGpu& g) {
    *maxLinkGen = static_cast<unsigned int>(g.profile().pcie_max_gen);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* maxLinkWidth) {
  return sim::OnGpu(device, sim::Check(maxLinkWidth != nullptr), [&](SimulatedGpu& g) {
    *maxLinkWidth = static_cast<unsigned int>(g.profile().pcie_max_width);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t* values) {
  return sim::OnDevice(device, sim::Check(values != nullptr && valuesCount >= 0),
                       [&](SimulatedGpu& g, const DeviceHandle& h) {
                         // On the virtual clock the field timestamp is the
                         // simulated time too, so the same times give the same
                         // answers.
                         const sim::State* state = sim::Current();
                         const long long now_us =
                             state != nullptr && state->virtual_clock
                                 ? static_cast<long long>(g.now_ms()) * 1000
                                 : std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
                         for (int i = 0; i < valuesCount; ++i) {
                           nvmlFieldValue_t& v = values[i];
                           v.timestamp = now_us;
                           if (h.mig >= 0) {
                             // MIG devices answer the call but none of these device fields.
                             v.latencyUsec = 0;
                             v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                             std::memset(&v.value, 0, sizeof(v.value));
                             v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
                           } else {
                             sim::FillField(g, v);
                           }
                         }
                         return NVML_SUCCESS;
                       });
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t* isActive) {
  return sim::OnGpu(device, sim::Check(isActive != nullptr), [&](SimulatedGpu& g) {
    const int links = g.profile().nvlink_links;
    if (links == 0) return NVML_ERROR_NOT_SUPPORTED;
    if (link >= static_cast<unsigned int>(links)) return NVML_ERROR_INVALID_ARGUMENT;
    *isActive =
        g.nvlink_active(static_cast<int>(link)) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                             nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long* counterValue) {
  const bool ok = counterValue != nullptr &&
                  sim::InRange(counter, NVML_NVLINK_ERROR_DL_REPLAY, NVML_NVLINK_ERROR_DL_ECC_DATA);
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    const int links = g.profile().nvlink_links;
    if (links == 0) return NVML_ERROR_NOT_SUPPORTED;
    if (link >= static_cast<unsigned int>(links)) return NVML_ERROR_INVALID_ARGUMENT;
    *counterValue = g.nvlink_errors(static_cast<int>(link), static_cast<sim::NvLinkError>(counter));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int* numFans) {
  return sim::OnGpu(device, sim::Check(numFans != nullptr), [&](SimulatedGpu& g) {
    if (g.profile().num_fans == 0) return NVML_ERROR_NOT_SUPPORTED;
    *numFans = static_cast<unsigned int>(g.profile().num_fans);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int* speed) {
  return sim::OnGpu(device, sim::Check(speed != nullptr), [&](SimulatedGpu& g) {
    const int fans = g.profile().num_fans;
    if (fans == 0) return NVML_ERROR_NOT_SUPPORTED;
    if (fan >= static_cast<unsigned int>(fans)) return NVML_ERROR_INVALID_ARGUMENT;
    *speed = g.fan_speed_pct(static_cast<int>(fan));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pState) {
  return sim::OnGpu(device, sim::Check(pState != nullptr), [&](SimulatedGpu& g) {
    *pState = static_cast<nvmlPstates_t>(g.pstate());
    return NVML_SUCCESS;
  });
}

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

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* currentMode,
                                  unsigned int* pendingMode) {
  return sim::OnGpu(device, sim::Check(currentMode != nullptr && pendingMode != nullptr),
                    [&](SimulatedGpu& g) {
                      if (!g.profile().has_mig) return NVML_ERROR_NOT_SUPPORTED;
                      const unsigned int mode = sim::MigEnabled(g.profile()) ? 1 : 0;
                      *currentMode = mode;
                      *pendingMode = mode;
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  return sim::OnGpu(device, sim::Check(count != nullptr), [&](SimulatedGpu& g) {
    // NVML: zero when MIG is not supported or not enabled.
    const GpuProfile& p = g.profile();
    *count = sim::MigEnabled(p) ? static_cast<unsigned int>(p.max_mig_devices) : 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t* migDevice) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  return sim::OnGpu(device, sim::Check(migDevice != nullptr), [&](SimulatedGpu& g) {
    const GpuProfile& p = g.profile();
    if (!p.has_mig) return NVML_ERROR_NOT_SUPPORTED;
    if (index >= static_cast<unsigned int>(p.max_mig_devices)) return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= static_cast<unsigned int>(p.mig_instances)) return NVML_ERROR_NOT_FOUND;
    const int first = s->first_mig[static_cast<size_t>(g.index())];
    *migDevice = sim::ToDevice(&s->migs[static_cast<size_t>(first) + index]);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  return sim::OnDevice(device, sim::Check(id != nullptr),
                       [&](SimulatedGpu&, const DeviceHandle& h) {
                         if (h.mig < 0) return NVML_ERROR_NOT_SUPPORTED;
                         *id = static_cast<unsigned int>(h.mig) + 1;  // GPU instances count from 1
                         return NVML_SUCCESS;
                       });
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  return sim::OnDevice(device, sim::Check(id != nullptr),
                       [&](SimulatedGpu&, const DeviceHandle& h) {
                         if (h.mig < 0) return NVML_ERROR_NOT_SUPPORTED;
                         *id = 0;  // one compute instance spanning each GPU instance
                         return NVML_SUCCESS;
                       });
}

}  // extern "C"

// Every entry point of the X-macro is defined above, with its exact type.
#define GPUMON_FAKE_NVML_CHECK(name, ret, params) \
  static_assert(std::is_same_v<decltype(&name), ret(*) params>, #name);
GPUMON_NVML_FUNCTIONS(GPUMON_FAKE_NVML_CHECK)
#undef GPUMON_FAKE_NVML_CHECK
