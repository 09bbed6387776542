/**
 * The Fleet signals: what a heatmap cell shows for one GPU.
 *
 * Contract: each signal names the metrics it needs (fetched together in ONE
 * instant query, `{__name__=~"a|b|c", <variables>}`), and `read` turns one
 * GPU's values into a reading: the value shown (`data-value`, in the unit
 * named by `unit`), the GPU's own limit where there is one, the level against
 * the rule-pack thresholds (./thresholds.ts), and a 0..1 position on the
 * colour scale. The temperature signals are measured against the GPU's own
 * limits, never a fixed number; a GPU without the limit reads `nodata`
 * level-wise but still shows its value.
 */
import { DIE_TEMPERATURE, MEMORY_TEMPERATURE, POWER } from "./thresholds.ts";
import { type Level, levelOfMargin, levelOfRatio } from "./levels.ts";
import { formatCelsius, formatPercent, formatWatts } from "./format.ts";

export type SignalId = "utilization" | "temperature" | "memory_temperature" | "power" | "memory_used";

export const SIGNAL_IDS: readonly SignalId[] = ["temperature", "memory_temperature", "utilization", "power", "memory_used"];

/** The signal shown when the URL names none. */
export const DEFAULT_SIGNAL: SignalId = "temperature";

export interface Reading {
  /** The value in the signal's unit; NaN when the GPU does not report it. */
  value: number;
  /** The GPU's own limit in the same unit, when the signal has one. */
  limit: number;
  level: Level;
  /** Position on the colour scale, 0 (cool/low) to 1 (at the limit/high). */
  scale: number;
  /** One line for tooltips: "71 °C of 87 °C limit (16 °C left)". */
  text: string;
}

export interface LegendEntry {
  level: Level;
  text: string;
}

export interface FleetSignal {
  id: SignalId;
  label: string;
  /** Unit of `Reading.value` (and `data-value`). */
  unit: "°C" | "ratio" | "W";
  metrics: readonly string[];
  read(values: ReadonlyMap<string, number>): Reading;
  legend: readonly LegendEntry[];
  /** The text of the low and high ends of the colour scale. */
  scaleEnds: readonly [string, string];
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

/** A positive limit, or NaN (a 0 limit means "not reported", as in the rules' `> 0`). */
function positive(v: number | undefined): number {
  return v !== undefined && v > 0 ? v : NaN;
}

/** Degrees of margin that span the colour scale (display only, not a threshold). */
const MARGIN_SCALE_CELSIUS = 50;

function temperatureReading(value: number, limit: number, warning: number, critical: number): Reading {
  if (!Number.isFinite(value)) return { value, limit, level: "nodata", scale: 0, text: "no reading" };
  if (!Number.isFinite(limit)) {
    return { value, limit, level: "nodata", scale: 0, text: `${formatCelsius(value)} (no limit reported)` };
  }
  const margin = limit - value;
  const left = margin > 0 ? `${formatCelsius(margin)} left` : `${formatCelsius(-margin)} over`;
  return {
    value,
    limit,
    level: levelOfMargin(margin, warning, critical),
    scale: clamp01(1 - margin / MARGIN_SCALE_CELSIUS),
    text: `${formatCelsius(value)} of ${formatCelsius(limit)} limit (${left})`,
  };
}

const temperature: FleetSignal = {
  id: "temperature",
  label: "Die temperature",
  unit: "°C",
  metrics: ["gpu_temperature_celsius", "gpu_max_operating_temperature_celsius", "gpu_slowdown_temperature_celsius"],
  read(v) {
    // The maximum operating temperature is where GpuTemperatureHigh measures
    // from; a GPU that lacks it still has its hardware slowdown limit.
    const limit = positive(v.get("gpu_max_operating_temperature_celsius"));
    const fallback = positive(v.get("gpu_slowdown_temperature_celsius"));
    const value = v.get("gpu_temperature_celsius") ?? NaN;
    return temperatureReading(
      value,
      Number.isFinite(limit) ? limit : fallback,
      DIE_TEMPERATURE.warningMarginCelsius,
      DIE_TEMPERATURE.criticalMarginCelsius,
    );
  },
  legend: [
    { level: "warning", text: `within ${DIE_TEMPERATURE.warningMarginCelsius} °C of the GPU's max operating temperature (GpuTemperatureHigh)` },
    { level: "critical", text: "at or above the max operating temperature (GpuTemperatureHigh, critical)" },
    { level: "nodata", text: "no reading or no limit" },
  ],
  scaleEnds: [`${MARGIN_SCALE_CELSIUS} °C below limit`, "at limit"],
};

const memoryTemperature: FleetSignal = {
  id: "memory_temperature",
  label: "HBM temperature",
  unit: "°C",
  metrics: ["gpu_memory_temperature_celsius", "gpu_memory_max_operating_temperature_celsius"],
  read(v) {
    return temperatureReading(
      v.get("gpu_memory_temperature_celsius") ?? NaN,
      positive(v.get("gpu_memory_max_operating_temperature_celsius")),
      MEMORY_TEMPERATURE.warningMarginCelsius,
      MEMORY_TEMPERATURE.criticalMarginCelsius,
    );
  },
  legend: [
    { level: "warning", text: `within ${MEMORY_TEMPERATURE.warningMarginCelsius} °C of the HBM max operating temperature (GpuMemoryTemperatureHigh)` },
    { level: "critical", text: "at or above the HBM max operating temperature (GpuMemoryTemperatureHigh, critical)" },
    { level: "nodata", text: "no HBM sensor or no limit" },
  ],
  scaleEnds: [`${MARGIN_SCALE_CELSIUS} °C below limit`, "at limit"],
};

const utilization: FleetSignal = {
  id: "utilization",
  label: "Utilisation",
  unit: "ratio",
  metrics: ["gpu_utilization_ratio"],
  read(v) {
    const value = v.get("gpu_utilization_ratio") ?? NaN;
    if (!Number.isFinite(value)) return { value, limit: NaN, level: "nodata", scale: 0, text: "no reading" };
    return { value, limit: 1, level: "ok", scale: clamp01(value), text: `${formatPercent(value)} busy` };
  },
  legend: [{ level: "nodata", text: "no reading (MIG mode or not reporting); the rule pack has no utilisation alert" }],
  scaleEnds: ["idle", "busy"],
};

const power: FleetSignal = {
  id: "power",
  label: "Power",
  unit: "W",
  // The enforced limit is the one GpuPowerCapped compares with; the
  // management limit stands in where a GPU does not report it.
  metrics: ["gpu_power_usage_watts", "gpu_power_enforced_limit_watts", "gpu_power_limit_watts"],
  read(v) {
    const value = v.get("gpu_power_usage_watts") ?? NaN;
    const enforced = positive(v.get("gpu_power_enforced_limit_watts"));
    const limit = Number.isFinite(enforced) ? enforced : positive(v.get("gpu_power_limit_watts"));
    if (!Number.isFinite(value)) return { value, limit, level: "nodata", scale: 0, text: "no reading" };
    if (!Number.isFinite(limit)) return { value, limit, level: "nodata", scale: 0, text: `${formatWatts(value)} (no limit reported)` };
    const ratio = value / limit;
    return {
      value,
      limit,
      level: levelOfRatio(ratio, POWER.warningRatioOfLimit, POWER.criticalRatioOfLimit),
      scale: clamp01(ratio),
      text: `${formatWatts(value)} of ${formatWatts(limit)} limit (${formatPercent(ratio)})`,
    };
  },
  legend: [
    { level: "warning", text: `at ${POWER.warningRatioOfLimit * 100} % of the enforced power limit or more (GpuPowerCapped)` },
    { level: "critical", text: "at the enforced power limit" },
    { level: "nodata", text: "no reading or no limit" },
  ],
  scaleEnds: ["0 W", "at limit"],
};

const memoryUsed: FleetSignal = {
  id: "memory_used",
  label: "Memory used",
  unit: "ratio",
  metrics: ["gpu_memory_used_bytes", "gpu_memory_total_bytes"],
  read(v) {
    const used = v.get("gpu_memory_used_bytes") ?? NaN;
    const total = positive(v.get("gpu_memory_total_bytes"));
    const value = used / total;
    if (!Number.isFinite(value)) return { value: NaN, limit: 1, level: "nodata", scale: 0, text: "no reading" };
    return { value, limit: 1, level: "ok", scale: clamp01(value), text: `${formatPercent(value)} of framebuffer used` };
  },
  legend: [{ level: "nodata", text: "no reading; the rule pack has no memory-used alert" }],
  scaleEnds: ["empty", "full"],
};

export const SIGNALS: Readonly<Record<SignalId, FleetSignal>> = {
  temperature,
  memory_temperature: memoryTemperature,
  utilization,
  power,
  memory_used: memoryUsed,
};

export function isSignalId(s: string | null | undefined): s is SignalId {
  return s !== null && s !== undefined && (SIGNAL_IDS as readonly string[]).includes(s);
}

/** Formats a reading"s value in its signal"s unit. */
export function formatSignalValue(signal: FleetSignal, value: number): string {
  if (signal.unit === "°C") return formatCelsius(value);
  if (signal.unit === "W") return formatWatts(value);
  return formatPercent(value);
}
