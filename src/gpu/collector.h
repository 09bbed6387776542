// GpuCollector: reads a set of GPUs through NVML, one metric group at a time,
// and keeps the latest result of every group (the snapshot).
//
// Contract:
// - Discover() reads identity and runs every enabled group once; any NVML
//   source answering NOT_SUPPORTED, FUNCTION_NOT_FOUND, NO_PERMISSION,
//   INVALID_ARGUMENT or NOT_FOUND then is switched off for that GPU and never
//   called again, so unsupported metrics are absent rather than faked. Where
//   NVML has an older or newer equivalent (nvmlDeviceGetTemperature; the
//   T.Limit fields for the die's limits, temperature_limits.h) the collector
//   switches to it instead.
// - Collect(group) calls NVML and publishes the group's values atomically; a
//   failing call after discovery is counted in gpumon_nvml_errors_total and
//   its metric is absent from that round. NVML_ERROR_GPU_IS_LOST marks the
//   GPU lost: from then on only gpu_lost is reported for it.
// - Snapshot() never calls NVML; it returns the latest results, so scrapes
//   never wait for the hardware. Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpu/catalog.h"
#include "gpu/device.h"
#include "gpu/nvml_library.h"

namespace gpumon::gpu {

// One exported value. `device` indexes GpuCollector's devices, `mig` the
// device's MIG instances (-1: the whole GPU; scope kAgent ignores both).
struct SeriesValue {
  Metric metric;
  uint16_t device = 0;
  int16_t mig = -1;
  std::array<std::string, 4> labels;  // values of the metric's extra labels
  double value = 0;
};

struct GroupResult {
  std::vector<SeriesValue> values;
  double duration_seconds = 0;
};

struct Snapshot {
  uint64_t generation = 0;
  std::array<std::shared_ptr<const GroupResult>, kGroupCount> groups;
};

struct CollectorOptions {
  std::string hostname;
  bool simulated = false;
  std::array<bool, kGroupCount> enabled;  // by Group
  CollectorOptions() { enabled.fill(true); }
};

class GpuCollector {
 public:
  // `nvml` may be null (no driver): the collector then reports only its own
  // metrics with gpumon_nvml_up 0. `first_index`/`count` select a slice of
  // NVML's devices (the simulator serves many nodes from one library);
  // count < 0 means all from first_index on.
  GpuCollector(NvmlLibrary* nvml, CollectorOptions options, SystemVersions versions,
               unsigned first_index = 0, int count = -1);

  // Reads identity and capabilities; runs every enabled group once.
  void Discover();

  void Collect(Group group);
  Snapshot snapshot() const;

  // Called by the XID watcher.
  void RecordXid(nvmlDevice_t handle, unsigned xid);

  const std::vector<GpuDevice>& devices() const { return devices_; }
  const CollectorOptions& options() const { return options_; }
  const SystemVersions& versions() const { return versions_; }
  bool nvml_up() const { return nvml_ != nullptr; }
  // Per (function, return code) error counts since start.
  std::map<std::pair<std::string, std::string>, uint64_t> nvml_errors() const;

 private:
  class Round;  // one group's collection over all devices
  friend class Round;

  void Publish(Group group, GroupResult result);
  void CountError(const char* function, nvmlReturn_t code);
  void CollectAgent(GroupResult* out);

  NvmlLibrary* nvml_;
  CollectorOptions options_;
  SystemVersions versions_;
  unsigned first_index_;
  int count_;
  bool discovering_ = false;

  // devices_ is written by the collecting thread only (lost flags, XIDs
  // under state_mutex_).
  std::vector<GpuDevice> devices_;
  mutable std::mutex state_mutex_;
  Snapshot snapshot_;
  std::map<std::pair<std::string, std::string>, uint64_t> errors_;
  std::array<uint64_t, kGroupCount> collections_{};
};

}  // namespace gpumon::gpu
