/**
 * Alert thresholds of the gpumon rule pack, in one place, for the UI.
 *
 * Contract: every number here is a policy number copied from a rule in
 * rules/*.rules.yml (the file and alert are named next to it), so a cell, a
 * stat tile or a threshold line turns warning/critical exactly where the alert
 * of the same name would fire. Limits themselves (maximum operating
 * temperatures, power limits) are never typed here: they are the GPU's own,
 * read from its gauges at query time. When the rule pack changes, change this
 * file with it.
 */

/** rules/gpumon-thermal.rules.yml, GpuTemperatureHigh. */
export const DIE_TEMPERATURE = {
  /** warning: die within this many °C of gpu_max_operating_temperature_celsius. */
  warningMarginCelsius: 3,
  /** critical: die at or above gpu_max_operating_temperature_celsius. */
  criticalMarginCelsius: 0,
} as const;

/** rules/gpumon-thermal.rules.yml, GpuMemoryTemperatureHigh. */
export const MEMORY_TEMPERATURE = {
  /** warning: HBM within this many °C of gpu_memory_max_operating_temperature_celsius. */
  warningMarginCelsius: 5,
  /** critical: HBM at or above gpu_memory_max_operating_temperature_celsius. */
  criticalMarginCelsius: 0,
} as const;

/**
 * rules/gpumon-power.rules.yml, GpuPowerCapped: drawing at least 95 % of the
 * enforced limit counts as running at the cap. The pack rates that "info"
 * (normal for training), so the UI shows it as warning-coloured only, and
 * reaching the limit itself as critical.
 */
export const POWER = {
  warningRatioOfLimit: 0.95,
  criticalRatioOfLimit: 1,
} as const;

/**
 * rules/gpumon-forecast.rules.yml, Gpu(Memory)TemperatureSlowdownPredicted:
 * predicted time to the slowdown limit under 30 minutes.
 */
export const FORECAST = {
  warningSecondsToSlowdown: 1800,
  /**
   * The trend still holds: the level (the highest reading of the last
   * 2 minutes) rose over the last 3 minutes by at least 70 % of what the
   * rise rate predicts. A load step (a job starting) flattens out and fails
   * this; failing cooling keeps climbing.
   */
  levelWindowSeconds: 120,
  trendCheckSeconds: 180,
  trendFraction: 0.7,
} as const;

/**
 * Clock event reasons that count as throttling: those of the
 * gpu:throttled:ratio_rate10m record (gpumon-thermal.rules.yml) plus
 * hw_slowdown (GpuHardwareSlowdown, gpumon-power.rules.yml). The software
 * power cap is left out on purpose, as in the pack.
 */
export const THROTTLE_REASONS = {
  /** GpuThermalSlowdown (warning). */
  warning: ["sw_thermal_slowdown"] as const,
  /** GpuThermalSlowdown (critical), GpuPowerBrakeSlowdown, GpuHardwareSlowdown. */
  critical: ["hw_thermal_slowdown", "hw_power_brake_slowdown", "hw_slowdown"] as const,
};

/* Utilisation and memory used have no alert in the rule pack: they are
   coloured on a plain scale and never turn warning or critical. */
