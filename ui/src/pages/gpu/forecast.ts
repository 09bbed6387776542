/**
 * Forecasts for the GPU page's temperature panels.
 *
 * Contract (pure): `forecastsOf(input)` takes, per GPU, the plotted
 * temperature series (uPlot-aligned values), the GPU's limit, and the
 * rule pack's records at the end of the range when they exist
 * (gpu:*:rise_rate in °C/s, gpu:*:seconds_to_slowdown). The rise rate is the
 * record's; without it, the least-squares slope of the last 10 minutes of
 * the plotted points (what PromQL deriv() computes). A forecast is made only
 * when the trend rises toward the limit: rate > 0, the last reading below
 * the limit, and — as in the forecast alerts' second condition — the level
 * (the highest reading of the last 2 minutes) rose over the last 3 minutes
 * by at least 70 % of what the rate predicts, so a load step that has
 * flattened out gets no forecast (checked when the points reach back that
 * far). The ETA is the record's seconds_to_slowdown when present
 * (the number the forecast alert uses), else (limit - last) / rate.
 */
import type { Forecast } from "../../charts/plugins/forecast.ts";
import { formatCelsius, formatEta } from "../../gpu/format.ts";
import { FORECAST } from "../../gpu/thresholds.ts";

export interface ForecastInput {
  seriesIdx: number;
  gpu: string;
  xs: readonly number[];
  ys: readonly (number | null)[];
  limit: number;
  rate: number | undefined;
  eta: number | undefined;
}

/** Window of the fallback slope, as the rule pack's 10-minute deriv(). */
const FALLBACK_WINDOW_SECONDS = 600;

export function leastSquaresSlope(xs: readonly number[], ys: readonly (number | null)[], from: number): number {
  let n = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i] as number;
    const y = ys[i];
    if (x < from || y === null || y === undefined) continue;
    n++;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  if (n < 3) return NaN;
  const den = n * sxx - sx * sx;
  return den === 0 ? NaN : (n * sxy - sx * sy) / den;
}

function lastPoint(xs: readonly number[], ys: readonly (number | null)[]): { t: number; v: number } | null {
  for (let i = ys.length - 1; i >= 0; i--) {
    const v = ys[i];
    if (v !== null && v !== undefined) return { t: xs[i] as number, v };
  }
  return null;
}

function maxIn(xs: readonly number[], ys: readonly (number | null)[], from: number, to: number): number | null {
  let best: number | null = null;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i] as number;
    const y = ys[i];
    if (x <= from || x > to || y === null || y === undefined) continue;
    if (best === null || y > best) best = y;
  }
  return best;
}

/** The rule pack's "still rising" clause; true when the points do not reach back far enough to tell. */
export function stillRising(xs: readonly number[], ys: readonly (number | null)[], t: number, rate: number): boolean {
  const w = FORECAST.levelWindowSeconds;
  const back = FORECAST.trendCheckSeconds;
  if ((xs[0] ?? t) > t - back - w) return true;
  const now = maxIn(xs, ys, t - w, t);
  const before = maxIn(xs, ys, t - back - w, t - back);
  if (now === null || before === null) return true;
  return now - before >= FORECAST.trendFraction * back * rate;
}

export function forecastsOf(inputs: readonly ForecastInput[], sensorName: string, multiGpu: boolean): Forecast[] {
  const out: Forecast[] = [];
  for (const f of inputs) {
    if (!Number.isFinite(f.limit)) continue;
    const last = lastPoint(f.xs, f.ys);
    if (!last || last.v >= f.limit) continue;
    const rate = f.rate ?? leastSquaresSlope(f.xs, f.ys, last.t - FALLBACK_WINDOW_SECONDS);
    if (!Number.isFinite(rate) || rate <= 0 || !stillRising(f.xs, f.ys, last.t, rate)) continue;
    const eta = f.eta !== undefined && Number.isFinite(f.eta) ? f.eta : (f.limit - last.v) / rate;
    if (!Number.isFinite(eta) || eta <= 0) continue;
    const who = multiGpu ? `GPU ${f.gpu} ` : "";
    out.push({
      seriesIdx: f.seriesIdx,
      gpu: f.gpu,
      t0: last.t,
      v0: last.v,
      limit: f.limit,
      etaSeconds: eta,
      text: `${who}${sensorName} reaches ${formatCelsius(f.limit)} slowdown limit in ${formatEta(eta)}`,
    });
  }
  return out.sort((a, b) => a.etaSeconds - b.etaSeconds);
}
