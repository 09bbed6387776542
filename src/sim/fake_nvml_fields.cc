// The fake NVML's field values (nvmlDeviceGetFieldValues): clock event time
// counters, memory temperature, energy, NVLink and PCIe counters, row
// remapping, instant power, the T.Limit offsets of the GPU's temperature
// limits and the recovery action. Fields the profile lacks answer
// NOT_SUPPORTED in their own nvmlReturn; MIG devices answer none.
#include <chrono>
#include <cstdint>
#include <cstring>

#include "sim/fake_nvml_state.h"

namespace gpumon::sim {
namespace {

// A T.Limit field: the limit as an offset from the die's maximum operating
// temperature, the reference the margin is measured against (negative =
// hotter), so H200's slowdown at 89 against 87 reads -2.
int TlimitOffset(const GpuProfile& p, double limit_c) {
  return LimitC(p.gpu_max_operating_temp_c) - LimitC(limit_c);
}

// The recovery action the driver recommends, a function of the GPU's state:
// a GPU reset while a row remap is pending (an uncorrectable error's remap
// takes effect at the next reset), else none. Reported where rows are
// remapped (Ampere and newer data-center GPUs).
bool RecoveryActionSupported(const GpuProfile& p) { return p.has_row_remapping; }
unsigned int RecoveryAction(const SimulatedGpu& g) {
  return g.remapped_rows().pending ? NVML_GPU_RECOVERY_ACTION_GPU_RESET
                                   : NVML_GPU_RECOVERY_ACTION_NONE;
}

void FillField(const SimulatedGpu& g, nvmlFieldValue_t& v) {
  const GpuProfile& p = g.profile();
  v.nvmlReturn = NVML_SUCCESS;
  v.latencyUsec = 0;
  std::memset(&v.value, 0, sizeof(v.value));
  auto ull = [&](bool supported, uint64_t x) {
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    if (supported) {
      v.value.ullVal = x;
    } else {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  };
  auto ui = [&](bool supported, unsigned int x) {
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (supported) {
      v.value.uiVal = x;
    } else {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  };
  auto si = [&](bool supported, int x) {
    v.valueType = NVML_VALUE_TYPE_SIGNED_INT;
    if (supported) {
      v.value.siVal = x;
    } else {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  };
  auto ns = [&](ClockEventCounter c) { ull(p.has_clock_event_counters, g.clock_event_ns(c)); };
  auto link = [&](bool tx) {
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v.nvmlReturn = CheckPart(v.scopeId, p.nvlink_links);
    if (v.nvmlReturn == NVML_SUCCESS) {
      const int l = static_cast<int>(v.scopeId);
      v.value.ullVal = tx ? g.nvlink_tx_kib(l) : g.nvlink_rx_kib(l);
    }
  };
  const RemappedRows rows = g.remapped_rows();
  switch (v.fieldId) {
    case NVML_FI_DEV_PERF_POLICY_POWER:
      return ns(ClockEventCounter::kSwPowerCap);
    case NVML_FI_DEV_PERF_POLICY_THERMAL:
      return ull(p.has_clock_event_counters, g.clock_event_ns(ClockEventCounter::kSwThermal) +
                                                 g.clock_event_ns(ClockEventCounter::kHwThermal));
    case NVML_FI_DEV_PERF_POLICY_SYNC_BOOST:
      return ns(ClockEventCounter::kSyncBoost);
    case NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT:
    case NVML_FI_DEV_PERF_POLICY_RELIABILITY:
      return ull(p.has_clock_event_counters, 0);
    case NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION:
      return ns(ClockEventCounter::kLowUtilization);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN:
      return ns(ClockEventCounter::kSwThermal);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN:
      return ns(ClockEventCounter::kHwThermal);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN:
      return ns(ClockEventCounter::kHwPowerBrake);
    case NVML_FI_DEV_MEMORY_TEMP:
      return ui(p.has_memory_temperature, static_cast<unsigned int>(g.memory_temperature_c()));
    case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
      return ull(p.has_energy, g.energy_mj());
    case NVML_FI_DEV_NVLINK_LINK_COUNT:
      return ui(p.nvlink_links > 0, static_cast<unsigned int>(p.nvlink_links));
    case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
      return ui(p.has_pcie_replay, g.pcie_replays());
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
      return link(true);
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
      return link(false);
    case NVML_FI_DEV_REMAPPED_COR:
      return ui(RemappedRowsSupported(p), rows.correctable);
    case NVML_FI_DEV_REMAPPED_UNC:
      return ui(RemappedRowsSupported(p), rows.uncorrectable);
    case NVML_FI_DEV_REMAPPED_PENDING:
      return ui(RemappedRowsSupported(p), rows.pending ? 1 : 0);
    case NVML_FI_DEV_REMAPPED_FAILURE:
      return ui(RemappedRowsSupported(p), rows.failure ? 1 : 0);
    case NVML_FI_DEV_POWER_INSTANT:
      return ui(p.has_power_instant, g.power_instant_mw());
    case NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT:
      return si(true, TlimitOffset(p, p.shutdown_temp_c));
    case NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT:
      return si(true, TlimitOffset(p, p.slowdown_temp_c));
    case NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT:
      return si(HasMemoryLimit(p), 0);  // from the memory's own maximum, as Hopper reports
    case NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT:
      return si(true, 0);
    case NVML_FI_DEV_GET_GPU_RECOVERY_ACTION:
      return ui(RecoveryActionSupported(p), RecoveryAction(g));
    case NVML_FI_DEV_PCIE_COUNT_TX_BYTES:
      return ull(p.has_pcie_byte_counters, g.pcie_tx_bytes());
    case NVML_FI_DEV_PCIE_COUNT_RX_BYTES:
      return ull(p.has_pcie_byte_counters, g.pcie_rx_bytes());
    default:
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      return;
  }
}

}  // namespace
}  // namespace gpumon::sim

using gpumon::sim::DeviceHandle;
using gpumon::sim::SimulatedGpu;
namespace sim = gpumon::sim;

extern "C" {

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t* values) {
  return sim::OnDevice(device, sim::Check(values != nullptr && valuesCount >= 0),
                       [&](SimulatedGpu& g, const DeviceHandle& h) {
                         // On the virtual clock the field timestamp is the
                         // simulated time too, so the same times give the same
                         // answers.
                         const sim::State* state = sim::Current();
                         const long long now_us =
                             state != nullptr && state->virtual_clock
                                 ? static_cast<long long>(g.now_ms()) * 1000
                                 : std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
                         for (int i = 0; i < valuesCount; ++i) {
                           nvmlFieldValue_t& v = values[i];
                           v.timestamp = now_us;
                           if (h.mig >= 0) {
                             // MIG devices answer the call but none of these device fields.
                             v.latencyUsec = 0;
                             v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                             std::memset(&v.value, 0, sizeof(v.value));
                             v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
                           } else {
                             sim::FillField(g, v);
                           }
                         }
                         return NVML_SUCCESS;
                       });
}

}  // extern "C"
