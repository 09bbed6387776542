/**
 * Time-series chart: a thin wrapper around uPlot for Prometheus matrices.
 *
 * Contract:
 * - `new TimeSeriesChart(container, opts)` draws into `container` (an empty
 *   element whose width it follows with a ResizeObserver).
 * - `setData(matrix, grid?)`: one uPlot series per matrix series. With a
 *   `grid` ({start, end, step}, seconds) the x values are the query's grid
 *   start + k*step, so a missing sample is a null and is drawn as a GAP (never
 *   interpolated); without a grid they are the union of sample times.
 *   NaN samples are gaps too. The uPlot instance is re-created only when the
 *   set of series changes; otherwise its data is replaced.
 * - Options: `unit` formats the y axis and legend (charts/format.ts);
 *   `thresholds` draw dashed horizontal lines in the theme's warning/critical
 *   colours and are kept inside the y range; `stacked` stacks series (legend
 *   shows the series' own values); `onZoom(startSec, endSec)` is called when
 *   the user drags over a time span (default: the time picker's zoomTo, i.e.
 *   the URL's from/to; `null` disables drag-zoom); `plugins` are passed to
 *   uPlot unchanged (annotations, forecasts); `seriesName(labels)` names
 *   series (default: the fewest labels that tell series apart, matrix.ts).
 * - CSP: uPlot only sets styles through the CSSOM; no inline style strings.
 */
import uPlot from "uplot";
import type { Labels, MatrixSeries } from "../core/api.ts";
import { zoomTo } from "../core/timepicker.ts";
import { formatValue, type Unit } from "./format.ts";
import { alignMatrix, seriesNames, type QueryGrid } from "./matrix.ts";

export { formatValue, unitForMetric, type Unit } from "./format.ts";
export { alignMatrix, seriesNames, type QueryGrid } from "./matrix.ts";

export interface Threshold {
  value: number;
  level: "warning" | "critical";
  label?: string;
}

export interface TimeSeriesOptions {
  unit?: Unit;
  /** plot height in px (legend excluded); default 220 */
  height?: number;
  stacked?: boolean;
  thresholds?: Threshold[];
  /** drag-zoom callback; default zoomTo; null disables */
  onZoom?: ((startSec: number, endSec: number) => void) | null;
  plugins?: uPlot.Plugin[];
  seriesName?: (labels: Labels, index: number) => string;
  /** series colour; default: the theme palette by index */
  color?: (labels: Labels, index: number) => string;
  yMin?: number;
  yMax?: number;
  /** show the legend table; default true */
  legend?: boolean;
  /** fill under lines (non-stacked); default false */
  fill?: boolean;
}

export const PALETTE = [
  "#73bf69",
  "#f2cc0c",
  "#8ab8ff",
  "#ff780a",
  "#f2495c",
  "#5794f2",
  "#b877d9",
  "#fade2a",
  "#37872d",
  "#ca95e5",
  "#ff9830",
  "#96d98d",
  "#ffb357",
  "#c4162a",
  "#1f60c4",
  "#8f3bb8",
];

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

function stack(ys: Array<Array<number | null>>): Array<Array<number | null>> {
  const out: Array<Array<number | null>> = [];
  let acc: number[] = [];
  ys.forEach((col, si) => {
    if (si === 0) acc = col.map((v) => v ?? 0);
    else acc = acc.map((a, i) => a + (col[i] ?? 0));
    out.push(col.map((v, i) => (v === null ? null : (acc[i] as number))));
  });
  return out;
}

function thresholdPlugin(thresholds: Threshold[]): uPlot.Plugin {
  return {
    hooks: {
      draw: (u: uPlot) => {
        const ctx = u.ctx;
        const { left, width, top, height } = u.bbox;
        ctx.save();
        ctx.lineWidth = Math.max(1, devicePixelRatio);
        ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
        for (const t of thresholds) {
          const y = u.valToPos(t.value, "y", true);
          if (y < top || y > top + height) continue;
          ctx.strokeStyle = t.level === "critical" ? cssVar("--critical", "#f85149") : cssVar("--warning", "#d29922");
          ctx.beginPath();
          ctx.moveTo(left, Math.round(y) + 0.5);
          ctx.lineTo(left + width, Math.round(y) + 0.5);
          ctx.stroke();
        }
        ctx.restore();
      },
    },
  };
}

/** uPlot plugin: a horizontal drag selection calls onZoom(startSec, endSec); needs cursor.drag.x. */
export function dragZoomPlugin(onZoom: (a: number, b: number) => void): uPlot.Plugin {
  return {
    hooks: {
      setSelect: (u: uPlot) => {
        const sel = u.select;
        if (sel.width < 3) return;
        const a = u.posToVal(sel.left, "x");
        const b = u.posToVal(sel.left + sel.width, "x");
        u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        if (b > a) onZoom(a, b);
      },
    },
  };
}

export class TimeSeriesChart {
  private u: uPlot | null = null;
  private readonly opts: TimeSeriesOptions;
  private readonly container: HTMLElement;
  private readonly resize: ResizeObserver;
  private key = "";
  private raw: Array<Array<number | null>> = [];
  private names: string[] = [];

  constructor(container: HTMLElement, opts: TimeSeriesOptions = {}) {
    this.container = container;
    this.opts = opts;
    container.classList.add("ts-chart");
    this.resize = new ResizeObserver(() => {
      const w = this.width();
      if (this.u && w > 0 && Math.abs(this.u.width - w) >= 1) this.u.setSize({ width: w, height: this.height() });
    });
    this.resize.observe(container);
  }

  /** The uPlot instance (null before the first setData). */
  get uplot(): uPlot | null {
    return this.u;
  }

  /** Series names as shown in the legend. */
  get seriesLabels(): readonly string[] {
    return this.names;
  }

  private width(): number {
    return Math.floor(this.container.clientWidth || this.container.getBoundingClientRect().width || 600);
  }

  private height(): number {
    return this.opts.height ?? 220;
  }

  setData(matrix: MatrixSeries[], grid?: QueryGrid): void {
    const aligned = alignMatrix(matrix, grid);
    const xs = aligned[0] as number[];
    this.raw = aligned.slice(1) as Array<Array<number | null>>;
    this.names = this.opts.seriesName
      ? matrix.map((s, i) => (this.opts.seriesName as (l: Labels, i: number) => string)(s.metric, i))
      : seriesNames(matrix);
    const ys = this.opts.stacked ? stack(this.raw) : this.raw;
    const data = [xs, ...ys] as uPlot.AlignedData;
    const key = `${this.opts.stacked ? "s" : "l"}|${this.names.join("\u0000")}`;
    if (this.u && key === this.key) {
      this.u.setData(data);
      if (grid) this.u.setScale("x", { min: grid.start, max: grid.end });
      return;
    }
    this.key = key;
    this.u?.destroy();
    this.u = new uPlot(this.buildOptions(matrix, grid), data, this.container);
  }

  destroy(): void {
    this.resize.disconnect();
    this.u?.destroy();
    this.u = null;
  }

  private buildOptions(matrix: MatrixSeries[], grid?: QueryGrid): uPlot.Options {
    const o = this.opts;
    const unit = o.unit ?? "none";
    const axisColor = cssVar("--text-muted", "#8b949e");
    const gridColor = cssVar("--grid", "rgba(240,246,252,0.08)");
    const raw = () => this.raw;
    const series: uPlot.Series[] = [
      {},
      ...matrix.map((s, i): uPlot.Series => {
        const color = o.color ? o.color(s.metric, i) : (PALETTE[i % PALETTE.length] as string);
        return {
          label: this.names[i] ?? `series ${i}`,
          stroke: color,
          width: 1.5,
          fill: o.stacked || o.fill ? `${color}40` : undefined,
          spanGaps: false,
          points: { show: false },
          value: (_u, _v, si, idx) => (idx === null ? "" : formatValue(raw()[si - 1]?.[idx] ?? null, unit)),
        };
      }),
    ];
    const bands: uPlot.Band[] = [];
    if (o.stacked) for (let i = matrix.length; i > 1; i--) bands.push({ series: [i, i - 1] });
    const thresholds = o.thresholds ?? [];
    const plugins: uPlot.Plugin[] = [];
    if (thresholds.length) plugins.push(thresholdPlugin(thresholds));
    const onZoom = o.onZoom === undefined ? zoomTo : o.onZoom;
    if (onZoom) plugins.push(dragZoomPlugin(onZoom));
    plugins.push(...(o.plugins ?? []));
    return {
      width: this.width(),
      height: this.height(),
      series,
      bands,
      plugins,
      legend: { show: o.legend !== false, live: true },
      cursor: { drag: { x: onZoom !== null, y: false, setScale: false }, focus: { prox: 16 } },
      focus: { alpha: 0.4 },
      scales: {
        x: { time: true, ...(grid ? { min: grid.start, max: grid.end } : {}) },
        y: {
          range: (_u, min, max) => {
            let lo = o.yMin ?? min;
            let hi = o.yMax ?? max;
            for (const t of thresholds) {
              if (o.yMax === undefined) hi = Math.max(hi, t.value);
              if (o.yMin === undefined) lo = Math.min(lo, t.value);
            }
            if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
            if (lo === hi) return [lo - 1, hi + 1];
            const pad = (hi - lo) * 0.05;
            return [o.yMin ?? (lo >= 0 && lo - pad < 0 ? 0 : lo - pad), o.yMax ?? hi + pad];
          },
        },
      },
      axes: [
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor, width: 1 } },
        {
          stroke: axisColor,
          grid: { stroke: gridColor, width: 1 },
          ticks: { stroke: gridColor, width: 1 },
          size: 64,
          values: (_u, splits) => splits.map((v) => formatValue(v, unit)),
        },
      ],
    };
  }
}
