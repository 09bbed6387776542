// An initialized NVML: the library, nvmlInit_v2 done, system versions read.
// nvmlShutdown is called when the session is destroyed.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "gpu/device.h"
#include "gpu/nvml_library.h"

namespace gpumon::gpu {

class NvmlSession {
 public:
  // Loads `library_path` and initializes NVML. The error says why not (no
  // driver, library missing, init failed with which return code).
  static Result<std::unique_ptr<NvmlSession>> Start(const std::string& library_path);
  ~NvmlSession();

  NvmlLibrary& library() { return *lib_; }
  const SystemVersions& versions() const { return versions_; }

 private:
  NvmlSession() = default;
  std::unique_ptr<NvmlLibrary> lib_;
  SystemVersions versions_;
};

}  // namespace gpumon::gpu
