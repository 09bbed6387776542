/**
 * Histogram heatmap drawn by uPlot: uPlot provides the time axis, the bucket
 * axis and the cursor; the cells are painted in a `draw` hook on uPlot's
 * canvas (no separate chart library).
 *
 * Contract: `renderHeatmap(container, data)` draws one cell per (time, bucket)
 * coloured by count on a dark-to-hot scale (sqrt-scaled so small counts stay
 * visible), an empty bucket transparent; returns a destroy function. The
 * y axis shows bucket upper bounds (`le`); hovering shows the cell's time,
 * bucket range and value below the chart.
 */
import uPlot from "uplot";
import { h } from "../../core/dom.ts";
import { formatTimestamp } from "../../core/time.ts";
import { zoomTo } from "../../core/timepicker.ts";
import { dragZoomPlugin, formatValue } from "../../charts/timeseries.ts";
import { boundLabel, type HeatmapData } from "./histogram.ts";

const STOPS: Array<[number, [number, number, number]]> = [
  [0, [13, 26, 43]],
  [0.25, [31, 78, 121]],
  [0.5, [46, 139, 87]],
  [0.75, [212, 193, 58]],
  [1, [248, 81, 73]],
];

function colorFor(f: number): string {
  const x = Math.min(1, Math.max(0, f));
  for (let i = 1; i < STOPS.length; i++) {
    const [p1, c1] = STOPS[i] as [number, [number, number, number]];
    const [p0, c0] = STOPS[i - 1] as [number, [number, number, number]];
    if (x <= p1) {
      const t = (x - p0) / (p1 - p0);
      const c = c0.map((v, k) => Math.round(v + ((c1[k] as number) - v) * t));
      return `rgb(${c[0]},${c[1]},${c[2]})`;
    }
  }
  return "rgb(248,81,73)";
}

export function renderHeatmap(container: HTMLElement, data: HeatmapData, xRange?: { start: number; end: number }, height = 300): () => void {
  const n = data.bounds.length;
  const xs = data.xs;
  const step = xs.length > 1 ? (xs[xs.length - 1]! - xs[0]!) / (xs.length - 1) : 60;
  const drawCells = (u: uPlot) => {
    const ctx = u.ctx;
    const { left, top, width, height: hgt } = u.bbox;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, hgt);
    ctx.clip();
    const scale = data.max > 0 ? 1 / Math.sqrt(data.max) : 0;
    for (let t = 0; t < xs.length; t++) {
      const x0 = u.valToPos(xs[t]! - step / 2, "x", true);
      const x1 = u.valToPos(xs[t]! + step / 2, "x", true);
      const row = data.counts[t] ?? [];
      for (let b = 0; b < n; b++) {
        const v = row[b];
        if (v === null || v === undefined || v <= 0) continue;
        const y0 = u.valToPos(b + 1, "y", true);
        const y1 = u.valToPos(b, "y", true);
        ctx.fillStyle = colorFor(Math.sqrt(v) * scale);
        ctx.fillRect(Math.floor(x0), Math.floor(y0), Math.max(1, Math.ceil(x1 - x0)), Math.max(1, Math.ceil(y1 - y0) - 1));
      }
    }
    ctx.restore();
  };
  const chartEl = h("div", { class: "heatmap-chart" });
  const readout = h("span", { class: "heatmap-readout", "data-testid": "histogram-heatmap-readout" });
  const legend = h(
    "div",
    { class: "heatmap-legend", "data-testid": "histogram-heatmap-legend" },
    "0",
    h("span", { class: "heatmap-scale" }),
    formatValue(data.max),
    h("span", null, " per bucket (sqrt scale)"),
    readout,
  );
  // hover readout: the cell under the cursor (uPlot gives the time index; the bucket is the y position)
  const showCell = (u: uPlot) => {
    const idx = u.cursor.idx;
    const top = u.cursor.top ?? -1;
    if (idx === null || idx === undefined || top < 0) {
      readout.textContent = "";
      return;
    }
    const b = Math.floor(u.posToVal(top, "y"));
    const v = data.counts[idx]?.[b];
    const lo = b > 0 ? boundLabel(data.bounds[b - 1] ?? NaN) : "-Inf";
    readout.textContent =
      b >= 0 && b < n ? `${formatTimestamp(xs[idx] ?? NaN)}  (${lo}, ${boundLabel(data.bounds[b] ?? NaN)}]: ${v === null || v === undefined ? "no data" : formatValue(v)}` : "";
  };
  container.append(h("div", { "data-testid": "histogram-heatmap", "data-buckets": n }, chartEl, legend));
  const width = () => Math.floor(container.clientWidth || 600);
  const u = new uPlot(
    {
      width: width(),
      height,
      legend: { show: false },
      cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
      plugins: [dragZoomPlugin(zoomTo)],
      scales: { x: { time: true, ...(xRange ? { range: [xRange.start, xRange.end] as uPlot.Range.MinMax } : {}) }, y: { auto: false, range: [0, n] } },
      series: [{}, { label: "buckets", stroke: "transparent", points: { show: false } }],
      axes: [
        { stroke: "#8b98a8", grid: { stroke: "rgba(215,222,231,0.06)" } },
        {
          stroke: "#8b98a8",
          grid: { show: false },
          size: 70,
          splits: () => Array.from({ length: n }, (_, i) => i + 0.5),
          values: (_u, splits) => splits.map((s) => `le ${boundLabel(data.bounds[Math.floor(s)] ?? NaN)}`),
        },
      ],
      hooks: { draw: [drawCells], setCursor: [showCell] },
    },
    [xs, xs.map(() => null)] as uPlot.AlignedData,
    chartEl,
  );
  const ro = new ResizeObserver(() => {
    const w = width();
    if (w > 0 && w !== u.width) u.setSize({ width: w, height });
  });
  ro.observe(container);
  return () => {
    ro.disconnect();
    u.destroy();
  };
}
