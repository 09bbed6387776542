/**
 * The PromQL of the Fleet page: one instant query per panel, evaluated at
 * the end of the time range.
 *
 * Contract (pure functions of the selector and the range):
 * - `heatmapQuery` returns, per GPU, each metric the signal needs plus
 *   gpu_info/gpu_lost (so a GPU without the signal still gets a cell) as
 *   `max by (__name__, hostname, gpu, cluster, rack)` — labels trimmed to what the
 *   cell needs, which keeps the answer small for thousands of GPUs — and the
 *   firing alerts per GPU (series with `alertname` and no `__name__`).
 * - `summaryQuery` returns every stat tile's numbers in one vector, each
 *   series tagged with `stat="<name>"` (and `level` or `severity` where a
 *   tile splits by it).
 * - `worstQuery` picks the K GPUs with the least margin to each limit and
 *   the K with the shortest predicted time to slowdown (the rule pack's
 *   forecast records), and returns for each of them its margins
 *   (`kind="margin"`) and forecasts (`kind="eta"`), each with
 *   `sensor="die"|"memory"`, plus the GPUs whose forecast alert is pending
 *   or firing (`kind="predicted"`, with `alertname` and `alertstate`).
 */
import { withSelector, metricsSelector } from "../../gpu/selector.ts";
import { THROTTLE_REASONS } from "../../gpu/thresholds.ts";
import type { FleetSignal } from "../../gpu/signals.ts";
import { matcher, withMatchers } from "../../core/promql.ts";

/** The forecast alerts of rules/gpumon-forecast.rules.yml. */
export const PREDICTION_ALERTS = ["GpuMemoryTemperatureSlowdownPredicted", "GpuTemperatureSlowdownPredicted"];

/** Labels a heatmap cell needs; everything else is dropped server-side. */
const CELL_LABELS = "hostname, gpu, cluster, rack";

/** Up to this range, range functions read every raw sample. */
const RAW_WINDOW_MAX_SECONDS = 6 * 3600;
/** Beyond it, a subquery with about this many points per series. */
const SUBQUERY_POINTS = 720;

/**
 * The window covering the time range: `[<seconds>s]`, or for ranges over
 * 6 h a subquery `[<seconds>s:<step>s]` (step a whole number of minutes),
 * so a 30-day energy total reads 720 points per GPU instead of every
 * sample, staying far below the server's query.max-samples. The subquery
 * samples instant values, so a GPU seen for less than its step plus the
 * lookback between two points can be missed by "expected".
 */
export function rangeWindow(start: number, end: number): string {
  const range = Math.max(1, Math.round(end - start));
  if (range <= RAW_WINDOW_MAX_SECONDS) return `[${range}s]`;
  const step = Math.max(60, Math.ceil(range / SUBQUERY_POINTS / 60) * 60);
  return `[${range}s:${step}s]`;
}

function tag(expr: string, label: string, value: string): string {
  return `label_replace(${expr}, "${label}", "${value}", "", "")`;
}

export function heatmapQuery(signal: FleetSignal, sel: string): string {
  const metrics = [...signal.metrics, "gpu_info", "gpu_lost"];
  return (
    `max by (__name__, ${CELL_LABELS}) (${metricsSelector(metrics, sel)})` +
    ` or max by (${CELL_LABELS}, alertname, severity) (${withSelector("ALERTS", withMatchers(sel, 'alertstate="firing"'))})`
  );
}

export function summaryQuery(sel: string, start: number, end: number): string {
  const w = rangeWindow(start, end);
  const s = (m: string, ...extra: string[]) => withSelector(m, withMatchers(sel, ...extra));
  const perGpu = (e: string) => `count by (hostname, gpu) (${e})`;
  const allReasons = [...THROTTLE_REASONS.warning, ...THROTTLE_REASONS.critical];
  const throttled = (reasons: readonly string[]) =>
    `count(max by (hostname, gpu) (${s("gpu_clock_event_reason_active", matcher("reason", reasons))}) == 1)`;
  return [
    // GPUs reporting now (the 1 s temperature group) and GPUs seen at all in the range.
    tag(`count(${perGpu(s("gpu_temperature_celsius"))})`, "stat", "gpus_up"),
    tag(`count(${perGpu(`max_over_time(${s("gpu_info")}${w})`)})`, "stat", "gpus_expected"),
    tag(`count(${s("gpu_lost")} == 1)`, "stat", "gpus_lost"),
    tag(`avg(${s("gpu_utilization_ratio")})`, "stat", "utilization"),
    tag(`sum(${s("gpu_power_usage_watts")})`, "stat", "power"),
    tag(`sum(increase(${s("gpu_energy_joules_total")}${w}))`, "stat", "energy"),
    tag(tag(throttled(allReasons), "level", "any"), "stat", "throttling"),
    tag(tag(throttled(THROTTLE_REASONS.critical), "level", "critical"), "stat", "throttling"),
    tag(`count by (severity) (${s("ALERTS", 'alertstate="firing"')})`, "stat", "alerts"),
  ].join(" or ");
}

export function worstQuery(sel: string, k: number): string {
  const s = (m: string) => withSelector(m, sel);
  const parts = {
    margin: {
      die: `(${s("gpu_max_operating_temperature_celsius")} > 0) - ${s("gpu_temperature_celsius")}`,
      memory: `(${s("gpu_memory_max_operating_temperature_celsius")} > 0) - ${s("gpu_memory_temperature_celsius")}`,
    },
    eta: {
      die: s("gpu:temperature:seconds_to_slowdown"),
      memory: s("gpu:memory_temperature:seconds_to_slowdown"),
    },
  };
  // The candidates: the K worst of each ranking (only their hostname and gpu matter).
  const candidates = [parts.margin.die, parts.margin.memory, parts.eta.die, parts.eta.memory]
    .map((e) => `bottomk(${k}, ${e})`)
    .join(" or ");
  // Every number of every candidate (tagged apart so `or` keeps them all),
  // so each row shows both margins and its forecast; the candidates are
  // evaluated once, on the right of one `and`.
  const numbers: string[] = [];
  for (const kind of ["margin", "eta"] as const) {
    for (const sensor of ["die", "memory"] as const) numbers.push(tag(tag(parts[kind][sensor], "sensor", sensor), "kind", kind));
  }
  const out = [`(${numbers.join(" or ")}) and on (hostname, gpu) (${candidates})`];
  const predicted = withSelector("ALERTS", withMatchers(sel, matcher("alertname", PREDICTION_ALERTS)));
  out.push(tag(`max by (hostname, gpu, alertname, alertstate) (${predicted})`, "kind", "predicted"));
  return out.join(" or ");
}
