/**
 * Alerts page model: /api/v1/alerts grouped by node and GPU.
 *
 * Contract (pure):
 * - `filterAlerts(alerts, filter, vars)` keeps the alerts matching the state
 *   and severity filters ("" = any) and the template variables (cluster,
 *   node = `hostname` or else `instance`, gpu, job; All keeps everything; an
 *   alert without the label is kept only when the variable is All).
 * - `groupAlerts(alerts)` makes one group per (node, gpu): node is the
 *   `hostname` label, else `instance`, else ""; gpu is the `gpu` label or ""
 *   (a node-level alert). Groups are sorted worst first (level of the worst
 *   firing alert, then of any alert, then more alerts), then by node and
 *   GPU; alerts inside a group firing first, then by severity, then oldest
 *   first.
 */
import { type Level, levelOfSeverity, levelRank } from "../../gpu/levels.ts";
import { compareGpuIndex, compareNode } from "../../gpu/series.ts";
import type { Vars } from "../../core/state.ts";

export interface ApiAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  state: string;
  activeAt?: string;
  value?: string;
}

export interface AlertFilter {
  state: string;
  severity: string;
}

export interface AlertGroup {
  node: string;
  gpu: string;
  alerts: ApiAlert[];
  level: Level;
  firing: number;
}

export function nodeOf(a: ApiAlert): string {
  return a.labels["hostname"] ?? a.labels["instance"] ?? "";
}

function keep(values: readonly string[], v: string | undefined): boolean {
  return values.length === 0 || (v !== undefined && values.includes(v));
}

export function filterAlerts(alerts: readonly ApiAlert[], filter: AlertFilter, vars: Vars): ApiAlert[] {
  return alerts.filter(
    (a) =>
      (filter.state === "" || a.state === filter.state) &&
      (filter.severity === "" || (a.labels["severity"] ?? "") === filter.severity) &&
      keep(vars.cluster, a.labels["cluster"]) &&
      keep(vars.node, nodeOf(a) || undefined) &&
      keep(vars.gpu, a.labels["gpu"]) &&
      keep(vars.job, a.labels["job"]),
  );
}

function alertOrder(a: ApiAlert, b: ApiAlert): number {
  return (
    Number(b.state === "firing") - Number(a.state === "firing") ||
    levelRank(levelOfSeverity(b.labels["severity"])) - levelRank(levelOfSeverity(a.labels["severity"])) ||
    (a.activeAt ?? "").localeCompare(b.activeAt ?? "") ||
    (a.labels["alertname"] ?? "").localeCompare(b.labels["alertname"] ?? "")
  );
}

export function groupAlerts(alerts: readonly ApiAlert[]): AlertGroup[] {
  const byKey = new Map<string, AlertGroup>();
  for (const a of alerts) {
    const node = nodeOf(a);
    const gpu = a.labels["gpu"] ?? "";
    const key = `${node}\u0000${gpu}`;
    let g = byKey.get(key);
    if (!g) byKey.set(key, (g = { node, gpu, alerts: [], level: "ok", firing: 0 }));
    g.alerts.push(a);
  }
  const groups = [...byKey.values()];
  const firingLevel = (g: AlertGroup) =>
    Math.max(0, ...g.alerts.filter((a) => a.state === "firing").map((a) => levelRank(levelOfSeverity(a.labels["severity"]))));
  for (const g of groups) {
    g.alerts.sort(alertOrder);
    g.firing = g.alerts.filter((a) => a.state === "firing").length;
    let level: Level = "ok";
    for (const a of g.alerts) {
      const l = levelOfSeverity(a.labels["severity"]);
      if (levelRank(l) > levelRank(level)) level = l;
    }
    g.level = level;
  }
  return groups.sort(
    (a, b) =>
      firingLevel(b) - firingLevel(a) ||
      levelRank(b.level) - levelRank(a.level) ||
      b.alerts.length - a.alerts.length ||
      compareNode(a.node, b.node) ||
      compareGpuIndex(a.gpu, b.gpu),
  );
}
