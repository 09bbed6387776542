/**
 * GPU heatmap: one cell per GPU, rows = nodes, columns = GPU index, rows
 * optionally under group headings (clusters).
 *
 * Contract:
 * - `element` is `[data-testid=fleet-heatmap]`; every GPU is one
 *   `a[data-testid=gpu-cell]` with `data-node`, `data-gpu`, `data-value` (a
 *   number, empty when the GPU has no reading), `data-level`
 *   (ok|warning|critical|nodata), `data-alert` (the worst firing alert's
 *   level, when one fires), a `title` tooltip and an `href` to drill down
 *   (cells are plain links: the router turns a click into in-app
 *   navigation, and a middle click opens a tab).
 * - Colour is CSS only (heatmap.css): `data-level` for warning / critical /
 *   nodata and `data-bucket` (0..9, the reading's position on the colour
 *   scale) for ok cells — no inline styles, so the strict CSP holds.
 * - Built for fleets of thousands of GPUs: the DOM is built once per layout
 *   in a detached fragment, a refresh with the same layout only rewrites
 *   the attributes that changed, and no cell has a listener of its own.
 */
import type { Level } from "../../gpu/levels.ts";
import "../../gpu/levels.css";
import "./heatmap.css";

export interface HeatmapCell {
  node: string;
  gpu: string;
  /** The reading; NaN when there is none. */
  value: number;
  level: Level;
  /** 0..1 position on the colour scale (used for ok cells). */
  scale: number;
  /** Short text shown inside roomy cells ("71°"). */
  label: string;
  title: string;
  href: string;
  /** Level of the worst firing alert of this GPU, if any. */
  alert: Level | null;
}

export interface HeatmapRow {
  node: string;
  /** Text of the row heading (the full node name is its tooltip). */
  label: string;
  /** Link for the node heading (the node page). */
  href: string;
  /** Cells by GPU index; a missing index leaves a gap. */
  cells: ReadonlyMap<string, HeatmapCell>;
}

export interface HeatmapGroup {
  /** Group heading (a cluster); null renders no heading. */
  name: string | null;
  rows: readonly HeatmapRow[];
}

/** Above this many GPUs, cells are compact (colour only, value in the tooltip). */
const ROOMY_MAX_GPUS = 64;
const BUCKETS = 10;

export class GpuHeatmap {
  readonly element: HTMLElement;
  private layoutKey = "";
  private cells = new Map<string, HTMLAnchorElement>();

  constructor() {
    this.element = document.createElement("div");
    this.element.className = "gm-heatmap";
    this.element.dataset["testid"] = "fleet-heatmap";
  }

  /** Shows `groups` with columns `columns` (GPU indexes in display order). */
  render(groups: readonly HeatmapGroup[], columns: readonly string[]): void {
    const key = layoutKeyOf(groups, columns);
    // A new layout is filled in while still detached, then attached at once.
    const fresh = key !== this.layoutKey ? this.build(groups, columns, key) : null;
    for (const group of groups) {
      for (const row of group.rows) {
        for (const cell of row.cells.values()) {
          const el = this.cells.get(cellKey(cell.node, cell.gpu));
          if (el) updateCell(el, cell);
        }
      }
    }
    if (fresh) this.element.replaceChildren(fresh);
  }

  /** Number of GPU cells shown. */
  get size(): number {
    return this.cells.size;
  }

  destroy(): void {
    this.element.remove();
    this.cells.clear();
  }

  private build(groups: readonly HeatmapGroup[], columns: readonly string[], key: string): DocumentFragment {
    this.layoutKey = key;
    this.cells.clear();
    let total = 0;
    for (const g of groups) for (const r of g.rows) total += r.cells.size;
    const frag = document.createDocumentFragment();
    for (const group of groups) {
      if (group.name !== null) {
        const heading = document.createElement("h3");
        heading.className = "gm-heatmap-group";
        heading.textContent = group.name;
        frag.appendChild(heading);
      }
      const rowsEl = document.createElement("div");
      rowsEl.className = "gm-heatmap-rows";
      for (const row of group.rows) rowsEl.appendChild(this.buildRow(row, columns));
      frag.appendChild(rowsEl);
    }
    this.element.dataset["density"] = total > ROOMY_MAX_GPUS ? "compact" : "roomy";
    this.element.dataset["columns"] = String(columns.length);
    return frag;
  }

  private buildRow(row: HeatmapRow, columns: readonly string[]): HTMLElement {
    const rowEl = document.createElement("div");
    rowEl.className = "gm-heatmap-row";
    rowEl.dataset["node"] = row.node;
    const name = document.createElement("a");
    name.className = "gm-heatmap-node";
    name.href = row.href;
    name.textContent = row.label;
    name.title = `${row.node}: all GPUs`;
    rowEl.appendChild(name);
    const cellsEl = document.createElement("div");
    cellsEl.className = "gm-heatmap-cells";
    for (const gpu of columns) {
      const cell = row.cells.get(gpu);
      if (cell === undefined) {
        const gap = document.createElement("span");
        gap.className = "gm-heatmap-gap";
        cellsEl.appendChild(gap);
        continue;
      }
      const el = document.createElement("a");
      el.className = "gm-heatmap-cell";
      el.dataset["testid"] = "gpu-cell";
      el.dataset["node"] = cell.node;
      el.dataset["gpu"] = cell.gpu;
      this.cells.set(cellKey(cell.node, cell.gpu), el);
      cellsEl.appendChild(el);
    }
    rowEl.appendChild(cellsEl);
    return rowEl;
  }
}

function cellKey(node: string, gpu: string): string {
  return `${node}\u0000${gpu}`;
}

function layoutKeyOf(groups: readonly HeatmapGroup[], columns: readonly string[]): string {
  const parts: string[] = [columns.join(",")];
  for (const g of groups) {
    parts.push(`#${g.name ?? ""}`);
    for (const r of g.rows) parts.push(`${r.node}=${r.label}:${[...r.cells.keys()].join(",")}`);
  }
  return parts.join("\u0001");
}

/** Writes an attribute only when it changes: a refresh of 1,000 cells touches only what moved. */
function setData(el: HTMLElement, name: string, value: string | null): void {
  if (value === null) {
    if (name in el.dataset) delete el.dataset[name];
  } else if (el.dataset[name] !== value) el.dataset[name] = value;
}

function updateCell(el: HTMLAnchorElement, cell: HeatmapCell): void {
  setData(el, "value", Number.isFinite(cell.value) ? String(round(cell.value)) : "");
  setData(el, "level", cell.level);
  setData(el, "bucket", String(Math.min(BUCKETS - 1, Math.floor(cell.scale * BUCKETS))));
  setData(el, "alert", cell.alert);
  if (el.title !== cell.title) el.title = cell.title;
  if (el.getAttribute("href") !== cell.href) el.setAttribute("href", cell.href);
  if (el.textContent !== cell.label) el.textContent = cell.label;
}

function round(v: number): number {
  return Math.round(v * 10000) / 10000;
}
