/**
 * Value formatting by unit, shared by charts, tables and tiles.
 *
 * Contract (pure; unit-tested):
 * - `formatValue(v, unit, digits?)`: null/NaN -> "–"; ±Inf -> "+Inf"/"-Inf";
 *   bytes: binary prefixes (KiB, MiB, GiB, TiB); celsius: "72.5 °C"; watts:
 *   W/kW/MW; joules: J/kJ/MJ/GJ; ratio: 0..1 shown as percent; percent:
 *   already 0..100; seconds: ms/s/min/h/d; hertz: Hz..GHz; none: SI short
 *   suffixes (k, M, G, T) for large numbers.
 * - Digits: 3 significant digits by default (never fewer than the integer
 *   part), trailing zeros removed; celsius and percentages: 1 decimal.
 */

export type Unit = "none" | "bytes" | "celsius" | "watts" | "joules" | "ratio" | "percent" | "seconds" | "hertz";

const DASH = "\u2013";

/** `sig` significant digits (at least the integer part), trailing zeros removed. */
function num(v: number, sig: number): string {
  if (v === 0) return "0";
  const mag = Math.floor(Math.log10(Math.abs(v)));
  return trim(v.toFixed(Math.min(6, Math.max(0, sig - 1 - mag))));
}

/** Exactly at most `d` decimals, trailing zeros removed. */
function fixed(v: number, d: number): string {
  return trim(v.toFixed(d));
}

function trim(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

function scaled(v: number, base: number, suffixes: readonly string[], digits: number, sep = " "): string {
  let i = 0;
  let x = v;
  while (Math.abs(x) >= base && i < suffixes.length - 1) {
    x /= base;
    i++;
  }
  return `${num(x, digits)}${sep}${suffixes[i]}`.trimEnd();
}

export function formatValue(v: number | null | undefined, unit: Unit = "none", digits = 3): string {
  if (v === null || v === undefined || Number.isNaN(v)) return DASH;
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  switch (unit) {
    case "bytes":
      return scaled(v, 1024, ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], digits);
    case "celsius":
      return `${fixed(v, 1)} \u00b0C`;
    case "watts":
      return scaled(v, 1000, ["W", "kW", "MW", "GW"], digits);
    case "joules":
      return scaled(v, 1000, ["J", "kJ", "MJ", "GJ", "TJ"], digits);
    case "hertz":
      return scaled(v, 1000, ["Hz", "kHz", "MHz", "GHz"], digits);
    case "ratio":
      return `${fixed(v * 100, 1)}%`;
    case "percent":
      return `${fixed(v, 1)}%`;
    case "seconds":
      return formatSeconds(v, digits);
    default:
      return Math.abs(v) >= 1000 ? scaled(v, 1000, ["", "k", "M", "G", "T", "P"], digits, "") : num(v, digits);
  }
}

function formatSeconds(v: number, digits: number): string {
  const abs = Math.abs(v);
  if (abs === 0) return "0 s";
  if (abs < 1) return `${num(v * 1000, digits)} ms`;
  if (abs < 60) return `${num(v, digits)} s`;
  if (abs < 3600) return `${num(v / 60, digits)} min`;
  if (abs < 86400) return `${num(v / 3600, digits)} h`;
  return `${num(v / 86400, digits)} d`;
}

const SUFFIX_UNITS: Array<[RegExp, Unit]> = [
  [/_celsius$/, "celsius"],
  [/_watts$/, "watts"],
  [/_joules(_total)?$/, "joules"],
  [/_bytes$/, "bytes"],
  [/_ratio$/, "ratio"],
  [/_seconds$/, "seconds"],
  [/_hertz$/, "hertz"],
  [/^DCGM_FI_DEV_(GPU|MEMORY)_TEMP$/, "celsius"],
  [/^DCGM_FI_DEV_POWER_USAGE$/, "watts"],
];

/** The unit implied by a metric name's Prometheus suffix (`_celsius`, `_bytes`, ...), or "none". */
export function unitForMetric(name: string | undefined): Unit {
  if (!name) return "none";
  for (const [re, unit] of SUFFIX_UNITS) if (re.test(name)) return unit;
  return "none";
}
