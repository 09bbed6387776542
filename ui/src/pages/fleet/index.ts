/**
 * The Fleet page (/fleet): every GPU at a glance.
 *
 * Contract:
 * - Page params: `signal` (utilization, temperature, memory_temperature,
 *   power, memory_used; default temperature) and `group` (node, cluster, rack;
 *   default node), both in the URL through the state store.
 * - Three panels, each ONE instant query at the end of the time range
 *   (queries.ts): `summary` (stat tiles `[data-testid=stat-<name>]`),
 *   `heatmap` (`[data-testid=fleet-heatmap]`, one `[data-testid=gpu-cell]`
 *   per GPU, legend of the thresholds) and `worst-gpus`
 *   (`[data-testid=worst-gpus] [data-testid=gpu-row]`, worst first).
 * - Clicking a cell opens /gpu?var-node=<node>&var-gpu=<gpu> with the same
 *   time range (in-app, through the router's link handling).
 * - Every state change or refresh reloads the panels whose query it
 *   changes; a grouping change only re-lays out the heatmap's last data.
 */
import { h, replaceChildren } from "../../core/dom.ts";
import { instantQuery, type VectorSample } from "../../core/api.ts";
import { Panel, addPanels } from "../../core/panel.ts";
import { hrefFor, registerPage, type Page, type PageContext } from "../../core/router.ts";
import { setParams, type AppState } from "../../core/state.ts";
import { formatDuration, type TimeRange } from "../../core/time.ts";
import { GpuHeatmap } from "../../charts/heatmap/gpu-heatmap.ts";
import { heatmapLegend } from "../../charts/heatmap/heatmap-legend.ts";
import { gpuSelector } from "../../gpu/selector.ts";
import { DEFAULT_SIGNAL, SIGNALS, SIGNAL_IDS, isSignalId, type FleetSignal } from "../../gpu/signals.ts";
import { heatmapQuery, summaryQuery, worstQuery } from "./queries.ts";
import { readSummary, renderTiles, tilesOf } from "./summary.ts";
import { rankWorst, renderWorst } from "./worst-gpus.ts";
import { GROUP_LABELS, heatmapModel, type Grouping } from "./heatmap-data.ts";
import "../../gpu/levels.css";
import "./fleet.css";

/** GPUs listed in the worst-GPUs panel (and fetched per ranking). */
const WORST_SHOWN = 10;

function signalOf(state: AppState): FleetSignal {
  const id = state.params["signal"];
  return SIGNALS[isSignalId(id) ? id : DEFAULT_SIGNAL];
}

function groupingOf(state: AppState): Grouping {
  const group = state.params["group"];
  return GROUP_LABELS.find((label) => label === group) ?? "node";
}

function sameVars(a: AppState, b: AppState): boolean {
  return JSON.stringify(a.vars) === JSON.stringify(b.vars);
}

async function vector(expr: string, time: number, signal: AbortSignal): Promise<VectorSample[]> {
  const data = await instantQuery(expr, time, signal);
  return data.resultType === "vector" ? data.result : [];
}

class FleetPage implements Page {
  private state!: AppState;
  private range!: TimeRange;
  private heatmap: GpuHeatmap | null = null;
  private panels: Panel<VectorSample[]>[] = [];
  private heatmapPanel!: Panel<VectorSample[]>;
  private signalSelect!: HTMLSelectElement;
  private groupSelect!: HTMLSelectElement;

  mount(root: HTMLElement, ctx: PageContext): void {
    this.state = ctx.state;
    this.range = ctx.range;
    this.heatmap = new GpuHeatmap();

    this.signalSelect = h(
      "select",
      {
        "aria-label": "Signal",
        dataset: { testid: "fleet-signal" },
        onChange: () => setParams({ signal: this.signalSelect.value === DEFAULT_SIGNAL ? null : this.signalSelect.value }),
      },
      SIGNAL_IDS.map((id) => h("option", { value: id }, SIGNALS[id].label)),
    );
    this.groupSelect = h(
      "select",
      {
        "aria-label": "Group by",
        dataset: { testid: "fleet-group" },
        onChange: () => setParams({ group: this.groupSelect.value === "node" ? null : this.groupSelect.value }),
      },
      h("option", { value: "node" }, "Nodes"),
      h("option", { value: "cluster" }, "Clusters"),
      h("option", { value: "rack" }, "Racks"),
    );
    this.syncControls();

    const summary = new Panel<VectorSample[]>({
      id: "summary",
      title: "Fleet",
      lazy: false,
      className: "gm-fleet-summary",
      load: (signal) => vector(summaryQuery(this.selector(), this.range.start, this.range.end), this.range.end, signal),
      isEmpty: () => false,
      render: (body, data) => renderTiles(body, tilesOf(readSummary(data), formatDuration(Math.round(this.range.end - this.range.start)))),
    });
    this.heatmapPanel = new Panel<VectorSample[]>({
      id: "heatmap",
      title: "GPUs",
      lazy: false,
      className: "gm-fleet-heatmap",
      toolbar: [h("label", { class: "gm-inline-label" }, "Signal ", this.signalSelect), h("label", { class: "gm-inline-label" }, "Rows ", this.groupSelect)],
      load: (signal) => vector(heatmapQuery(signalOf(this.state), this.selector()), this.range.end, signal),
      emptyText: "No GPU reports in this time range and selection.",
      render: (body, data) => this.renderHeatmap(body, data),
    });
    const worst = new Panel<VectorSample[]>({
      id: "worst-gpus",
      title: "Worst GPUs",
      description: "Closest to a temperature limit or to a predicted slowdown, worst first",
      lazy: false,
      className: "gm-fleet-worst",
      load: (signal) => vector(worstQuery(this.selector(), WORST_SHOWN), this.range.end, signal),
      emptyText: "No GPU reports a temperature limit.",
      render: (body, data) => renderWorst(body, rankWorst(data), WORST_SHOWN),
    });
    this.panels = [summary, this.heatmapPanel, worst];
    const grid = h("div", { class: "gm-fleet" });
    addPanels(grid, this.panels as Panel<unknown>[]);
    replaceChildren(root, grid);
  }

  update(ctx: PageContext): void {
    const prev = this.state;
    this.state = ctx.state;
    this.range = ctx.range;
    this.syncControls();
    if (ctx.reason === "state") {
      const sameData = prev.from === ctx.state.from && prev.to === ctx.state.to && sameVars(prev, ctx.state);
      if (sameData) {
        // A new signal needs the heatmap's query; a new grouping only a new layout.
        if (prev.params["signal"] !== ctx.state.params["signal"]) this.heatmapPanel.reload();
        else if (prev.params["group"] !== ctx.state.params["group"]) this.heatmapPanel.rerender();
        return;
      }
    }
    for (const p of this.panels) p.reload();
  }

  unmount(): void {
    for (const p of this.panels) p.destroy();
    this.panels = [];
    this.heatmap?.destroy();
    this.heatmap = null;
  }

  private selector(): string {
    return gpuSelector(this.state.vars);
  }

  private syncControls(): void {
    const signal = signalOf(this.state);
    if (this.signalSelect.value !== signal.id) this.signalSelect.value = signal.id;
    const grouping = groupingOf(this.state);
    if (this.groupSelect.value !== grouping) this.groupSelect.value = grouping;
  }

  private renderHeatmap(body: HTMLElement, data: VectorSample[]): void {
    const heatmap = this.heatmap;
    if (!heatmap) return;
    const t0 = performance.now();
    const signal = signalOf(this.state);
    const model = heatmapModel(data, signal, groupingOf(this.state), {
      gpu: (node, gpu) => hrefFor("gpu", {}, { vars: { node: [node], gpu: [gpu] } }),
      node: (node) => hrefFor("gpu", {}, { vars: { node: [node], gpu: [] } }),
    });
    const c = model.counts;
    const caption = h(
      "p",
      { class: "gm-heatmap-caption", dataset: { testid: "heatmap-caption" } },
      `${signal.label} · ${model.total} GPUs`,
      c.critical > 0 ? h("span", { class: "gm-count", dataset: { level: "critical" } }, `${c.critical} critical`) : null,
      c.warning > 0 ? h("span", { class: "gm-count", dataset: { level: "warning" } }, `${c.warning} warning`) : null,
      c.nodata > 0 ? h("span", { class: "gm-count", dataset: { level: "nodata" } }, `${c.nodata} no data`) : null,
    );
    body.append(caption, heatmap.element, heatmapLegend(signal.scaleEnds, signal.legend));
    heatmap.render(model.groups, model.columns);
    // For the UI benchmark (bench/ui_fleet): the script time of building the heatmap.
    performance.measure("gpumon:fleet:heatmap-render", { start: t0, end: performance.now() });
  }
}

registerPage("fleet", () => new FleetPage(), { title: "Fleet", order: 10 });
