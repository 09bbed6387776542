#include "gpu/process_list.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace gpumon::gpu {
namespace {

// The layouts of nvml.h on LP64 (the padding after pid included).
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(sizeof(nvmlProcessInfoCc_t) == 32);

constexpr unsigned int kNoInstance = 0xFFFFFFFFu;
constexpr unsigned int kInitialCapacity = 16;
constexpr unsigned int kHeadroom = 16;  // for processes starting between calls
constexpr int kMaxAttempts = 4;

// The entry point to call for a kind, newest first, with the size of the
// entries it writes (0 = none).
struct Call {
  int version = 0;  // 3, 2, 1; 0 when the library has none
  size_t entry_size = 0;
};

Call Pick(const NvmlLibrary& lib, ProcessKind kind) {
  const bool compute = kind == ProcessKind::kCompute;
  if (compute ? lib.nvmlDeviceGetComputeRunningProcesses_v3 != nullptr
              : lib.nvmlDeviceGetGraphicsRunningProcesses_v3 != nullptr) {
    return {3, lib.process_info_v3_size()};
  }
  if (compute ? lib.nvmlDeviceGetComputeRunningProcesses_v2 != nullptr
              : lib.nvmlDeviceGetGraphicsRunningProcesses_v2 != nullptr) {
    return {2, sizeof(nvmlProcessInfo_v2_t)};
  }
  if (compute ? lib.nvmlDeviceGetComputeRunningProcesses != nullptr
              : lib.nvmlDeviceGetGraphicsRunningProcesses != nullptr) {
    return {1, sizeof(nvmlProcessInfo_v1_t)};
  }
  return {};
}

nvmlReturn_t Invoke(const NvmlLibrary& lib, ProcessKind kind, int version, nvmlDevice_t device,
                    unsigned int* count, void* buffer) {
  const bool compute = kind == ProcessKind::kCompute;
  switch (version) {
    case 3:
      return compute ? lib.nvmlDeviceGetComputeRunningProcesses_v3(
                           device, count, static_cast<nvmlProcessInfo_t*>(buffer))
                     : lib.nvmlDeviceGetGraphicsRunningProcesses_v3(
                           device, count, static_cast<nvmlProcessInfo_t*>(buffer));
    case 2:
      return compute ? lib.nvmlDeviceGetComputeRunningProcesses_v2(
                           device, count, static_cast<nvmlProcessInfo_v2_t*>(buffer))
                     : lib.nvmlDeviceGetGraphicsRunningProcesses_v2(
                           device, count, static_cast<nvmlProcessInfo_v2_t*>(buffer));
    default:
      return compute ? lib.nvmlDeviceGetComputeRunningProcesses(
                           device, count, static_cast<nvmlProcessInfo_v1_t*>(buffer))
                     : lib.nvmlDeviceGetGraphicsRunningProcesses(
                           device, count, static_cast<nvmlProcessInfo_v1_t*>(buffer));
  }
}

GpuProcess Decode(const unsigned char* entry, int version, ProcessKind kind) {
  GpuProcess p;
  unsigned long long used = 0;
  unsigned int gi = kNoInstance;
  unsigned int ci = kNoInstance;
  if (version == 1) {
    nvmlProcessInfo_v1_t e;
    std::memcpy(&e, entry, sizeof(e));
    p.pid = e.pid;
    used = e.usedGpuMemory;
  } else {
    // The v2 layout is a prefix of the longer v3 one.
    nvmlProcessInfo_v2_t e;
    std::memcpy(&e, entry, sizeof(e));
    p.pid = e.pid;
    used = e.usedGpuMemory;
    gi = e.gpuInstanceId;
    ci = e.computeInstanceId;
  }
  if (used != NVML_VALUE_NOT_AVAILABLE_ULL) p.used_bytes = used;
  if (gi != kNoInstance) p.gpu_instance_id = gi;
  if (ci != kNoInstance) p.compute_instance_id = ci;
  (kind == ProcessKind::kCompute ? p.compute : p.graphics) = true;
  return p;
}

}  // namespace

nvmlReturn_t ListProcesses(NvmlLibrary& lib, nvmlDevice_t device, ProcessKind kind,
                           std::vector<GpuProcess>* out) {
  const Call call = Pick(lib, kind);
  if (call.version == 0) return NVML_ERROR_FUNCTION_NOT_FOUND;
  static_assert(sizeof(nvmlProcessInfoCc_t) >= sizeof(nvmlProcessInfo_v2_t));
  static_assert(sizeof(nvmlProcessInfoCc_t) >= sizeof(nvmlProcessInfo_v1_t));
  const size_t stride = std::min(call.entry_size, sizeof(nvmlProcessInfoCc_t));
  unsigned int capacity = kInitialCapacity;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    // Room for `capacity` entries of the longest layout, whatever is called.
    std::vector<nvmlProcessInfoCc_t> buffer(capacity);
    unsigned int count = capacity;
    const nvmlReturn_t r = Invoke(lib, kind, call.version, device, &count, buffer.data());
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
      capacity = std::max(count, capacity) + kHeadroom;
      continue;
    }
    if (r != NVML_SUCCESS) return r;
    count = std::min(count, capacity);
    const auto* bytes = reinterpret_cast<const unsigned char*>(buffer.data());
    for (unsigned int i = 0; i < count; ++i) {
      out->push_back(Decode(bytes + static_cast<size_t>(i) * stride, call.version, kind));
    }
    return NVML_SUCCESS;
  }
  return NVML_ERROR_INSUFFICIENT_SIZE;
}

Result<std::vector<GpuProcess>> ListProcesses(NvmlLibrary& lib, nvmlDevice_t device) {
  std::vector<GpuProcess> all;
  int missing = 0;
  for (ProcessKind kind : {ProcessKind::kCompute, ProcessKind::kGraphics}) {
    const nvmlReturn_t r = ListProcesses(lib, device, kind, &all);
    if (r == NVML_ERROR_FUNCTION_NOT_FOUND) ++missing;
    if (r == NVML_SUCCESS || r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND) {
      continue;
    }
    return Status::Error(std::string("NVML ") +
                         (kind == ProcessKind::kCompute ? "compute" : "graphics") +
                         " process list: " + ReturnCodeName(r));
  }
  if (missing == 2) {
    return Status::Error(
        "NVML library has no nvmlDevice{Compute,Graphics}RunningProcesses entry point");
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const GpuProcess& a, const GpuProcess& b) { return a.pid < b.pid; });
  std::vector<GpuProcess> merged;
  for (GpuProcess& p : all) {
    if (!merged.empty() && merged.back().pid == p.pid) {
      GpuProcess& m = merged.back();
      m.compute = m.compute || p.compute;
      m.graphics = m.graphics || p.graphics;
      if (p.used_bytes && (!m.used_bytes || *p.used_bytes > *m.used_bytes)) {
        m.used_bytes = p.used_bytes;
      }
      if (!m.gpu_instance_id) m.gpu_instance_id = p.gpu_instance_id;
      if (!m.compute_instance_id) m.compute_instance_id = p.compute_instance_id;
      continue;
    }
    merged.push_back(std::move(p));
  }
  return merged;
}

}  // namespace gpumon::gpu
