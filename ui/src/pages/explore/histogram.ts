/**
 * Turns classic-histogram bucket series into heatmap cells.
 *
 * Contract (pure; unit-tested):
 * - Input: a range-query matrix whose series carry an `le` label (the
 *   `_bucket` series of a histogram, typically `sum by (le) (rate(x_bucket[5m]))`).
 *   Series that differ only in other labels are summed per `le`.
 * - Output: bucket upper bounds sorted ascending (`+Inf` last), the shared
 *   x values, and per time index the count IN each bucket (cumulative count
 *   minus the previous bucket's, clamped at 0; null where no data).
 * - Throws an Error with a user-facing message when no series has `le`.
 */
import { parseSampleValue, type MatrixSeries } from "../../core/api.ts";

export interface HeatmapData {
  /** bucket upper bounds, ascending; Infinity for +Inf */
  bounds: number[];
  /** x values (seconds) */
  xs: number[];
  /** counts[t][b]: observations in bucket b at time index t (null = no data) */
  counts: Array<Array<number | null>>;
  /** max cell value (for colour scaling) */
  max: number;
}

export function bucketsToHeatmap(matrix: MatrixSeries[]): HeatmapData {
  const withLe = matrix.filter((s) => s.metric.le !== undefined);
  if (withLe.length === 0) throw new Error('Heatmap display needs histogram bucket series with an "le" label, e.g. sum by (le) (rate(x_bucket[5m])).');
  const xsSet = new Set<number>();
  for (const s of withLe) for (const [t] of s.values ?? []) xsSet.add(t);
  const xs = [...xsSet].sort((a, b) => a - b);
  const xIndex = new Map(xs.map((t, i) => [t, i]));
  const byLe = new Map<number, Array<number | null>>();
  for (const s of withLe) {
    const le = parseSampleValue(s.metric.le as string);
    if (Number.isNaN(le)) continue;
    const col = byLe.get(le) ?? new Array<number | null>(xs.length).fill(null);
    for (const [t, v] of s.values ?? []) {
      const i = xIndex.get(t);
      const x = parseSampleValue(v);
      if (i === undefined || !Number.isFinite(x)) continue;
      col[i] = (col[i] ?? 0) + x;
    }
    byLe.set(le, col);
  }
  const bounds = [...byLe.keys()].sort((a, b) => a - b);
  const cum = bounds.map((b) => byLe.get(b) as Array<number | null>);
  let max = 0;
  const counts = xs.map((_, t) =>
    bounds.map((_b, bi) => {
      const c = cum[bi]?.[t];
      if (c === null || c === undefined) return null;
      const prev = bi > 0 ? (cum[bi - 1]?.[t] ?? 0) : 0;
      const v = Math.max(0, c - (prev ?? 0));
      if (v > max) max = v;
      return v;
    }),
  );
  return { bounds, xs, counts, max };
}

/** Label of bucket b: its upper bound ("+Inf" for the last open bucket). */
export function boundLabel(b: number): string {
  if (b === Infinity) return "+Inf";
  if (Math.abs(b) >= 1000 || (Math.abs(b) < 0.001 && b !== 0)) return b.toExponential(1);
  return String(Number(b.toPrecision(3)));
}
