#include "gpu/nvml_library.h"

#include <dlfcn.h>

namespace gpumon::gpu {

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Status::Error("cannot load NVML library " + path + ": " + (why ? why : "unknown"));
  }
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->handle_ = handle;
  lib->path_ = path;
// The macro argument is a parameter list spliced into a cast type.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define GPUMON_NVML_RESOLVE(name, ret, args)                       \
  lib->name = reinterpret_cast<ret(*) args>(dlsym(handle, #name)); \
  if (lib->name == nullptr) lib->missing_.push_back(#name);
  GPUMON_NVML_FUNCTIONS(GPUMON_NVML_RESOLVE)
#undef GPUMON_NVML_RESOLVE
  // NOLINTEND(bugprone-macro-parentheses)
  lib->simulated_ = dlsym(handle, GPUMON_SIMULATED_NVML_MARKER) != nullptr;
  // Drivers 525..530 wrote nvmlProcessInfoCc_t from the _v3 process lists:
  // they already have confidential computing and not yet the detail list
  // that took the protected-memory figure over.
  if (dlsym(handle, "nvmlDeviceGetConfComputeMemSizeInfo") != nullptr &&
      dlsym(handle, "nvmlDeviceGetRunningProcessDetailList") == nullptr) {
    lib->process_info_v3_size_ = sizeof(nvmlProcessInfoCc_t);
  }
  if (lib->nvmlInit_v2 == nullptr || lib->nvmlShutdown == nullptr) {
    return Status::Error(path +
                         " is not a usable NVML library: nvmlInit_v2 or nvmlShutdown missing");
  }
  return lib;
}

std::unique_ptr<NvmlLibrary> NvmlLibrary::CreateEmptyForTesting() {
  return std::unique_ptr<NvmlLibrary>(new NvmlLibrary());
}

NvmlLibrary::~NvmlLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

const char* ReturnCodeName(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS:
      return "SUCCESS";
    case NVML_ERROR_UNINITIALIZED:
      return "UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED:
      return "NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION:
      return "NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND:
      return "NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT:
      return "TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE:
      return "IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED:
      return "RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE:
      return "IN_USE";
    case NVML_ERROR_MEMORY:
      return "MEMORY";
    case NVML_ERROR_NO_DATA:
      return "NO_DATA";
    case NVML_ERROR_VGPU_ECC_NOT_ENABLED:
      return "VGPU_ECC_NOT_ENABLED";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "INSUFFICIENT_RESOURCES";
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
      return "FREQ_NOT_SUPPORTED";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "ARGUMENT_VERSION_MISMATCH";
    case NVML_ERROR_DEPRECATED:
      return "DEPRECATED";
    case NVML_ERROR_NOT_READY:
      return "NOT_READY";
    case NVML_ERROR_GPU_NOT_FOUND:
      return "GPU_NOT_FOUND";
    case NVML_ERROR_INVALID_STATE:
      return "INVALID_STATE";
    case NVML_ERROR_UNKNOWN:
      return "UNKNOWN";
  }
  return "UNKNOWN";
}

}  // namespace gpumon::gpu
