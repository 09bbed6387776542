// The processes that have a context on a GPU, from NVML's compute and
// graphics process lists.
//
// Contract:
// - Each list is read through the newest entry point the library has:
//   nvmlDevice{Compute,Graphics}RunningProcesses_v3, else _v2, else the
//   unversioned v1 call, each resolved on its own (nvml_library.h). The
//   entries are decoded with the layout of the version called (nvml_api.h),
//   including the longer _v3 layout of drivers 525..530
//   (NvmlLibrary::process_info_v3_size()).
// - NVML_ERROR_INSUFFICIENT_SIZE (processes started between two calls) grows
//   the buffer to the count NVML asks for plus headroom and asks again, a
//   bounded number of times; the buffer is always large enough for the
//   longest layout, so a driver that writes more than it was asked for
//   cannot overrun it.
// - A kind (compute or graphics) whose entry points are all missing, or that
//   answers NOT_SUPPORTED, contributes no processes; any other NVML error
//   fails the call with its return code.
// - ListProcesses(lib, device) merges both kinds by pid: a process with a
//   compute and a graphics context appears once with both flags set, its
//   memory the larger of the two figures. The result is sorted by pid.
// - Works on a physical GPU handle or a MIG device handle alike (in MIG mode
//   a parent handle lists every instance's processes, where the caller has
//   the privileges; a MIG handle lists that instance's).
// - Stateless and thread-safe as far as NVML is.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "gpu/nvml_api.h"
#include "gpu/nvml_library.h"

namespace gpumon::gpu {

enum class ProcessKind { kCompute, kGraphics };

struct GpuProcess {
  unsigned int pid = 0;
  // Bytes of GPU memory the process uses; absent when NVML reports
  // NVML_VALUE_NOT_AVAILABLE.
  std::optional<uint64_t> used_bytes;
  // MIG placement; absent outside MIG mode and from the v1 entry point.
  std::optional<unsigned int> gpu_instance_id;
  std::optional<unsigned int> compute_instance_id;
  bool compute = false;
  bool graphics = false;
  bool operator==(const GpuProcess&) const = default;
};

// One kind. Appends to *out and returns NVML_SUCCESS, or returns the NVML
// error (NVML_ERROR_FUNCTION_NOT_FOUND when the library has no entry point
// for the kind) and leaves *out as it was.
nvmlReturn_t ListProcesses(NvmlLibrary& lib, nvmlDevice_t device, ProcessKind kind,
                           std::vector<GpuProcess>* out);

// Both kinds, merged by pid (see above). The error names the list and the
// return code (ReturnCodeName). Fails when the library has none of the six
// entry points.
Result<std::vector<GpuProcess>> ListProcesses(NvmlLibrary& lib, nvmlDevice_t device);

}  // namespace gpumon::gpu
