/**
 * Pure helpers turning a Prometheus matrix into chart data.
 *
 * Contract (unit-tested):
 * - `alignMatrix(matrix, grid?)` returns uPlot's aligned data [xs, ...ys].
 *   With a grid ({start, end, step}, seconds) xs is start + k*step for every
 *   k up to end, so a missing sample is null (a gap, never interpolated);
 *   without one, xs is the sorted union of sample times. NaN/Inf samples are
 *   null too.
 * - `seriesNames(matrix)`: the fewest labels that tell the series apart (see
 *   the function comment); one series gets its full `name{labels}` text.
 */
import type uPlot from "uplot";
import { parseSampleValue, type Labels, type MatrixSeries } from "../core/api.ts";

export interface QueryGrid {
  start: number;
  end: number;
  step: number;
}

/** Aligns a matrix to one x array; returns [xs, ...ys] with nulls for missing samples. */
export function alignMatrix(matrix: MatrixSeries[], grid?: QueryGrid): uPlot.AlignedData {
  let xs: number[];
  if (grid && grid.step > 0) {
    xs = [];
    const n = Math.floor((grid.end - grid.start) / grid.step + 1e-9);
    for (let k = 0; k <= n; k++) xs.push(grid.start + k * grid.step);
  } else {
    const set = new Set<number>();
    for (const s of matrix) for (const [t] of s.values ?? []) set.add(t);
    xs = [...set].sort((a, b) => a - b);
  }
  const index = new Map<number, number>();
  xs.forEach((t, i) => index.set(Math.round(t * 1000), i));
  const ys = matrix.map((s) => {
    const col: Array<number | null> = new Array<number | null>(xs.length).fill(null);
    for (const [t, v] of s.values ?? []) {
      let i = index.get(Math.round(t * 1000));
      if (i === undefined && grid && grid.step > 0) i = Math.round((t - grid.start) / grid.step);
      if (i === undefined || i < 0 || i >= xs.length) continue;
      const x = parseSampleValue(v);
      col[i] = Number.isFinite(x) ? x : null;
    }
    return col;
  });
  return [xs, ...ys] as uPlot.AlignedData;
}

/** Labels tried first when naming series: the ones operators recognise. */
const NAME_PRIORITY = ["__name__", "hostname", "Hostname", "instance", "gpu", "job", "cluster"];

/**
 * Default series names: the fewest labels that tell the series apart. Labels
 * are tried in NAME_PRIORITY order, then alphabetically, and one is kept only
 * if it separates series the kept ones do not (so `gpu` is used and `uuid`,
 * `device`, `pci_bus_id`, which vary with it, are left out). One series gets
 * its full `name{labels}` text.
 */
export function seriesNames(matrix: MatrixSeries[]): string[] {
  const full = (m: Labels) => {
    const name = m.__name__ ?? "";
    const rest = Object.keys(m)
      .filter((k) => k !== "__name__")
      .sort()
      .map((k) => `${k}="${m[k]}"`);
    return rest.length ? `${name}{${rest.join(", ")}}` : name || "{}";
  };
  if (matrix.length <= 1) return matrix.map((s) => full(s.metric));
  const keys = new Set<string>();
  for (const s of matrix) for (const k of Object.keys(s.metric)) keys.add(k);
  const order = [...NAME_PRIORITY.filter((k) => keys.has(k)), ...[...keys].filter((k) => !NAME_PRIORITY.includes(k)).sort()];
  const kept: string[] = [];
  let groups = 1;
  for (const k of order) {
    const n = new Set(matrix.map((s) => [...kept, k].map((x) => s.metric[x] ?? "").join("\u0000"))).size;
    if (n > groups) {
      kept.push(k);
      groups = n;
      if (groups === matrix.length) break;
    }
  }
  if (kept.length === 0) return matrix.map((s) => full(s.metric));
  return matrix.map((s) => kept.map((k) => (k === "__name__" ? (s.metric[k] ?? "") : `${k}=${s.metric[k] ?? ""}`)).join(" "));
}

