/**
 * The worst GPUs list: the GPUs closest to a temperature limit, worst first.
 *
 * Contract: `rankWorst` folds the worst query (queries.ts `worstQuery`) into
 * one entry per GPU and sorts them: by level (critical, warning, ok — from
 * the margins against the rule-pack thresholds, and a firing forecast alert
 * counting as warning), then GPUs whose forecast alert fires, then those
 * where it is pending, then the shortest predicted time to slowdown, then
 * the smallest margin beyond its warning margin. A predicted time counts
 * (and is shown) only while the GPU's forecast alert is pending or firing:
 * the seconds_to_slowdown record alone also rises after every load step
 * (a job starting), which the alert's other conditions rule out. `renderWorst` draws
 * `[data-testid=worst-gpus]` with one `[data-testid=gpu-row]` per GPU
 * (`data-node`, `data-gpu`, `data-level`, and `data-eta-seconds` when a
 * forecast exists), each linking to the GPU page.
 */
import { h } from "../../core/dom.ts";
import { parseSampleValue, type VectorSample } from "../../core/api.ts";
import { hrefFor } from "../../core/router.ts";
import { type Level, levelOfMargin, levelRank, worstLevel } from "../../gpu/levels.ts";
import { DIE_TEMPERATURE, FORECAST, MEMORY_TEMPERATURE } from "../../gpu/thresholds.ts";
import { formatCelsius, formatEta } from "../../gpu/format.ts";
import { compareGpuIndex, compareNode, gpuKey } from "../../gpu/series.ts";

type Sensor = "die" | "memory";

export interface WorstGpu {
  node: string;
  gpu: string;
  margin: Partial<Record<Sensor, number>>;
  eta: Partial<Record<Sensor, number>>;
  /** Forecast alerts of the GPU that are pending or firing. */
  predicted: { alertname: string; firing: boolean }[];
  level: Level;
}

const WARNING_MARGIN: Record<Sensor, number> = {
  die: DIE_TEMPERATURE.warningMarginCelsius,
  memory: MEMORY_TEMPERATURE.warningMarginCelsius,
};
const CRITICAL_MARGIN: Record<Sensor, number> = {
  die: DIE_TEMPERATURE.criticalMarginCelsius,
  memory: MEMORY_TEMPERATURE.criticalMarginCelsius,
};
const SENSOR_NAME: Record<Sensor, string> = { die: "Die", memory: "HBM" };

function isSensor(s: string | undefined): s is Sensor {
  return s === "die" || s === "memory";
}

/** Degrees past the warning margin (negative = inside it): comparable across sensors. */
function headroom(g: WorstGpu): number {
  let best = Infinity;
  for (const sensor of ["die", "memory"] as const) {
    const m = g.margin[sensor];
    if (m !== undefined) best = Math.min(best, m - WARNING_MARGIN[sensor]);
  }
  return best;
}

/** The shortest forecast under the horizon while a forecast alert is active, or Infinity. */
export function soonestEta(g: WorstGpu): { seconds: number; sensor: Sensor | null } {
  let out = { seconds: Infinity, sensor: null as Sensor | null };
  if (g.predicted.length === 0) return out;
  for (const sensor of ["die", "memory"] as const) {
    const e = g.eta[sensor];
    if (e !== undefined && e < out.seconds) out = { seconds: e, sensor };
  }
  return out.seconds < FORECAST.warningSecondsToSlowdown ? out : { seconds: Infinity, sensor: null };
}

/** 2: a forecast alert fires, 1: one is pending, 0: none. */
function predictedRank(g: WorstGpu): number {
  if (g.predicted.some((p) => p.firing)) return 2;
  return g.predicted.length > 0 ? 1 : 0;
}

export function rankWorst(samples: readonly VectorSample[]): WorstGpu[] {
  const byKey = new Map<string, WorstGpu>();
  for (const s of samples) {
    const node = s.metric["hostname"];
    const gpu = s.metric["gpu"];
    if (node === undefined || gpu === undefined || !s.value) continue;
    const key = gpuKey(node, gpu);
    let g = byKey.get(key);
    if (!g) {
      g = { node, gpu, margin: {}, eta: {}, predicted: [], level: "ok" };
      byKey.set(key, g);
    }
    const v = parseSampleValue(s.value[1]);
    const sensor = s.metric["sensor"];
    const kind = s.metric["kind"];
    if (kind === "margin" && isSensor(sensor) && Number.isFinite(v)) g.margin[sensor] = v;
    else if (kind === "eta" && isSensor(sensor) && Number.isFinite(v)) g.eta[sensor] = v;
    else if (kind === "predicted") g.predicted.push({ alertname: s.metric["alertname"] ?? "forecast", firing: s.metric["alertstate"] === "firing" });
  }
  const list = [...byKey.values()];
  for (const g of list) {
    let level: Level = "ok";
    for (const sensor of ["die", "memory"] as const) {
      const m = g.margin[sensor];
      if (m !== undefined) level = worstLevel(level, levelOfMargin(m, WARNING_MARGIN[sensor], CRITICAL_MARGIN[sensor]));
    }
    if (g.predicted.some((p) => p.firing)) level = worstLevel(level, "warning");
    g.level = level;
  }
  list.sort(
    (a, b) =>
      levelRank(b.level) - levelRank(a.level) ||
      predictedRank(b) - predictedRank(a) ||
      soonestEta(a).seconds - soonestEta(b).seconds ||
      headroom(a) - headroom(b) ||
      compareNode(a.node, b.node) ||
      compareGpuIndex(a.gpu, b.gpu),
  );
  return list;
}

function marginText(g: WorstGpu): string {
  const parts: string[] = [];
  for (const sensor of ["memory", "die"] as const) {
    const m = g.margin[sensor];
    if (m === undefined) continue;
    parts.push(
      m > 0 ? `${SENSOR_NAME[sensor]} ${formatCelsius(m)} below limit` : `${SENSOR_NAME[sensor]} ${formatCelsius(-m)} over limit`,
    );
  }
  return parts.join(" · ");
}

export function renderWorst(body: HTMLElement, list: readonly WorstGpu[], limit: number): void {
  body.appendChild(
    h(
      "ol",
      { class: "gm-worst", dataset: { testid: "worst-gpus" } },
      list.slice(0, limit).map((g) => {
        const eta = soonestEta(g);
        return h(
          "li",
          {
            class: "gm-worst-row",
            dataset: {
              testid: "gpu-row",
              node: g.node,
              gpu: g.gpu,
              level: g.level,
              etaSeconds: Number.isFinite(eta.seconds) ? Math.round(eta.seconds) : null,
            },
          },
          h("span", { class: "gm-level-dot", dataset: { level: g.level } }),
          h("a", { class: "gm-worst-gpu", href: hrefFor("gpu", {}, { vars: { node: [g.node], gpu: [g.gpu] } }) }, `${g.node} · GPU ${g.gpu}`),
          h("span", { class: "gm-worst-margin" }, marginText(g)),
          eta.sensor !== null
            ? h(
                "span",
                { class: "gm-worst-eta", title: "Predicted by the rule pack's forecast (gpu:*:seconds_to_slowdown)" },
                eta.seconds <= 0 ? `${SENSOR_NAME[eta.sensor]} at its slowdown limit` : `${SENSOR_NAME[eta.sensor]} reaches slowdown limit in ${formatEta(eta.seconds)}`,
              )
            : null,
          g.predicted.length > 0
            ? h("span", { class: "gm-worst-alert" }, g.predicted.map((p) => `${p.alertname} (${p.firing ? "firing" : "pending"})`).join(", "))
            : null,
        );
      }),
    ),
  );
}
