// The metric catalog: the single source of truth for every metric the agent
// can export — its native (Prometheus-convention) name, type, unit, help,
// metric group, the NVML call it comes from, which GPUs support it, and its
// dcgm-exporter-compatible alias(es). docs/metrics.md is generated from this
// table (`gpumon catalog --markdown`); a test fails when they drift.
//
// Naming: native names use base units (celsius, watts, joules, bytes, hertz,
// seconds), ratios in 0..1 and "_total" for counters. DCGM aliases keep
// dcgm-exporter's names, units (MiB, MHz, percent, mJ) and label names.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exposition/metric_family.h"

namespace gpumon::gpu {

// Metric groups: the unit of selection and of sampling interval.
enum class Group : uint8_t {
  kTemperature,
  kPower,
  kUtilization,
  kClocks,
  kClockEvents,
  kMemory,
  kEcc,
  kRetirement,
  kPcie,
  kNvlink,
  kFan,
  kInventory,
  kXid,
  kMig,
  kHealth,  // device health state (lost, recovery action); always on
  kAgent,   // the agent's own metrics; always on
  kCount
};
inline constexpr int kGroupCount = static_cast<int>(Group::kCount);

std::string_view GroupName(Group group);
std::optional<Group> GroupFromName(std::string_view name);
// Default sampling interval: 1 s for fast-changing signals, 5 s for link
// counters, 30 s for error counters and inventory.
std::chrono::milliseconds DefaultInterval(Group group);
// Groups that the config can turn off or retime (all but kHealth, kAgent).
bool IsSelectableGroup(Group group);

// A hardware capability a metric needs. The catalog records it (docs, tests);
// the agent discovers at start-up what each GPU actually reports.
enum class Feature : uint8_t {
  kAny,                // every NVIDIA GPU NVML supports
  kMemoryTemperature,  // HBM GPUs (data center)
  kPowerInstant,       // Hopper and newer
  kEnergy,             // Volta and newer
  kUtilization,        // not on a MIG-enabled GPU
  kEncoder,
  kDecoder,
  kClockEventCounters,  // cumulative clock-event time (data center)
  kMemoryReserved,      // nvmlDeviceGetMemoryInfo_v2
  kEcc,                 // ECC-capable memory
  kRetiredPages,        // page retirement (pre-Ampere data center)
  kRowRemapping,        // Ampere and newer data center
  kPcieReplay,
  kPcieByteCounters,
  kNvlink,
  kFans,  // boards with fans (consumer, some workstation)
  kMig,   // MIG-capable GPUs
  kXidEvents,
  kThermalMargin,   // nvmlDeviceGetMarginTemperature (driver 570+)
  kRecoveryAction,  // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (data center, driver 570+)
  kCount
};
inline constexpr int kFeatureCount = static_cast<int>(Feature::kCount);
std::string_view FeatureDescription(Feature feature);

// Identifiers of the catalog's metrics; Def(id) gives the definition.
enum class Metric : uint16_t {
  kTemperature,
  kMemoryTemperature,
  kShutdownTemperature,
  kSlowdownTemperature,
  kMaxOperatingTemperature,
  kMemoryMaxOperatingTemperature,
  kTemperatureMargin,
  kPowerUsage,
  kPowerInstant,
  kEnergy,
  kPowerLimit,
  kPowerEnforcedLimit,
  kUtilization,
  kMemoryUtilization,
  kEncoderUtilization,
  kDecoderUtilization,
  kGraphicsClock,
  kSmClock,
  kMemoryClock,
  kVideoClock,
  kPerformanceState,
  kClockEventActive,
  kClockEventReasonsMask,  // DCGM-only bit mask
  kClockEventDuration,
  kMemoryTotal,
  kMemoryUsed,
  kMemoryFree,
  kMemoryReserved,
  kEccErrors,
  kRetiredPages,
  kRetiredPagesPending,
  kRemappedRows,
  kRemappedRowsPending,
  kRemappedRowsFailure,
  kPcieReplay,
  kPcieLinkGeneration,
  kPcieLinkWidth,
  kPcieTransmitBytes,
  kPcieReceiveBytes,
  kNvlinkUp,
  kNvlinkErrors,
  kNvlinkTransmitBytes,
  kNvlinkReceiveBytes,
  kFanSpeed,
  kInfo,
  kGraphicsClockMax,
  kSmClockMax,
  kMemoryClockMax,
  kVideoClockMax,
  kPcieLinkGenerationMax,
  kPcieLinkWidthMax,
  kXidErrors,
  kXidLast,  // DCGM-only: last XID seen
  kMigModeEnabled,
  kMigMemoryTotal,
  kMigMemoryUsed,
  kRecoveryAction,
  kLost,
  // Agent self-metrics (no GPU labels).
  kAgentNvmlUp,
  kAgentGpus,
  kAgentCollectionDuration,
  kAgentCollections,
  kAgentNvmlErrors,
  kAgentBuildInfo,
  kProcessCpu,
  kProcessResident,
  kProcessStartTime,
  kProcessOpenFds,
  kCount
};
inline constexpr int kMetricCount = static_cast<int>(Metric::kCount);

// A dcgm-exporter name for (part of) a native metric. `match` selects the
// series by the comma-joined values of the metric's extra labels ("" = all);
// a matching alias drops those labels. Value is multiplied by `scale`.
struct DcgmAlias {
  std::string_view name;
  std::string_view match;
  double scale = 1;
};

enum class Scope : uint8_t { kGpu, kMigInstance, kAgent };

struct MetricDef {
  Metric id;
  std::string_view name;  // native sample name; empty for DCGM-only metrics
  exposition::MetricType type;
  std::string_view unit;  // base unit for OpenMetrics, or empty
  Group group;
  Feature feature;
  Scope scope;
  std::array<std::string_view, 4> labels;  // extra labels beyond the GPU's own
  std::string_view help;
  std::string_view source;  // the NVML call (documentation)
  std::array<DcgmAlias, 4> dcgm;

  int label_count() const;
};

const std::array<MetricDef, kMetricCount>& Catalog();
inline const MetricDef& Def(Metric id) { return Catalog()[static_cast<size_t>(id)]; }

// The metrics reference (docs/metrics.md), generated from the catalog.
std::string RenderMetricsReference();

}  // namespace gpumon::gpu
