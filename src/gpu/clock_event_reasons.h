// The clock event reasons: the values of gpu_clock_event_reason_active's
// `reason` label, in the order of its series, with their bits in NVML's
// reason mask (nvmlClocksEventReason*). The collector reads each reason from
// the mask; dcgm_names maps each to its bit of
// DCGM_FI_DEV_CLOCK_THROTTLE_REASONS.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "gpu/nvml_api.h"

namespace gpumon::gpu {

struct ClockEventReason {
  uint64_t bit;
  std::string_view name;
};

inline constexpr ClockEventReason kClockEventReasons[] = {
    {nvmlClocksEventReasonGpuIdle, "gpu_idle"},
    {nvmlClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting"},
    {nvmlClocksEventReasonSwPowerCap, "sw_power_cap"},
    {nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown"},
    {nvmlClocksEventReasonSyncBoost, "sync_boost"},
    {nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
    {nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
    {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {nvmlClocksEventReasonDisplayClockSetting, "display_clock_setting"},
};

inline std::span<const ClockEventReason> ClockEventReasons() { return kClockEventReasons; }

}  // namespace gpumon::gpu
