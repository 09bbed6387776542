// The fake NVML's device queries (fake_nvml.cc describes the library): identity
// (name, UUID, PCI, VBIOS), temperatures and the GPU's limits, power and
// energy, utilization, clocks and clock event reasons, memory, ECC, page
// retirement and row remapping, PCIe, NVLink, fans, the performance state and
// MIG partitioning. Each answers through OnDevice or OnGpu
// (fake_nvml_state.h), so NVML's order of return codes holds throughout.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/fake_nvml_state.h"

namespace gpumon::sim {
namespace {

constexpr unsigned int kSamplingPeriodUs = 167000;

// Frame buffer numbers of a physical GPU or a MIG instance, NVML v2 style.
void MemoryOf(const SimulatedGpu& g, const DeviceHandle& h, nvmlMemory_v2_t* m) {
  const GpuProfile& p = g.profile();
  if (h.mig < 0) {
    m->total = p.memory_total_bytes;
    m->reserved = p.memory_reserved_bytes;
    m->used = g.memory_used_bytes();
  } else {
    // Instances share the parent's allocations evenly.
    m->total = p.mig_instance_memory_bytes;
    m->reserved = 0;
    m->used = std::min<unsigned long long>(g.memory_used_bytes() / p.mig_instances, m->total);
  }
  m->free = m->total - m->reserved - m->used;
}

}  // namespace
}  // namespace gpumon::sim

using gpumon::sim::ClockDomain;
using gpumon::sim::DeviceHandle;
using gpumon::sim::GpuProfile;
using gpumon::sim::SimulatedGpu;
namespace sim = gpumon::sim;

extern "C" {

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return sim::OnDevice(
      device, sim::Check(name != nullptr), [&](SimulatedGpu& g, const DeviceHandle& h) {
        const GpuProfile& p = g.profile();
        if (h.mig < 0) return sim::CopyString(p.name, name, length);
        std::string mig_name = std::string(p.name) + " MIG " + std::string(p.mig_profile_name);
        return sim::CopyString(mig_name, name, length);
      });
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return sim::OnDevice(device, sim::Check(uuid != nullptr),
                       [&](SimulatedGpu& g, const DeviceHandle& h) {
                         if (h.mig < 0) return sim::CopyString(g.uuid(), uuid, length);
                         return sim::CopyString(g.mig_uuid(h.mig), uuid, length);
                       });
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return sim::OnGpu(device, sim::Check(pci != nullptr), [&](SimulatedGpu& g) {
    std::memset(pci, 0, sizeof(*pci));
    pci->domain = g.pci_domain();
    pci->bus = g.pci_bus();
    pci->device = 0;
    pci->pciDeviceId = g.profile().pci_device_id;
    pci->pciSubSystemId = g.profile().pci_subsystem_id;
    std::snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", pci->domain, pci->bus,
                  pci->device);
    std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0",
                  pci->domain & 0xFFFF, pci->bus, pci->device);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version, unsigned int length) {
  return sim::OnGpu(device, sim::Check(version != nullptr), [&](SimulatedGpu& g) {
    return sim::CopyString(g.profile().vbios_version, version, length);
  });
}

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* temperature) {
  nvmlReturn_t args = sim::CheckVersioned(temperature, nvmlTemperature_v1);
  if (args == NVML_SUCCESS && sim::Raw(temperature->sensorType) != NVML_TEMPERATURE_GPU) {
    args = NVML_ERROR_INVALID_ARGUMENT;
  }
  return sim::OnGpu(device, args, [&](SimulatedGpu& g) {
    temperature->temperature = g.temperature_c();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int* temp) {
  return sim::OnGpu(device,
                    sim::Check(temp != nullptr && sim::Raw(sensorType) == NVML_TEMPERATURE_GPU),
                    [&](SimulatedGpu& g) {
                      *temp = static_cast<unsigned int>(std::max(0, g.temperature_c()));
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                               nvmlTemperatureThresholds_t thresholdType,
                                               unsigned int* temp) {
  const bool ok =
      temp != nullptr && sim::InRange(thresholdType, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN,
                                      NVML_TEMPERATURE_THRESHOLD_GPS_CURR);
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    const GpuProfile& p = g.profile();
    double limit = 0;
    switch (sim::Raw(thresholdType)) {
      case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
        limit = p.shutdown_temp_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
        limit = p.slowdown_temp_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
        if (!sim::HasMemoryLimit(p)) return NVML_ERROR_NOT_SUPPORTED;
        limit = p.memory_max_operating_temp_c;
        break;
      case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
        limit = p.gpu_max_operating_temp_c;
        break;
      default:
        return NVML_ERROR_NOT_SUPPORTED;  // acoustic and GPS thresholds
    }
    *temp = static_cast<unsigned int>(sim::LimitC(limit));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMarginTemperature(nvmlDevice_t device,
                                            nvmlMarginTemperature_t* marginTempInfo) {
  return sim::OnGpu(device, sim::CheckVersioned(marginTempInfo, nvmlMarginTemperature_v1),
                    [&](SimulatedGpu& g) {
                      // Degrees below the maximum operating temperature (nvidia-smi's T.Limit).
                      marginTempInfo->marginTemperature =
                          sim::LimitC(g.profile().gpu_max_operating_temp_c) - g.temperature_c();
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return sim::OnGpu(device, sim::Check(power != nullptr), [&](SimulatedGpu& g) {
    *power = g.power_mw();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  return sim::OnGpu(device, sim::Check(limit != nullptr), [&](SimulatedGpu& g) {
    *limit = g.power_limit_mw();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return sim::OnGpu(device, sim::Check(limit != nullptr), [&](SimulatedGpu& g) {
    *limit = g.power_limit_mw();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  return sim::OnGpu(device, sim::Check(energy != nullptr), [&](SimulatedGpu& g) {
    if (!g.profile().has_energy) return NVML_ERROR_NOT_SUPPORTED;
    *energy = g.energy_mj();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  return sim::OnGpu(device, sim::Check(utilization != nullptr), [&](SimulatedGpu& g) {
    // With MIG on, utilization exists only per instance (nvidia-smi shows "-").
    if (sim::MigEnabled(g.profile())) return NVML_ERROR_NOT_SUPPORTED;
    utilization->gpu = g.utilization_gpu_pct();
    utilization->memory = g.utilization_memory_pct();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                             unsigned int* samplingPeriodUs) {
  return sim::OnGpu(device, sim::Check(utilization != nullptr && samplingPeriodUs != nullptr),
                    [&](SimulatedGpu& g) {
                      if (!g.profile().has_encoder || sim::MigEnabled(g.profile())) {
                        return NVML_ERROR_NOT_SUPPORTED;
                      }
                      *utilization = g.encoder_pct();
                      *samplingPeriodUs = sim::kSamplingPeriodUs;
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                             unsigned int* samplingPeriodUs) {
  return sim::OnGpu(device, sim::Check(utilization != nullptr && samplingPeriodUs != nullptr),
                    [&](SimulatedGpu& g) {
                      if (!g.profile().has_decoder || sim::MigEnabled(g.profile())) {
                        return NVML_ERROR_NOT_SUPPORTED;
                      }
                      *utilization = g.decoder_pct();
                      *samplingPeriodUs = sim::kSamplingPeriodUs;
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                    unsigned int* clock) {
  return sim::OnGpu(
      device,
      sim::Check(clock != nullptr && sim::InRange(type, NVML_CLOCK_GRAPHICS, NVML_CLOCK_VIDEO)),
      [&](SimulatedGpu& g) {
        *clock = g.clock_mhz(static_cast<ClockDomain>(type));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int* clock) {
  return sim::OnGpu(
      device,
      sim::Check(clock != nullptr && sim::InRange(type, NVML_CLOCK_GRAPHICS, NVML_CLOCK_VIDEO)),
      [&](SimulatedGpu& g) {
        *clock = sim::MaxClockMhz(g.profile(), static_cast<ClockDomain>(type));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* clocksEventReasons) {
  return sim::OnGpu(device, sim::Check(clocksEventReasons != nullptr), [&](SimulatedGpu& g) {
    *clocksEventReasons = g.clocks_event_reasons();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(
    nvmlDevice_t device, unsigned long long* supportedClocksEventReasons) {
  return sim::OnGpu(device, sim::Check(supportedClocksEventReasons != nullptr), [&](SimulatedGpu&) {
    *supportedClocksEventReasons = sim::kSupportedReasons;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return sim::OnDevice(device, sim::CheckVersioned(memory, nvmlMemory_v2),
                       [&](SimulatedGpu& g, const DeviceHandle& h) {
                         sim::MemoryOf(g, h, memory);
                         return NVML_SUCCESS;
                       });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return sim::OnDevice(device, sim::Check(memory != nullptr),
                       [&](SimulatedGpu& g, const DeviceHandle& h) {
                         nvmlMemory_v2_t m{};
                         sim::MemoryOf(g, h, &m);
                         // v1 counts reserved memory as used.
                         memory->total = m.total;
                         memory->used = m.used + m.reserved;
                         memory->free = m.free;
                         return NVML_SUCCESS;
                       });
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType,
                                         unsigned long long* eccCounts) {
  const bool ok = eccCounts != nullptr &&
                  sim::InRange(errorType, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                               NVML_MEMORY_ERROR_TYPE_UNCORRECTED) &&
                  sim::InRange(counterType, NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC);
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    if (!g.profile().has_ecc) return NVML_ERROR_NOT_SUPPORTED;
    *eccCounts = g.ecc_errors(errorType == NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                              counterType == NVML_AGGREGATE_ECC);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned int* pageCount, unsigned long long* addresses) {
  const bool ok = pageCount != nullptr &&
                  sim::InRange(cause, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
                               NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
  (void)addresses;  // the model never retires pages, so nothing is written
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    if (!g.profile().has_retired_pages) return NVML_ERROR_NOT_SUPPORTED;
    *pageCount = 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device,
                                                    nvmlEnableState_t* isPending) {
  return sim::OnGpu(device, sim::Check(isPending != nullptr), [&](SimulatedGpu& g) {
    if (!g.profile().has_retired_pages) return NVML_ERROR_NOT_SUPPORTED;
    *isPending = NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int* corrRows,
                                       unsigned int* uncRows, unsigned int* isPending,
                                       unsigned int* failureOccurred) {
  const bool ok = corrRows != nullptr && uncRows != nullptr && isPending != nullptr &&
                  failureOccurred != nullptr;
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    if (!sim::RemappedRowsSupported(g.profile())) return NVML_ERROR_NOT_SUPPORTED;
    const sim::RemappedRows rows = g.remapped_rows();
    *corrRows = rows.correctable;
    *uncRows = rows.uncorrectable;
    *isPending = rows.pending ? 1 : 0;
    *failureOccurred = rows.failure ? 1 : 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  return sim::OnGpu(device, sim::Check(value != nullptr), [&](SimulatedGpu& g) {
    if (!g.profile().has_pcie_replay) return NVML_ERROR_NOT_SUPPORTED;
    *value = g.pcie_replays();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* currLinkGen) {
  return sim::OnGpu(device, sim::Check(currLinkGen != nullptr), [&](SimulatedGpu& g) {
    *currLinkGen = static_cast<unsigned int>(g.pcie_gen());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* currLinkWidth) {
  return sim::OnGpu(device, sim::Check(currLinkWidth != nullptr), [&](SimulatedGpu& g) {
    *currLinkWidth = static_cast<unsigned int>(g.pcie_width());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGen) {
  return sim::OnGpu(device, sim::Check(maxLinkGen != nullptr), [&](SimulatedGpu& g) {
    *maxLinkGen = static_cast<unsigned int>(g.profile().pcie_max_gen);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* maxLinkWidth) {
  return sim::OnGpu(device, sim::Check(maxLinkWidth != nullptr), [&](SimulatedGpu& g) {
    *maxLinkWidth = static_cast<unsigned int>(g.profile().pcie_max_width);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t* isActive) {
  return sim::OnGpu(device, sim::Check(isActive != nullptr), [&](SimulatedGpu& g) {
    if (nvmlReturn_t r = sim::CheckPart(link, g.profile().nvlink_links); r != NVML_SUCCESS) {
      return r;
    }
    *isActive =
        g.nvlink_active(static_cast<int>(link)) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                             nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long* counterValue) {
  const bool ok = counterValue != nullptr &&
                  sim::InRange(counter, NVML_NVLINK_ERROR_DL_REPLAY, NVML_NVLINK_ERROR_DL_ECC_DATA);
  return sim::OnGpu(device, sim::Check(ok), [&](SimulatedGpu& g) {
    if (nvmlReturn_t r = sim::CheckPart(link, g.profile().nvlink_links); r != NVML_SUCCESS) {
      return r;
    }
    *counterValue = g.nvlink_errors(static_cast<int>(link), static_cast<sim::NvLinkError>(counter));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int* numFans) {
  return sim::OnGpu(device, sim::Check(numFans != nullptr), [&](SimulatedGpu& g) {
    if (g.profile().num_fans == 0) return NVML_ERROR_NOT_SUPPORTED;
    *numFans = static_cast<unsigned int>(g.profile().num_fans);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int* speed) {
  return sim::OnGpu(device, sim::Check(speed != nullptr), [&](SimulatedGpu& g) {
    if (nvmlReturn_t r = sim::CheckPart(fan, g.profile().num_fans); r != NVML_SUCCESS) return r;
    *speed = g.fan_speed_pct(static_cast<int>(fan));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pState) {
  return sim::OnGpu(device, sim::Check(pState != nullptr), [&](SimulatedGpu& g) {
    *pState = static_cast<nvmlPstates_t>(g.pstate());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* currentMode,
                                  unsigned int* pendingMode) {
  return sim::OnGpu(device, sim::Check(currentMode != nullptr && pendingMode != nullptr),
                    [&](SimulatedGpu& g) {
                      if (!g.profile().has_mig) return NVML_ERROR_NOT_SUPPORTED;
                      const unsigned int mode = sim::MigEnabled(g.profile()) ? 1 : 0;
                      *currentMode = mode;
                      *pendingMode = mode;
                      return NVML_SUCCESS;
                    });
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  return sim::OnGpu(device, sim::Check(count != nullptr), [&](SimulatedGpu& g) {
    // NVML: zero when MIG is not supported or not enabled.
    const GpuProfile& p = g.profile();
    *count = sim::MigEnabled(p) ? static_cast<unsigned int>(p.max_mig_devices) : 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t* migDevice) {
  sim::State* s = sim::Current();
  if (s == nullptr) return NVML_ERROR_UNINITIALIZED;
  return sim::OnGpu(device, sim::Check(migDevice != nullptr), [&](SimulatedGpu& g) {
    const GpuProfile& p = g.profile();
    if (!p.has_mig) return NVML_ERROR_NOT_SUPPORTED;
    if (index >= static_cast<unsigned int>(p.max_mig_devices)) return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= static_cast<unsigned int>(p.mig_instances)) return NVML_ERROR_NOT_FOUND;
    const int first = s->first_mig[static_cast<size_t>(g.index())];
    *migDevice = sim::ToDevice(&s->migs[static_cast<size_t>(first) + index]);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  return sim::OnDevice(device, sim::Check(id != nullptr),
                       [&](SimulatedGpu&, const DeviceHandle& h) {
                         if (h.mig < 0) return NVML_ERROR_NOT_SUPPORTED;
                         *id = static_cast<unsigned int>(h.mig) + 1;  // GPU instances count from 1
                         return NVML_SUCCESS;
                       });
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  return sim::OnDevice(device, sim::Check(id != nullptr),
                       [&](SimulatedGpu&, const DeviceHandle& h) {
                         if (h.mig < 0) return NVML_ERROR_NOT_SUPPORTED;
                         *id = 0;  // one compute instance spanning each GPU instance
                         return NVML_SUCCESS;
                       });
}

}  // extern "C"
