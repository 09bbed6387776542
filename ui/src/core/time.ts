/**
 * Time ranges, relative time expressions, durations and query steps.
 *
 * Contract (pure functions; no DOM access, unit-tested in tests-unit/):
 * - A time expression is what the URL's `from`/`to` hold: `now`, `now-<dur>`
 *   or `now+<dur>` (dur as in `parseDuration`), or an absolute epoch in
 *   MILLISECONDS (Grafana style). `parseTime` returns epoch SECONDS, the unit
 *   of the API and of the charts; it returns NaN for anything else.
 * - A duration is one or more `<int><unit>` with units ms, s, m, h, d, w, y
 *   (Prometheus style, e.g. `1h30m`); `parseDuration` returns seconds or NaN.
 * - `stepFor(start, end, widthPx)` is the query step that gives at most one
 *   point per pixel, rounded UP to a "nice" step (1s, 2s, 5s, 10s, 15s, 30s,
 *   1m, 2m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 6h, 12h, 1d, 2d, 7d...), never below
 *   `minStep` (default 1s). Coarse steps let the server answer from its
 *   downsampled tiers.
 * - `PRESETS` are the time-picker presets, 5m .. 30d, each ending at `now`.
 */

export interface TimeRange {
  /** epoch seconds */
  start: number;
  /** epoch seconds */
  end: number;
}

const UNIT_SECONDS: Record<string, number> = {
  ms: 0.001,
  s: 1,
  m: 60,
  h: 3600,
  d: 86400,
  w: 7 * 86400,
  y: 365 * 86400,
};

/** Parses `1h30m`, `5m`, `250ms`, `2d` into seconds; NaN if malformed. */
export function parseDuration(s: string): number {
  const text = s.trim();
  if (text === "") return NaN;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const unit = UNIT_SECONDS[m[2] as string];
    if (unit === undefined) return NaN;
    total += Number(m[1]) * unit;
    consumed = re.lastIndex;
  }
  return consumed === text.length ? total : NaN;
}

/** Formats seconds as the shortest Prometheus duration (`90` -> `1m30s`). */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return String(seconds);
  if (seconds === 0) return "0s";
  const neg = seconds < 0;
  let rest = Math.abs(seconds);
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= size) {
      const n = Math.floor(rest / size + 1e-9);
      parts.push(`${n}${unit}`);
      rest -= n * size;
    }
  }
  if (rest > 1e-6) parts.push(`${Math.round(rest * 1000)}ms`);
  return (neg ? "-" : "") + parts.join("");
}

/** Epoch seconds for a time expression (see module contract); NaN if invalid. */
export function parseTime(expr: string, nowMs: number): number {
  const s = expr.trim();
  if (s === "now") return nowMs / 1000;
  const rel = /^now([+-])(.+)$/.exec(s);
  if (rel) {
    const d = parseDuration(rel[2] as string);
    if (Number.isNaN(d)) return NaN;
    return nowMs / 1000 + (rel[1] === "-" ? -d : d);
  }
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) / 1000;
  return NaN;
}

/** True for `now`, `now-1h` and friends. */
export function isRelative(expr: string): boolean {
  return /^now([+-]|$)/.test(expr.trim());
}

/**
 * Resolves a from/to pair to seconds. Invalid expressions fall back to the
 * default range (last hour); an inverted range is swapped.
 */
export function resolveRange(from: string, to: string, nowMs: number): TimeRange {
  let start = parseTime(from, nowMs);
  let end = parseTime(to, nowMs);
  if (Number.isNaN(end)) end = nowMs / 1000;
  if (Number.isNaN(start)) start = end - 3600;
  if (start > end) [start, end] = [end, start];
  if (start === end) start = end - 1;
  return { start, end };
}

export interface Preset {
  from: string;
  to: string;
  label: string;
}

export const PRESETS: readonly Preset[] = [
  ["5m", "Last 5 minutes"],
  ["15m", "Last 15 minutes"],
  ["30m", "Last 30 minutes"],
  ["1h", "Last 1 hour"],
  ["3h", "Last 3 hours"],
  ["6h", "Last 6 hours"],
  ["12h", "Last 12 hours"],
  ["24h", "Last 24 hours"],
  ["2d", "Last 2 days"],
  ["7d", "Last 7 days"],
  ["30d", "Last 30 days"],
].map(([d, label]) => ({ from: `now-${d}`, to: "now", label: label as string }));

/** Human label for a range: the preset's name, or `from to to` in local time. */
export function rangeLabel(from: string, to: string, nowMs: number): string {
  const preset = PRESETS.find((p) => p.from === from && p.to === to);
  if (preset) return preset.label;
  if (to === "now" && isRelative(from)) return `Last ${from.slice(4)}`;
  const r = resolveRange(from, to, nowMs);
  return `${formatTimestamp(r.start)} to ${formatTimestamp(r.end)}`;
}

/** `YYYY-MM-DD HH:MM:SS` in local time for epoch seconds. */
export function formatTimestamp(sec: number): string {
  const d = new Date(sec * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Parses `YYYY-MM-DD HH:MM[:SS]` (local time), a time expression, or epoch ms; NaN if none. */
export function parseUserTime(text: string, nowMs: number): number {
  const t = parseTime(text, nowMs);
  if (!Number.isNaN(t)) return t;
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
  if (!m) return NaN;
  const [, y, mo, d, hh, mm, ss] = m;
  return new Date(Number(y), Number(mo) - 1, Number(d), Number(hh), Number(mm), Number(ss ?? 0)).getTime() / 1000;
}

const NICE_STEPS = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 2 * 86400,
  7 * 86400, 30 * 86400,
];

/** Smallest nice step >= `seconds` (multiples of 30d beyond the table). */
export function niceStep(seconds: number): number {
  for (const s of NICE_STEPS) if (s >= seconds) return s;
  const month = 30 * 86400;
  return Math.ceil(seconds / month) * month;
}

/** Query step for a range drawn over `widthPx` pixels (module contract). */
export function stepFor(start: number, end: number, widthPx: number, minStep = 1): number {
  const width = Math.max(1, Math.floor(widthPx));
  const raw = Math.max(0, end - start) / width;
  return Math.max(niceStep(Math.max(raw, 1)), niceStep(Math.max(minStep, 1)));
}

/**
 * The range twice as long around the same centre (Grafana's zoom out). A range
 * ending at `now` stays relative (`now-2h`); otherwise absolute epoch ms.
 */
export function zoomOut(from: string, to: string, nowMs: number, factor = 2): { from: string; to: string } {
  const r = resolveRange(from, to, nowMs);
  const span = r.end - r.start;
  if (to.trim() === "now") return { from: `now-${formatDuration(Math.round(span * factor))}`, to: "now" };
  const centre = (r.start + r.end) / 2;
  let end = centre + (span * factor) / 2;
  let start = centre - (span * factor) / 2;
  const now = nowMs / 1000;
  if (end > now) {
    start -= end - now;
    end = now;
  }
  return { from: String(Math.round(start * 1000)), to: String(Math.round(end * 1000)) };
}

/** Absolute from/to (epoch ms strings) for a range in seconds, e.g. after a drag-zoom. */
export function absoluteRange(startSec: number, endSec: number): { from: string; to: string } {
  return { from: String(Math.round(startSec * 1000)), to: String(Math.round(endSec * 1000)) };
}

/** "3s ago", "5m ago", "in 2h" for an epoch-seconds instant relative to now. */
export function formatAgo(sec: number, nowMs: number): string {
  if (!Number.isFinite(sec)) return "never";
  const d = nowMs / 1000 - sec;
  const abs = Math.abs(d);
  const text =
    abs < 1 ? "0s" : abs < 60 ? `${Math.round(abs)}s` : abs < 3600 ? `${Math.round(abs / 60)}m` : abs < 86400 ? `${Math.round(abs / 3600)}h` : `${Math.round(abs / 86400)}d`;
  return d >= 0 ? `${text} ago` : `in ${text}`;
}

/** Epoch seconds of an RFC 3339 timestamp from the API; NaN for the zero time or garbage. */
export function parseRfc3339(s: string | undefined | null): number {
  if (!s || s.startsWith("0001-01-01")) return NaN;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? NaN : ms / 1000;
}
