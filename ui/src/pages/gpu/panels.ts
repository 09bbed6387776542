/**
 * The GPU page's chart panels: what each one queries and how it is drawn.
 *
 * Contract: each definition's `query(sel)` is ONE range query. Series whose
 * `__name__` is in `plot` (or, for aggregated queries without names, all
 * series) are drawn; the others are auxiliary and read at the end of the
 * range: the GPU's limit (`limit`), and the rule pack's forecast records
 * (`rate`, `eta`). Thresholds are derived from each GPU's own limit with the
 * rule-pack margins (src/gpu/thresholds.ts): die warning 3 °C below
 * gpu_max_operating_temperature_celsius, critical at it, and the hardware
 * slowdown temperature as a second critical line (GpuTemperatureHigh,
 * GpuTemperatureNearShutdown); HBM warning 5 °C below
 * gpu_memory_max_operating_temperature_celsius, critical at it
 * (GpuMemoryTemperatureHigh); power warning at 95 % of the enforced limit
 * (GpuPowerCapped), critical at it.
 */
import type { Labels } from "../../core/api.ts";
import type { Unit } from "../../charts/timeseries.ts";
import { metricsSelector, withSelector } from "../../gpu/selector.ts";
import { DIE_TEMPERATURE, MEMORY_TEMPERATURE, POWER } from "../../gpu/thresholds.ts";
import { withMatchers } from "../../core/promql.ts";

export interface LimitLine {
  /** metric holding the limit (last value per GPU) */
  metric: string;
  /** metrics that stand in when `metric` is absent */
  fallback?: string[];
  /** warning line = limit - warningOffset, or limit * warningRatio */
  warningOffset?: number;
  warningRatio?: number;
  label: string;
}

export interface PanelDef {
  id: string;
  title: string;
  description: string;
  unit: Unit;
  query(sel: string): string;
  /** plotted metric names; undefined = every series is plotted */
  plot?: readonly string[];
  limits?: LimitLine[];
  /** the forecast overlay of a temperature panel */
  forecast?: { sensorName: string; limitMetric: string; rateMetric: string; etaMetric: string };
  /** the series' own part of its name (the GPU is added in node views) */
  name(labels: Labels): string;
  /** drop series that are 0 over the whole range (clock event reasons) */
  hideAllZero?: boolean;
  yMin?: number;
  yMax?: number;
  /** colour by GPU index (one series per GPU), so a GPU keeps its colour across panels */
  colorByGpu?: boolean;
}

const DIE = ["gpu_temperature_celsius", "gpu_max_operating_temperature_celsius", "gpu_slowdown_temperature_celsius"];
const HBM = ["gpu_memory_temperature_celsius", "gpu_memory_max_operating_temperature_celsius"];

export const PANELS: readonly PanelDef[] = [
  {
    id: "die-temperature",
    title: "Die temperature",
    description: "Die temperature against the GPU's own maximum operating and hardware slowdown temperatures",
    unit: "celsius",
    query: (sel) => metricsSelector([...DIE, "gpu:temperature:rise_rate", "gpu:temperature:seconds_to_slowdown"], sel),
    plot: ["gpu_temperature_celsius"],
    limits: [
      { metric: "gpu_max_operating_temperature_celsius", warningOffset: DIE_TEMPERATURE.warningMarginCelsius, label: "max operating" },
      { metric: "gpu_slowdown_temperature_celsius", label: "hardware slowdown" },
    ],
    forecast: {
      sensorName: "Die",
      limitMetric: "gpu_max_operating_temperature_celsius",
      rateMetric: "gpu:temperature:rise_rate",
      etaMetric: "gpu:temperature:seconds_to_slowdown",
    },
    name: () => "die",
    colorByGpu: true,
  },
  {
    id: "memory-temperature",
    title: "HBM temperature",
    description: "Memory (HBM) temperature against the GPU's own memory maximum operating temperature",
    unit: "celsius",
    query: (sel) => metricsSelector([...HBM, "gpu:memory_temperature:rise_rate", "gpu:memory_temperature:seconds_to_slowdown"], sel),
    plot: ["gpu_memory_temperature_celsius"],
    limits: [{ metric: "gpu_memory_max_operating_temperature_celsius", warningOffset: MEMORY_TEMPERATURE.warningMarginCelsius, label: "HBM max operating" }],
    forecast: {
      sensorName: "HBM",
      limitMetric: "gpu_memory_max_operating_temperature_celsius",
      rateMetric: "gpu:memory_temperature:rise_rate",
      etaMetric: "gpu:memory_temperature:seconds_to_slowdown",
    },
    name: () => "HBM",
    colorByGpu: true,
  },
  {
    id: "utilization",
    title: "Utilisation",
    description: "Kernel (SM) and memory utilisation",
    unit: "ratio",
    query: (sel) => metricsSelector(["gpu_utilization_ratio", "gpu_memory_utilization_ratio"], sel),
    name: (l) => (l["__name__"] === "gpu_memory_utilization_ratio" ? "memory" : "GPU"),
    yMin: 0,
    yMax: 1,
  },
  {
    id: "power",
    title: "Power",
    description: "Board power draw against the enforced power limit",
    unit: "watts",
    query: (sel) => metricsSelector(["gpu_power_usage_watts", "gpu_power_enforced_limit_watts", "gpu_power_limit_watts"], sel),
    plot: ["gpu_power_usage_watts"],
    limits: [
      {
        metric: "gpu_power_enforced_limit_watts",
        fallback: ["gpu_power_limit_watts"],
        warningRatio: POWER.warningRatioOfLimit,
        label: "power limit",
      },
    ],
    name: () => "power",
    yMin: 0,
    colorByGpu: true,
  },
  {
    id: "memory-used",
    title: "Memory used",
    description: "Framebuffer memory in use and the total",
    unit: "bytes",
    query: (sel) => metricsSelector(["gpu_memory_used_bytes", "gpu_memory_total_bytes"], sel),
    name: (l) => (l["__name__"] === "gpu_memory_total_bytes" ? "total" : "used"),
    yMin: 0,
  },
  {
    id: "clocks",
    title: "Clocks",
    description: "SM and memory clocks",
    unit: "hertz",
    query: (sel) => metricsSelector(["gpu_sm_clock_hertz", "gpu_memory_clock_hertz"], sel),
    name: (l) => (l["__name__"] === "gpu_memory_clock_hertz" ? "memory" : "SM"),
    yMin: 0,
  },
  {
    id: "clock-events",
    title: "Clock event reasons",
    description: "GPUs with each clock event reason active (1 per GPU); reasons never active in the range are hidden",
    unit: "none",
    query: (sel) => `sum by (reason) (${withSelector("gpu_clock_event_reason_active", sel)})`,
    name: (l) => l["reason"] ?? "reason",
    hideAllZero: true,
    yMin: 0,
  },
  {
    id: "errors",
    title: "ECC and XID errors",
    description: "Volatile ECC error counters by type and XID errors by code (cumulative; summed over the GPUs shown)",
    unit: "none",
    query: (sel) =>
      `sum by (error_type) (${withSelector("gpu_ecc_errors_total", withMatchers(sel, 'scope="volatile"'))})` +
      ` or sum by (xid) (${withSelector("gpu_xid_errors_total", sel)})`,
    name: (l) => (l["xid"] !== undefined ? `XID ${l["xid"]}` : `ECC ${l["error_type"] ?? ""}`),
    yMin: 0,
  },
];
