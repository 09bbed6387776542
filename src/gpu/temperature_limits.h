// The GPU's own temperature limits: which NVML source each is read from, and
// how a limit is derived from NVML's T.Limit fields.
//
// Why the absolute thresholds come first. nvmlDeviceGetTemperatureThreshold
// answers absolute degrees on every generation since Kepler, it is what DCGM
// reports as DCGM_FI_DEV_*_TEMP (so both naming schemes carry dcgm-exporter's
// numbers), and it is the only source of an absolute memory limit: the
// NVML_FI_DEV_TEMPERATURE_*_TLIMIT fields are offsets from a reference
// point, and NVML gives the live margin that locates that point for the die
// only. NVIDIA calls the threshold call no longer preferred on Ada and newer
// and may stop answering it there, so when a die limit's threshold reports a
// permanent error at discovery (NOT_SUPPORTED, call missing, ...) the
// collector derives that limit from its T.Limit field instead, anchored by
// the die temperature and the margin of the same round:
//   limit = current temperature + margin - offset.
// (Temperature and margin are separate calls, so a derived limit can be one
// degree off when the die temperature moves between them.) The memory limit
// has no fallback: without the threshold it is absent.
#pragma once

#include "gpu/catalog.h"
#include "gpu/nvml_api.h"

namespace gpumon::gpu {

struct TemperatureLimit {
  Metric metric;
  nvmlTemperatureThresholds_t threshold;
  unsigned tlimit_field;  // 0: none
};

inline constexpr TemperatureLimit kTemperatureLimits[] = {
    {Metric::kShutdownTemperature, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN,
     NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT},
    {Metric::kSlowdownTemperature, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,
     NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT},
    {Metric::kMaxOperatingTemperature, NVML_TEMPERATURE_THRESHOLD_GPU_MAX,
     NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT},
    {Metric::kMemoryMaxOperatingTemperature, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, 0},
};

// The absolute limit (degrees C) a T.Limit offset stands for, given the die
// temperature and the margin read together.
constexpr double LimitFromTlimitOffset(double temperature, double margin, double offset) {
  return temperature + margin - offset;
}

}  // namespace gpumon::gpu
