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
// GPUMON_SIM_NODE_SIZE (GPUs per node for the scenarios' node=, default 8)
// and GPUMON_SIM_PROCESSES (a file of simulated GPU processes, re-read when it
// changes; sim/process_file.h, fake_nvml_processes.cc). A bad value makes nvmlInit_v2 print the
// reason to stderr and return NVML_ERROR_UNKNOWN. gpumonSimGroundTruth hands out the run's ground
// truth (docs/formats/ground-truth.md); it is never visible through NVML.
//
// Return codes follow NVML's documented order: UNINITIALIZED before init,
// then INVALID_ARGUMENT (unknown handle, null pointer, bad index or enum),
// ARGUMENT_VERSION_MISMATCH for versioned structs, GPU_IS_LOST for a GPU that
// fell off the bus, NOT_SUPPORTED for signals the profile lacks, and
// INSUFFICIENT_SIZE for short string buffers. Handles stay valid until the
// final nvmlShutdown; state from before a shutdown is kept (not freed) so a
// late call with an old handle gets INVALID_ARGUMENT, never a crash.
//
// The library's parts: this file holds its state, initialization and
// configuration, the gpumon* symbols, error strings and the system and
// device-count queries and handle look-ups; fake_nvml_device.cc the
// per-device queries (MIG included), fake_nvml_fields.cc
// nvmlDeviceGetFieldValues, fake_nvml_events.cc the XID event sets,
// fake_nvml_processes.cc the process lists, and fake_nvml_state.h what they
// share.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/fake_nvml_state.h"
#include "sim/scenario_report.h"

namespace gpumon::sim {
namespace {

constexpr const char* kDriverVersion = "590.48.01";
constexpr const char* kNvmlVersion = "13.590.48.01";
constexpr int kCudaDriverVersion = 13010;  // CUDA 13.1, as driver 590.48.01 reports

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
    const double v = ParseSpeed(speed);
    if (v == 0) {
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
  const char* processes = std::getenv("GPUMON_SIM_PROCESSES");
  state->processes =
      std::make_unique<ProcessFile>(processes != nullptr ? processes : std::string(), n);
  if (Result<std::vector<SimProcess>> p = state->processes->Current(); !p.ok()) {
    *error = "GPUMON_SIM_PROCESSES: " + p.status().message();
    return nullptr;
  }
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

}  // namespace

State* fake_nvml::Current() { return g_state.load(std::memory_order_acquire); }

}  // namespace gpumon::sim

namespace sim = gpumon::sim;

extern "C" {

int gpumonSimulatedNvml(void) { return 1; }

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

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::string_view want(uuid);
  for (int i = 0; i < s->fleet->size(); ++i) {
    const sim::DeviceHandle* found = s->fleet->WithGpu(i, [&](sim::SimulatedGpu& g) {
      const sim::DeviceHandle* h = nullptr;
      if (g.uuid() == want) h = &s->gpus[static_cast<size_t>(i)];
      const int first = s->first_mig[static_cast<size_t>(i)];
      for (int k = 0; h == nullptr && first >= 0 && k < g.profile().mig_instances; ++k) {
        if (g.mig_uuid(k) == want) h = &s->migs[static_cast<size_t>(first + k)];
      }
      return h;
    });
    if (found != nullptr) {
      // As by index, a lost GPU's handle is still handed out.
      *device = sim::ToDevice(found);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

}  // extern "C"

// Every entry point of the X-macro is declared (fake_nvml_state.h) with its
// exact type, and the definitions in fake_nvml*.cc must match those
// declarations; tests/sim/fake_nvml_test.cc checks that each is defined.
// The macro's arguments are a function name and a parameter list spliced into
// a function pointer type, which parentheses would break.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define GPUMON_FAKE_NVML_CHECK(name, ret, params) \
  static_assert(std::is_same_v<decltype(&name), ret(*) params>, #name);
GPUMON_NVML_FUNCTIONS(GPUMON_FAKE_NVML_CHECK)
#undef GPUMON_FAKE_NVML_CHECK
// NOLINTEND(bugprone-macro-parentheses)
