// Run-time binding to NVML.
//
// Contract: Open() dlopens the given library (default "libnvidia-ml.so.1")
// and resolves every entry point of GPUMON_NVML_FUNCTIONS independently. A
// symbol the library lacks stays nullptr and is listed in missing(); callers
// check the pointer before calling and treat a missing function exactly like
// NVML_ERROR_FUNCTION_NOT_FOUND (the metric is absent). Open() fails only
// when the library cannot be loaded or lacks nvmlInit_v2/nvmlShutdown.
// The object owns the dlopen handle; it does not call nvmlInit/Shutdown.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/nvml_api.h"

namespace gpumon::gpu {

inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";

class NvmlLibrary {
 public:
  static Result<std::unique_ptr<NvmlLibrary>> Open(const std::string& path);
  // A library with no entry points, for tests that install their own.
  static std::unique_ptr<NvmlLibrary> CreateEmptyForTesting();
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

// NOLINTNEXTLINE(bugprone-macro-parentheses): expands to a declarator
#define GPUMON_NVML_POINTER(name, ret, args) ret(*name) args = nullptr;
  GPUMON_NVML_FUNCTIONS(GPUMON_NVML_POINTER)
#undef GPUMON_NVML_POINTER

  const std::string& path() const { return path_; }
  const std::vector<std::string>& missing() const { return missing_; }
  // True for the simulator's fake NVML (it exports the simulation marker).
  bool simulated() const { return simulated_; }
  // The size of one entry the nvmlDevice{Compute,Graphics}RunningProcesses_v3
  // calls write: sizeof(nvmlProcessInfoCc_t) for drivers 525..530, which
  // export nvmlDeviceGetConfComputeMemSizeInfo but not yet
  // nvmlDeviceGetRunningProcessDetailList, else sizeof(nvmlProcessInfo_t)
  // (see nvml_api.h). Probed by Open() from the symbols alone.
  size_t process_info_v3_size() const { return process_info_v3_size_; }
  void set_process_info_v3_size_for_testing(size_t size) { process_info_v3_size_ = size; }

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  std::vector<std::string> missing_;
  bool simulated_ = false;
  size_t process_info_v3_size_ = sizeof(nvmlProcessInfo_t);
};

// "NOT_SUPPORTED" for NVML_ERROR_NOT_SUPPORTED, "SUCCESS", ...; stable names
// used as the return_code label of gpumon_nvml_errors_total.
const char* ReturnCodeName(nvmlReturn_t code);

}  // namespace gpumon::gpu
