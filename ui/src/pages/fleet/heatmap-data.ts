/**
 * From the heatmap query's answer to heatmap groups and cells.
 *
 * Contract: `heatmapModel` reads the vector of `heatmapQuery` (queries.ts):
 * series with `__name__` are a GPU's metric values, series with `alertname`
 * and no `__name__` its firing alerts. Every GPU seen in any series gets a
 * cell (a GPU without the signal reads nodata). Rows are nodes in natural
 * order; with grouping `cluster` or `rack` they sit under one heading per
 * value of that label (GPUs without it under one "No <label> label"
 * heading). Columns are the GPU indexes
 * seen, in numeric order. Links come from `links` so the page decides how
 * they keep the time range.
 */
import { parseSampleValue, type VectorSample } from "../../core/api.ts";
import type { HeatmapCell, HeatmapGroup, HeatmapRow } from "../../charts/heatmap/gpu-heatmap.ts";
import { type Level, levelOfSeverity, levelRank, worstLevel } from "../../gpu/levels.ts";
import { type FleetSignal, formatSignalValue } from "../../gpu/signals.ts";
import { compareGpuIndex, compareNode, gpuKey } from "../../gpu/series.ts";

export type Grouping = "node" | GroupLabel;
/** Labels the rows can be grouped by (target labels of the scrape config). */
export type GroupLabel = "cluster" | "rack";
export const GROUP_LABELS: readonly GroupLabel[] = ["cluster", "rack"];

export interface HeatmapLinks {
  gpu(node: string, gpu: string): string;
  node(node: string): string;
}

interface GpuValues {
  node: string;
  gpu: string;
  groups: Partial<Record<GroupLabel, string>>;
  values: Map<string, number>;
  alerts: { name: string; level: Level; severity: string }[];
}

export interface HeatmapModel {
  groups: HeatmapGroup[];
  columns: string[];
  /** Cells per level, for the panel's caption. */
  counts: Record<Level, number>;
  total: number;
}

function collect(samples: readonly VectorSample[]): Map<string, GpuValues> {
  const out = new Map<string, GpuValues>();
  for (const s of samples) {
    const node = s.metric["hostname"];
    const gpu = s.metric["gpu"];
    if (node === undefined || gpu === undefined) continue;
    const key = gpuKey(node, gpu);
    let g = out.get(key);
    if (!g) {
      g = { node, gpu, groups: {}, values: new Map(), alerts: [] };
      out.set(key, g);
    }
    for (const label of GROUP_LABELS) g.groups[label] ??= s.metric[label];
    const name = s.metric["__name__"];
    const alertname = s.metric["alertname"];
    if (name === undefined && alertname !== undefined) {
      const severity = s.metric["severity"] ?? "";
      g.alerts.push({ name: alertname, severity, level: levelOfSeverity(severity) });
    } else if (name !== undefined && s.value) g.values.set(name, parseSampleValue(s.value[1]));
  }
  return out;
}

function cellOf(g: GpuValues, signal: FleetSignal, links: HeatmapLinks): HeatmapCell {
  const r = signal.read(g.values);
  const lost = g.values.get("gpu_lost") === 1;
  let alert: Level | null = null;
  for (const a of g.alerts) if (levelRank(a.level) >= levelRank("warning")) alert = worstLevel(alert ?? "ok", a.level);
  const lines = [`${g.node} · GPU ${g.gpu}`, `${signal.label}: ${lost ? "GPU lost (fallen off the bus)" : r.text}`];
  if (g.alerts.length > 0) {
    const sorted = [...g.alerts].sort((a, b) => levelRank(b.level) - levelRank(a.level));
    lines.push(`Firing: ${sorted.map((a) => `${a.name} (${a.severity || "no severity"})`).join(", ")}`);
  }
  return {
    node: g.node,
    gpu: g.gpu,
    value: r.value,
    // A lost GPU has no readings left; it is the worst state a GPU can be in (GpuLost is critical).
    level: lost ? "critical" : r.level,
    scale: r.scale,
    label: Number.isFinite(r.value) ? compactValue(signal, r.value) : lost ? "lost" : "–",
    title: lines.join("\n"),
    href: links.gpu(g.node, g.gpu),
    alert,
  };
}

/** Text inside a roomy cell: short, no unit spacing. */
function compactValue(signal: FleetSignal, v: number): string {
  if (signal.unit === "°C") return `${Math.round(v)}°`;
  if (signal.unit === "W") return `${Math.round(v)}`;
  return formatSignalValue(signal, v).replace(" ", "");
}

/**
 * Row labels: node names without the prefix every node shares (cut where a
 * word ends), so "sim-node-0017" reads "0017" among sim-node-* hosts; the
 * full name stays in the row's tooltip.
 */
export function shortNodeNames(nodes: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  let prefix = nodes[0] ?? "";
  for (const n of nodes) {
    let i = 0;
    while (i < prefix.length && i < n.length && prefix[i] === n[i]) i++;
    prefix = prefix.slice(0, i);
  }
  // Cut after the last separator so a shared leading digit is not lost ("node-1", "node-12").
  const cut = Math.max(prefix.lastIndexOf("-"), prefix.lastIndexOf("_"), prefix.lastIndexOf("."));
  const strip = nodes.length > 1 && cut >= 0 ? cut + 1 : 0;
  for (const n of nodes) out.set(n, strip > 0 && n.length > strip ? n.slice(strip) : n);
  return out;
}

function groupHeading(grouping: Grouping, name: string): string | null {
  if (grouping === "node") return null;
  const title = grouping === "cluster" ? "Cluster" : "Rack";
  return name === "" ? `No ${grouping} label` : `${title} ${name}`;
}

export function heatmapModel(
  samples: readonly VectorSample[],
  signal: FleetSignal,
  grouping: Grouping,
  links: HeatmapLinks,
): HeatmapModel {
  const gpus = collect(samples);
  const columns = [...new Set([...gpus.values()].map((g) => g.gpu))].sort(compareGpuIndex);
  const counts: Record<Level, number> = { ok: 0, warning: 0, critical: 0, nodata: 0 };
  const groupsByName = new Map<string, Map<string, Map<string, HeatmapCell>>>();
  for (const g of gpus.values()) {
    // "" sorts first: the GPUs without the label, or the one group of "node".
    const groupName = grouping === "node" ? "" : (g.groups[grouping] ?? "");
    let rows = groupsByName.get(groupName);
    if (!rows) groupsByName.set(groupName, (rows = new Map()));
    let cells = rows.get(g.node);
    if (!cells) rows.set(g.node, (cells = new Map()));
    const cell = cellOf(g, signal, links);
    counts[cell.level]++;
    cells.set(g.gpu, cell);
  }
  const short = shortNodeNames([...new Set([...gpus.values()].map((g) => g.node))]);
  const groups: HeatmapGroup[] = [...groupsByName.keys()].sort(compareNode).map((name) => {
    const rows = groupsByName.get(name) as Map<string, Map<string, HeatmapCell>>;
    const rowList: HeatmapRow[] = [...rows.keys()].sort(compareNode).map((node) => ({
      node,
      label: short.get(node) ?? node,
      href: links.node(node),
      cells: rows.get(node) as Map<string, HeatmapCell>,
    }));
    return { name: groupHeading(grouping, name), rows: rowList };
  });
  return { groups, columns, counts, total: gpus.size };
}
