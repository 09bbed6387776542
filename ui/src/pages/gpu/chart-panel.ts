/**
 * One chart panel of the GPU page: a core Panel (lazy, one range query)
 * holding a TimeSeriesChart with the page's plugins.
 *
 * Contract: `chartPanel(def, ctx)` returns a Panel whose load runs
 * `def.query` over the page's range at the page's step, and whose render
 * splits plotted from auxiliary series (panels.ts), derives threshold lines
 * from each GPU's last limit value, computes forecasts (forecast.ts), and
 * extends the x range into the future as far as the nearest forecast's
 * crossing (at most half the range) so the forecast line shows; every
 * forecast is listed under the chart as
 * `[data-testid=forecast][data-eta-seconds][data-gpu]`. The chart is
 * kept across refreshes (re-created only when its series or thresholds
 * change) and redraws when the page's overlays (alerts, silences) arrive.
 */
import type uPlot from "uplot";
import { parseSampleValue, rangeQuery, type Labels, type MatrixSeries } from "../../core/api.ts";
import { h } from "../../core/dom.ts";
import { Panel } from "../../core/panel.ts";
import type { TimeRange } from "../../core/time.ts";
import { PALETTE, TimeSeriesChart, alignMatrix, type QueryGrid, type Threshold } from "../../charts/timeseries.ts";
import { alertAnnotations } from "../../charts/plugins/annotations.ts";
import { silencedWindows } from "../../charts/plugins/silences.ts";
import { forecastOverlay, type Forecast } from "../../charts/plugins/forecast.ts";
import { gpuKey } from "../../gpu/series.ts";
import { FORECAST } from "../../gpu/thresholds.ts";
import { forecastsOf, type ForecastInput } from "./forecast.ts";
import type { OverlaySource } from "./overlays.ts";
import type { PanelDef } from "./panels.ts";

export interface ChartContext {
  selector(): string;
  range(): TimeRange;
  step(): number;
  overlays: OverlaySource;
  /** several GPUs in view: series names carry the GPU (and node) */
  multiGpu(): boolean;
  multiNode(): boolean;
}

interface Loaded {
  matrix: MatrixSeries[];
  range: TimeRange;
  step: number;
}

function lastValue(s: MatrixSeries, notBefore: number): number | undefined {
  const values = s.values ?? [];
  for (let i = values.length - 1; i >= 0; i--) {
    const [t, v] = values[i] as [number, string];
    if (t < notBefore) return undefined;
    const x = parseSampleValue(v);
    if (Number.isFinite(x)) return x;
  }
  return undefined;
}

/** A GPU's colour follows its index, so it is the same in every panel. */
function gpuColorIndex(l: Labels, seriesIndex: number): number {
  const n = Number(l["gpu"]);
  return Number.isInteger(n) && n >= 0 ? n : seriesIndex;
}

function keyOf(l: Labels): string {
  return gpuKey(l["hostname"] ?? "", l["gpu"] ?? "");
}

/** Plotted series, and each GPU's auxiliary values (limits, records) at the end of the range. */
function splitSeries(def: PanelDef, data: Loaded): { plotted: MatrixSeries[]; aux: Map<string, Map<string, number>> } {
  const plotted: MatrixSeries[] = [];
  const aux = new Map<string, Map<string, number>>();
  // A record evaluated every 30 s is current if it has a sample in the last two steps (or minutes).
  const freshAfter = data.range.end - Math.max(2 * data.step, 120);
  for (const s of data.matrix) {
    const name = s.metric["__name__"];
    if (def.plot === undefined || (name !== undefined && def.plot.includes(name))) {
      if (def.hideAllZero && !(s.values ?? []).some(([, v]) => parseSampleValue(v) !== 0)) continue;
      plotted.push(s);
    } else if (name !== undefined) {
      const v = lastValue(s, freshAfter);
      if (v === undefined) continue;
      const k = keyOf(s.metric);
      let values = aux.get(k);
      if (!values) aux.set(k, (values = new Map()));
      values.set(name, v);
    }
  }
  return { plotted, aux };
}

/** Threshold lines from the GPUs' own limits (usually one value for all GPUs of a node). */
function thresholdsOf(def: PanelDef, aux: Map<string, Map<string, number>>): Threshold[] {
  const byKey = new Map<string, Threshold>();
  const add = (t: Threshold) => byKey.set(`${t.level}:${t.value}`, t);
  for (const line of def.limits ?? []) {
    for (const values of aux.values()) {
      let limit = values.get(line.metric);
      for (const fallback of line.fallback ?? []) limit ??= values.get(fallback);
      if (limit === undefined || !(limit > 0)) continue;
      add({ value: limit, level: "critical", label: line.label });
      if (line.warningOffset !== undefined) add({ value: limit - line.warningOffset, level: "warning", label: line.label });
      if (line.warningRatio !== undefined) add({ value: limit * line.warningRatio, level: "warning", label: line.label });
    }
  }
  return [...byKey.values()];
}

/** The forecasts of a temperature panel's plotted series (forecast.ts). */
function panelForecasts(def: PanelDef, plotted: MatrixSeries[], aux: Map<string, Map<string, number>>, grid: QueryGrid, multiGpu: boolean): Forecast[] {
  const f = def.forecast;
  if (!f) return [];
  const aligned = alignMatrix(plotted, grid);
  const xs = aligned[0] as number[];
  const inputs: ForecastInput[] = plotted.map((s, i) => {
    const a = aux.get(keyOf(s.metric)) ?? new Map<string, number>();
    return {
      seriesIdx: i + 1,
      gpu: s.metric["gpu"] ?? "",
      xs,
      ys: aligned[i + 1] as (number | null)[],
      limit: a.get(f.limitMetric) ?? NaN,
      rate: a.get(f.rateMetric),
      eta: a.get(f.etaMetric),
    };
  });
  // One GPU: its forecast whatever the horizon. Several: only those the
  // forecast alert would care about, or a node's chart drowns in them.
  return forecastsOf(inputs, f.sensorName, multiGpu).filter((x) => !multiGpu || x.etaSeconds <= FORECAST.warningSecondsToSlowdown);
}

/** The query grid reaching into the future up to the nearest crossing (at most half the range). */
function extendedGrid(grid: QueryGrid, first: Forecast | undefined): QueryGrid {
  if (!first) return grid;
  const reach = Math.min(first.t0 + first.etaSeconds - grid.end, (grid.end - grid.start) / 2);
  const extra = Math.max(grid.step, Math.ceil((reach * 1.1) / grid.step) * grid.step);
  return { ...grid, end: grid.end + extra };
}

export function chartPanel(def: PanelDef, ctx: ChartContext): Panel<Loaded> {
  let chart: TimeSeriesChart | null = null;
  let chartKey = "";
  let forecasts: Forecast[] = [];
  const container = h("div", { class: "gm-chart" });
  const note = h("p", { class: "gm-chart-note" });
  const redraw = () => chart?.uplot?.redraw(false, false);
  ctx.overlays.onChange(redraw);

  const plugins: uPlot.Plugin[] = [
    silencedWindows(() => ctx.overlays.silences),
    alertAnnotations(() => ctx.overlays.alerts),
  ];
  if (def.forecast) plugins.push(forecastOverlay(() => forecasts));

  const render = (body: HTMLElement, data: Loaded) => {
    const { plotted, aux } = splitSeries(def, data);
    const thresholds = thresholdsOf(def, aux);
    const multiGpu = ctx.multiGpu();
    const multiNode = ctx.multiNode();
    const nameOf = (l: Labels) => {
      const own = def.name(l);
      if (!multiGpu || l["gpu"] === undefined) return own;
      const who = multiNode ? `${l["hostname"] ?? ""}/GPU ${l["gpu"]}` : `GPU ${l["gpu"]}`;
      return def.plot?.length === 1 ? who : `${who} ${own}`;
    };
    const queryGrid = { start: data.range.start, end: data.range.end, step: data.step };
    forecasts = panelForecasts(def, plotted, aux, queryGrid, multiGpu);
    const grid = extendedGrid(queryGrid, forecasts[0]);

    const key = `${thresholds.map((t) => `${t.level}${t.value}`).join(",")}|${multiGpu}|${multiNode}`;
    if (!chart || key !== chartKey) {
      chart?.destroy();
      container.replaceChildren();
      chartKey = key;
      chart = new TimeSeriesChart(container, {
        unit: def.unit,
        thresholds,
        plugins,
        height: 220,
        seriesName: (l) => nameOf(l),
        color: def.colorByGpu && multiGpu ? (l, i) => PALETTE[gpuColorIndex(l, i) % PALETTE.length] as string : undefined,
        ...(def.yMin !== undefined ? { yMin: def.yMin } : {}),
        ...(def.yMax !== undefined ? { yMax: def.yMax } : {}),
      });
    }
    note.replaceChildren(
      ...forecasts.map((f) =>
        h("span", { class: "gm-forecast-note", dataset: { testid: "forecast", etaSeconds: Math.round(f.etaSeconds), gpu: f.gpu } }, f.text),
      ),
    );
    if (plotted.length === 0 && def.hideAllZero) note.replaceChildren(h("span", null, "None was active in this time range."));
    body.append(container, note);
    chart.setData(plotted, grid);
  };

  return new Panel<Loaded>({
    id: def.id,
    title: def.title,
    description: def.description,
    className: "gm-gpu-panel",
    emptyText: "No data for this GPU in the time range.",
    isEmpty: (d) => !d.matrix.some((s) => def.plot === undefined || def.plot.includes(s.metric["__name__"] ?? "")),
    load: async (signal) => {
      const range = ctx.range();
      const step = ctx.step();
      const matrix = await rangeQuery(def.query(ctx.selector()), range.start, range.end, step, signal);
      return { matrix, range, step };
    },
    render,
  });
}
