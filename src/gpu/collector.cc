#include "gpu/collector.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/process_stats.h"
#include "gpu/collector_round.h"

namespace gpumon::gpu {
namespace {

// Metrics read by the same NVML call as a primary metric: when discovery
// switches the primary off, these go with it.
constexpr std::pair<Metric, Metric> kSameCall[] = {
    {Metric::kUtilization, Metric::kMemoryUtilization},
    {Metric::kMemoryUsed, Metric::kMemoryTotal},
    {Metric::kMemoryUsed, Metric::kMemoryFree},
    {Metric::kMemoryUsed, Metric::kMemoryReserved},
    {Metric::kRemappedRows, Metric::kRemappedRowsPending},
    {Metric::kRemappedRows, Metric::kRemappedRowsFailure},
    {Metric::kClockEventActive, Metric::kClockEventReasonsMask},
    {Metric::kXidErrors, Metric::kXidLast},
    {Metric::kMigModeEnabled, Metric::kMigMemoryTotal},
    {Metric::kMigModeEnabled, Metric::kMigMemoryUsed},
    {Metric::kMigMemoryUsed, Metric::kMigMemoryTotal},
};

}  // namespace

GpuCollector::GpuCollector(NvmlLibrary* nvml, CollectorOptions options, SystemVersions versions,
                           unsigned first_index, int count)
    : nvml_(nvml),
      options_(std::move(options)),
      versions_(std::move(versions)),
      first_index_(first_index),
      count_(count) {}

void GpuCollector::Discover() {
  devices_.clear();
  if (nvml_ != nullptr) {
    unsigned total = 0;
    nvmlReturn_t rc = nvml_->nvmlDeviceGetCount_v2 ? nvml_->nvmlDeviceGetCount_v2(&total)
                                                   : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (rc != NVML_SUCCESS) CountError("nvmlDeviceGetCount_v2", rc);
    unsigned end = count_ < 0 ? total : std::min(total, first_index_ + count_);
    for (unsigned i = first_index_; i < end; ++i) {
      GpuDevice d;
      d.index = i - first_index_;
      rc = nvml_->nvmlDeviceGetHandleByIndex_v2 ? nvml_->nvmlDeviceGetHandleByIndex_v2(i, &d.handle)
                                                : NVML_ERROR_FUNCTION_NOT_FOUND;
      if (rc != NVML_SUCCESS) {
        // A GPU NVML cannot open (e.g. lost at boot) is still listed, as lost.
        CountError("nvmlDeviceGetHandleByIndex_v2", rc);
        d.lost = true;
        devices_.push_back(std::move(d));
        continue;
      }
      char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
      if (nvml_->nvmlDeviceGetUUID &&
          nvml_->nvmlDeviceGetUUID(d.handle, buf, sizeof buf) == NVML_SUCCESS) {
        d.uuid = buf;
      }
      std::memset(buf, 0, sizeof buf);
      if (nvml_->nvmlDeviceGetName &&
          nvml_->nvmlDeviceGetName(d.handle, buf, sizeof buf) == NVML_SUCCESS) {
        d.model = buf;
      }
      nvmlPciInfo_t pci{};
      if (nvml_->nvmlDeviceGetPciInfo_v3 &&
          nvml_->nvmlDeviceGetPciInfo_v3(d.handle, &pci) == NVML_SUCCESS) {
        d.pci_bus_id = pci.busId;
      }
      std::memset(buf, 0, sizeof buf);
      if (nvml_->nvmlDeviceGetVbiosVersion &&
          nvml_->nvmlDeviceGetVbiosVersion(d.handle, buf, NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE) ==
              NVML_SUCCESS) {
        d.vbios = buf;
      }
      devices_.push_back(std::move(d));
    }
  }
  discovering_ = true;
  for (int g = 0; g < kGroupCount; ++g) {
    if (options_.enabled[g]) Collect(static_cast<Group>(g));
  }
  discovering_ = false;
  for (auto& d : devices_) {
    for (auto [primary, dependent] : kSameCall) {
      if (d.unsupported.test(static_cast<size_t>(primary))) {
        d.unsupported.set(static_cast<size_t>(dependent));
      }
    }
  }
}

void GpuCollector::Collect(Group group) {
  auto start = std::chrono::steady_clock::now();
  GroupResult result;
  if (group == Group::kAgent) {
    CollectAgent(&result);
  } else if (group == Group::kHealth) {
    if (nvml_ != nullptr) Round(*this, &result).Run(group);
    std::lock_guard<std::mutex> lock(state_mutex_);
    for (size_t i = 0; i < devices_.size(); ++i) {
      result.values.push_back(SeriesValue{
          Metric::kLost, static_cast<uint16_t>(i), -1, {}, devices_[i].lost ? 1.0 : 0.0});
    }
  } else if (group == Group::kXid) {
    std::lock_guard<std::mutex> lock(state_mutex_);
    for (size_t i = 0; i < devices_.size(); ++i) {
      const auto slot = static_cast<uint16_t>(i);
      for (const auto& [xid, n] : devices_[i].xid_counts) {
        result.values.push_back(SeriesValue{
            Metric::kXidErrors, slot, -1, {std::to_string(xid)}, static_cast<double>(n)});
      }
      if (devices_[i].last_xid) {
        result.values.push_back(SeriesValue{
            Metric::kXidLast, slot, -1, {}, static_cast<double>(*devices_[i].last_xid)});
      }
    }
  } else if (nvml_ != nullptr) {
    Round(*this, &result).Run(group);
  }
  result.duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Publish(group, std::move(result));
}

void GpuCollector::CollectAgent(GroupResult* out) {
  auto add = [&](Metric m, double v, std::array<std::string, 4> labels = {}) {
    out->values.push_back(SeriesValue{m, 0, -1, std::move(labels), v});
  };
  add(Metric::kAgentNvmlUp, nvml_ != nullptr ? 1 : 0);
  add(Metric::kAgentGpus, static_cast<double>(devices_.size()));
  add(Metric::kAgentBuildInfo, 1, {GPUMON_VERSION});
  std::lock_guard<std::mutex> lock(state_mutex_);
  for (int g = 0; g < kGroupCount; ++g) {
    const auto& r = snapshot_.groups[g];
    if (!r || static_cast<Group>(g) == Group::kAgent) continue;
    std::string name(GroupName(static_cast<Group>(g)));
    add(Metric::kAgentCollectionDuration, r->duration_seconds, {name});
    add(Metric::kAgentCollections, static_cast<double>(collections_[g]), {name});
  }
  for (const auto& [key, n] : errors_) {
    add(Metric::kAgentNvmlErrors, static_cast<double>(n), {key.first, key.second});
  }
  if (auto ps = ReadProcessStats()) {
    add(Metric::kProcessCpu, ps->cpu_seconds);
    add(Metric::kProcessResident, static_cast<double>(ps->resident_bytes));
    add(Metric::kProcessStartTime, ps->start_time_seconds);
    add(Metric::kProcessOpenFds, static_cast<double>(ps->open_fds));
  }
}

void GpuCollector::Publish(Group group, GroupResult result) {
  auto shared = std::make_shared<const GroupResult>(std::move(result));
  std::lock_guard<std::mutex> lock(state_mutex_);
  snapshot_.groups[static_cast<int>(group)] = std::move(shared);
  ++collections_[static_cast<int>(group)];
  ++snapshot_.generation;
}

Snapshot GpuCollector::snapshot() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return snapshot_;
}

void GpuCollector::RecordXid(nvmlDevice_t handle, unsigned xid) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  for (auto& d : devices_) {
    if (d.handle == handle) {
      ++d.xid_counts[xid];
      d.last_xid = xid;
      return;
    }
  }
}

void GpuCollector::CountError(const char* function, nvmlReturn_t code) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  ++errors_[{function, ReturnCodeName(code)}];
}

std::map<std::pair<std::string, std::string>, uint64_t> GpuCollector::nvml_errors() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return errors_;
}

}  // namespace gpumon::gpu
