// The fake NVML's process lists: nvmlDevice{Compute,Graphics}RunningProcesses
// in all three versions, answered from the GPUMON_SIM_PROCESSES file
// (sim/process_file.h), which is re-read whenever it changes. A GPU handle
// lists the processes on that GPU; with MIG enabled they are placed on the
// first GPU instance (gpuInstanceId 1, computeInstanceId 0), which that MIG
// device's handle also lists, and the other instances list none. Outside MIG
// both ids are 0xFFFFFFFF, as NVML reports them.
//
// NVML's protocol: *infoCount is the capacity of `infos` on the way in and
// the number of entries on the way out; when the capacity is too small the
// call returns INSUFFICIENT_SIZE with the count needed, writing nothing
// (infos may then be null). A file that fails to parse makes the calls
// return NVML_ERROR_UNKNOWN, with the reason printed to stderr once per
// version of the file.
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "sim/fake_nvml_state.h"

namespace gpumon::sim {
namespace {

constexpr unsigned int kNoInstance = 0xFFFFFFFF;

void ReportOnce(const std::string& error) {
  static std::mutex mu;
  static std::string last;
  std::lock_guard<std::mutex> lock(mu);
  if (error == last) return;
  last = error;
  std::fprintf(stderr, "gpumon-fake-nvml: GPUMON_SIM_PROCESSES: %s\n", error.c_str());
}

void Fill(nvmlProcessInfo_v1_t* e, const SimProcess& p, unsigned int, unsigned int) {
  e->pid = p.pid;
  e->usedGpuMemory = p.used_bytes;
}

void Fill(nvmlProcessInfo_v2_t* e, const SimProcess& p, unsigned int gi, unsigned int ci) {
  e->pid = p.pid;
  e->usedGpuMemory = p.used_bytes;
  e->gpuInstanceId = gi;
  e->computeInstanceId = ci;
}

template <typename Info>
nvmlReturn_t Serve(nvmlDevice_t device, unsigned int* infoCount, Info* infos, bool graphics) {
  State* s = Current();
  const nvmlReturn_t args = Check(infoCount != nullptr && (infos != nullptr || *infoCount == 0));
  return OnDevice(device, args, [&](SimulatedGpu& g, const DeviceHandle& h) -> nvmlReturn_t {
    Result<std::vector<SimProcess>> all = s->processes->Current();
    if (!all.ok()) {
      ReportOnce(all.status().message());
      return NVML_ERROR_UNKNOWN;
    }
    const bool mig = MigEnabled(g.profile());
    // A MIG device other than the first instance runs nothing.
    const bool listed = h.mig <= 0;
    const unsigned int gi = mig ? 1 : kNoInstance;
    const unsigned int ci = mig ? 0 : kNoInstance;
    std::vector<const SimProcess*> mine;
    for (const SimProcess& p : all.value()) {
      if (listed && p.gpu == g.index() && (graphics ? p.graphics : p.compute)) mine.push_back(&p);
    }
    const unsigned int capacity = *infoCount;
    *infoCount = static_cast<unsigned int>(mine.size());
    if (mine.size() > capacity) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (size_t i = 0; i < mine.size(); ++i) Fill(&infos[i], *mine[i], gi, ci);
    return NVML_SUCCESS;
  });
}

}  // namespace
}  // namespace gpumon::sim

namespace sim = gpumon::sim;

extern "C" {

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos) {
  return sim::Serve(device, infoCount, infos, false);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_v2_t* infos) {
  return sim::Serve(device, infoCount, infos, false);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* infoCount,
                                                  nvmlProcessInfo_v1_t* infos) {
  return sim::Serve(device, infoCount, infos, false);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                      nvmlProcessInfo_t* infos) {
  return sim::Serve(device, infoCount, infos, true);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int* infoCount,
                                                      nvmlProcessInfo_v2_t* infos) {
  return sim::Serve(device, infoCount, infos, true);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int* infoCount,
                                                   nvmlProcessInfo_v1_t* infos) {
  return sim::Serve(device, infoCount, infos, true);
}

}  // extern "C"
