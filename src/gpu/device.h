// What the agent knows about one GPU: identity (read once at discovery), the
// capabilities discovery found, and the little state that outlives a
// collection (lost flag, XID counts).
#pragma once

#include <bitset>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/catalog.h"
#include "gpu/nvml_api.h"

namespace gpumon::gpu {

struct MigInstance {
  nvmlDevice_t handle = nullptr;
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  std::string uuid;
  std::string profile;  // e.g. "3g.71gb", from the MIG device name
};

struct GpuDevice {
  unsigned index = 0;  // index label: position within this agent's GPUs
  nvmlDevice_t handle = nullptr;
  std::string uuid;
  std::string model;
  std::string pci_bus_id;
  std::string vbios;

  // Metrics whose NVML source reported NOT_SUPPORTED (or is missing,
  // or needs a permission we lack) during discovery; never collected.
  std::bitset<kMetricCount> unsupported;
  bool legacy_temperature = false;  // nvmlDeviceGetTemperatureV unusable
  bool legacy_memory_info = false;  // nvmlDeviceGetMemoryInfo_v2 unusable
  // Bit per kTemperatureLimits entry (temperature_limits.h) whose absolute
  // threshold is unusable, so the limit is derived from its T.Limit field.
  uint8_t tlimit_limits = 0;
  unsigned long long supported_event_reasons = 0;
  uint32_t clock_event_fields = 0;  // bit per kClockEventCounterFields entry
  unsigned fan_count = 0;
  std::vector<unsigned> nvlinks;  // links that answer nvmlDeviceGetNvLinkState
  bool mig_enabled = false;
  std::vector<MigInstance> mig;

  bool lost = false;
  std::map<unsigned, uint64_t> xid_counts;
  std::optional<unsigned> last_xid;
};

struct SystemVersions {
  std::string driver;
  std::string nvml;
  std::string cuda;  // "12.4" form
};

}  // namespace gpumon::gpu
