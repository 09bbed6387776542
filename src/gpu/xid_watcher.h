// XidWatcher: waits for XID critical-error events from NVML on a background
// thread and records them in the collectors owning the GPUs.
//
// Contract: registers every device (of every collector given) that supports
// nvmlEventTypeXidCriticalError in one event set; a device that does not is
// skipped. Events are counted per (GPU, XID) for gpu_xid_errors_total, so an
// XID is never lost between scrapes and counts never reset while running.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include "gpu/collector.h"
#include "gpu/nvml_library.h"

namespace gpumon::gpu {

class XidWatcher {
 public:
  explicit XidWatcher(NvmlLibrary& nvml) : nvml_(nvml) {}
  ~XidWatcher();

  // Returns the number of devices registered; 0 means nothing to watch and
  // no thread is started.
  int Start(const std::vector<GpuCollector*>& collectors);
  void Stop();

 private:
  void Loop();

  NvmlLibrary& nvml_;
  std::vector<GpuCollector*> collectors_;
  nvmlEventSet_t set_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace gpumon::gpu
