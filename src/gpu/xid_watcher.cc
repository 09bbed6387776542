#include "gpu/xid_watcher.h"

#include <chrono>

namespace gpumon::gpu {

XidWatcher::~XidWatcher() { Stop(); }

int XidWatcher::Start(const std::vector<GpuCollector*>& collectors) {
  if (!nvml_.nvmlEventSetCreate || !nvml_.nvmlDeviceRegisterEvents || !nvml_.nvmlEventSetWait_v2 ||
      !nvml_.nvmlEventSetFree) {
    return 0;
  }
  if (nvml_.nvmlEventSetCreate(&set_) != NVML_SUCCESS) return 0;
  collectors_ = collectors;
  int registered = 0;
  for (GpuCollector* c : collectors_) {
    if (!c->options().enabled[static_cast<int>(Group::kXid)]) continue;
    for (const auto& d : c->devices()) {
      if (d.handle == nullptr || d.lost) continue;
      unsigned long long supported = 0;
      if (nvml_.nvmlDeviceGetSupportedEventTypes &&
          (nvml_.nvmlDeviceGetSupportedEventTypes(d.handle, &supported) != NVML_SUCCESS ||
           !(supported & nvmlEventTypeXidCriticalError))) {
        continue;
      }
      if (nvml_.nvmlDeviceRegisterEvents(d.handle, nvmlEventTypeXidCriticalError, set_) ==
          NVML_SUCCESS) {
        ++registered;
      }
    }
  }
  if (registered == 0) {
    nvml_.nvmlEventSetFree(set_);
    set_ = nullptr;
    return 0;
  }
  thread_ = std::thread([this] { Loop(); });
  return registered;
}

void XidWatcher::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (set_ != nullptr) {
    nvml_.nvmlEventSetFree(set_);
    set_ = nullptr;
  }
}

void XidWatcher::Loop() {
  while (!stop_) {
    nvmlEventData_t data{};
    // A short timeout keeps Stop() responsive.
    nvmlReturn_t rc = nvml_.nvmlEventSetWait_v2(set_, &data, 200);
    if (rc == NVML_ERROR_TIMEOUT) continue;
    if (rc != NVML_SUCCESS) {
      // Not a timeout: back off instead of spinning on a persistent error.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (!(data.eventType & nvmlEventTypeXidCriticalError)) continue;
    for (GpuCollector* c : collectors_)
      c->RecordXid(data.device, static_cast<unsigned>(data.eventData));
  }
}

}  // namespace gpumon::gpu
