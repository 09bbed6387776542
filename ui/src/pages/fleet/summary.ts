/**
 * The Fleet page's stat tiles, read from the one summary query
 * (queries.ts `summaryQuery`).
 *
 * Contract: `readSummary` turns the tagged vector into numbers; counts that
 * have no series are 0 (PromQL's count() of nothing is nothing), averages and
 * sums without series are NaN ("no data"). `renderTiles` draws one
 * `[data-testid=stat-<name>][data-level]` per tile: gpus, utilization, power,
 * energy, throttling, alerts. Levels follow the rule pack: a lost GPU is
 * critical (GpuLost) and fewer GPUs than seen in the range a warning
 * (GpuMissingFromNode); hardware slowdowns and the power brake are critical
 * and software thermal slowdown a warning (GpuThermalSlowdown,
 * GpuPowerBrakeSlowdown, GpuHardwareSlowdown); the alerts tile takes the
 * worst severity firing. Utilisation, power and energy have no thresholds.
 */
import { h } from "../../core/dom.ts";
import { parseSampleValue, type VectorSample } from "../../core/api.ts";
import { hrefFor } from "../../core/router.ts";
import { type Level, levelOfSeverity, worstLevel } from "../../gpu/levels.ts";
import { formatJoules, formatPercent, formatWatts } from "../../gpu/format.ts";

export interface Summary {
  gpusUp: number;
  gpusExpected: number;
  gpusLost: number;
  utilization: number;
  power: number;
  energy: number;
  throttling: number;
  throttlingHard: number;
  alertsBySeverity: Map<string, number>;
}

export function readSummary(samples: readonly VectorSample[]): Summary {
  const out: Summary = {
    gpusUp: 0,
    gpusExpected: 0,
    gpusLost: 0,
    utilization: NaN,
    power: NaN,
    energy: NaN,
    throttling: 0,
    throttlingHard: 0,
    alertsBySeverity: new Map(),
  };
  for (const s of samples) {
    const v = s.value ? parseSampleValue(s.value[1]) : NaN;
    switch (s.metric["stat"]) {
      case "gpus_up": out.gpusUp = v; break;
      case "gpus_expected": out.gpusExpected = v; break;
      case "gpus_lost": out.gpusLost = v; break;
      case "utilization": out.utilization = v; break;
      case "power": out.power = v; break;
      case "energy": out.energy = v; break;
      case "throttling":
        if (s.metric["level"] === "critical") out.throttlingHard = v;
        else out.throttling = v;
        break;
      case "alerts": out.alertsBySeverity.set(s.metric["severity"] ?? "none", v); break;
    }
  }
  return out;
}

interface Tile {
  name: string;
  label: string;
  value: string;
  sub: string;
  level: Level;
  href?: string;
  title?: string;
}

function gpusTile(s: Summary): Tile {
  const expected = Math.max(s.gpusExpected, s.gpusUp);
  let level: Level = expected === 0 ? "nodata" : "ok";
  if (s.gpusUp < expected) level = "warning";
  if (s.gpusLost > 0) level = "critical";
  const missing = expected - s.gpusUp;
  return {
    name: "gpus",
    label: "GPUs up",
    value: `${s.gpusUp} / ${expected}`,
    sub: s.gpusLost > 0 ? `${s.gpusLost} lost` : missing > 0 ? `${missing} not reporting` : "all reporting",
    level,
    title: "GPUs reporting now / GPUs seen in the time range (gpu_info)",
  };
}

function throttlingTile(s: Summary): Tile {
  const level: Level = s.throttlingHard > 0 ? "critical" : s.throttling > 0 ? "warning" : "ok";
  return {
    name: "throttling",
    label: "GPUs throttling",
    value: String(s.throttling),
    sub: s.throttlingHard > 0 ? `${s.throttlingHard} in hardware slowdown` : "thermal or power slowdown",
    level,
    title: "GPUs with an active thermal slowdown, hardware slowdown or power brake clock event reason",
  };
}

function alertsTile(s: Summary): Tile {
  let total = 0;
  let level: Level = "ok";
  const parts: string[] = [];
  for (const sev of ["critical", "warning", "info", "none"]) {
    const n = s.alertsBySeverity.get(sev) ?? 0;
    if (n === 0) continue;
    total += n;
    level = worstLevel(level, levelOfSeverity(sev));
    parts.push(`${n} ${sev}`);
  }
  for (const [sev, n] of s.alertsBySeverity) {
    if (!["critical", "warning", "info", "none"].includes(sev)) {
      total += n;
      parts.push(`${n} ${sev}`);
    }
  }
  return {
    name: "alerts",
    label: "Firing alerts",
    value: String(total),
    sub: parts.length > 0 ? parts.join(", ") : "none",
    level,
    href: hrefFor("alerts"),
  };
}

export function tilesOf(s: Summary, rangeText: string): Tile[] {
  const plain = (v: number): Level => (Number.isFinite(v) ? "ok" : "nodata");
  return [
    gpusTile(s),
    { name: "utilization", label: "Mean utilisation", value: formatPercent(s.utilization), sub: "now", level: plain(s.utilization) },
    { name: "power", label: "Total power", value: formatWatts(s.power), sub: "now", level: plain(s.power) },
    { name: "energy", label: "Energy", value: formatJoules(s.energy), sub: `over ${rangeText}`, level: plain(s.energy) },
    throttlingTile(s),
    alertsTile(s),
  ];
}

export function renderTiles(body: HTMLElement, tiles: readonly Tile[]): void {
  body.appendChild(
    h(
      "div",
      { class: "gm-tiles" },
      tiles.map((t) =>
        h(
          t.href ? "a" : "div",
          {
            class: "gm-tile",
            href: t.href ?? null,
            title: t.title ?? null,
            dataset: { testid: `stat-${t.name}`, level: t.level },
          },
          h("span", { class: "gm-tile-label" }, t.label),
          h("span", { class: "gm-tile-value" }, t.value),
          h("span", { class: "gm-tile-sub" }, t.sub),
        ),
      ),
    ),
  );
}
