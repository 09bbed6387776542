/**
 * Text formatting for the GPU views: one function per unit, so a value
 * reads the same in cells, tiles, rows and tooltips (chart axes use the
 * core's charts/format.ts), plus the forecast's "~14 min" and clock times.
 */

export function formatCelsius(v: number): string {
  return Number.isFinite(v) ? `${v.toFixed(v >= 100 ? 0 : 1).replace(/\.0$/, "")} °C` : "–";
}

export function formatPercent(ratio: number): string {
  return Number.isFinite(ratio) ? `${(ratio * 100).toFixed(ratio < 0.1 && ratio > 0 ? 1 : 0)} %` : "–";
}

export function formatWatts(w: number): string {
  if (!Number.isFinite(w)) return "–";
  if (Math.abs(w) >= 1e6) return `${(w / 1e6).toFixed(2)} MW`;
  if (Math.abs(w) >= 1e4) return `${(w / 1e3).toFixed(1)} kW`;
  return `${w.toFixed(0)} W`;
}

/** Energy in joules as Wh/kWh/MWh. */
export function formatJoules(j: number): string {
  if (!Number.isFinite(j)) return "–";
  const wh = j / 3600;
  if (Math.abs(wh) >= 1e6) return `${(wh / 1e6).toFixed(2)} MWh`;
  if (Math.abs(wh) >= 1e3) return `${(wh / 1e3).toFixed(1)} kWh`;
  return `${wh.toFixed(0)} Wh`;
}

/** A duration as people say it: "~14 min", "~2 h 5 min", "~40 s". */
export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds)) return "–";
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `~${s} s`;
  const min = Math.round(s / 60);
  if (min < 90) return `~${min} min`;
  const h = Math.floor(min / 60);
  const rest = min % 60;
  return rest === 0 ? `~${h} h` : `~${h} h ${rest} min`;
}

/** A past time as "12:04:05" (today) or a date and time. */
export function formatClock(ms: number): string {
  const d = new Date(ms);
  const sameDay = new Date().toDateString() === d.toDateString();
  return sameDay ? d.toLocaleTimeString() : d.toLocaleString();
}
