/**
 * The GPU / node page (/gpu?var-node=<node>&var-gpu=<gpu>): the time series
 * of one GPU, or of every GPU of the selected node(s) when var-gpu is All.
 *
 * Contract:
 * - Panels (panels.ts), each one range query at a step from the range and
 *   the chart width (core stepFor); panels below the fold load when they
 *   scroll into view (core Panel, lazy; those in view load at once).
 * - Every chart carries the page's overlays (overlays.ts): alert annotations
 *   `[data-testid=annotation][data-alertname]` and silenced windows; the
 *   temperature charts carry the forecast overlay
 *   `[data-testid=forecast][data-eta-seconds]` when a trend rises toward
 *   the limit.
 * - Without a node selected the page asks for one (a fleet-wide chart of
 *   every GPU would be one line per GPU) and links to the Fleet page.
 */
import { h, replaceChildren } from "../../core/dom.ts";
import { Panel, addPanels } from "../../core/panel.ts";
import { hrefFor, registerPage, type Page, type PageContext } from "../../core/router.ts";
import type { AppState } from "../../core/state.ts";
import { stepFor, type TimeRange } from "../../core/time.ts";
import { gpuSelector } from "../../gpu/selector.ts";
import { chartPanel } from "./chart-panel.ts";
import { OverlaySource } from "./overlays.ts";
import { PANELS } from "./panels.ts";
import "./gpu.css";

/** Width of the y axis and padding: the plot is this much narrower than the panel. */
const AXIS_PX = 80;

function title(state: AppState): string {
  const nodes = state.vars.node;
  const gpus = state.vars.gpu;
  const where = nodes.length === 1 ? (nodes[0] as string) : `${nodes.length} nodes`;
  if (gpus.length === 1) return `${where} · GPU ${gpus[0]}`;
  if (gpus.length > 1) return `${where} · GPUs ${gpus.join(", ")}`;
  return `${where} · all GPUs`;
}

class GpuPage implements Page {
  private state!: AppState;
  private range!: TimeRange;
  private root!: HTMLElement;
  private grid: HTMLElement | null = null;
  private panels: Panel<unknown>[] = [];
  private overlays = new OverlaySource();

  mount(root: HTMLElement, ctx: PageContext): void {
    this.root = root;
    this.state = ctx.state;
    this.range = ctx.range;
    this.build();
  }

  update(ctx: PageContext): void {
    const prev = this.state;
    this.state = ctx.state;
    this.range = ctx.range;
    const sameTarget = JSON.stringify(prev.vars) === JSON.stringify(ctx.state.vars);
    if (!sameTarget) {
      this.teardown();
      this.build();
      return;
    }
    if (ctx.reason === "state" && prev.from === ctx.state.from && prev.to === ctx.state.to) return;
    this.reloadAll();
  }

  unmount(): void {
    this.teardown();
    this.overlays.destroy();
  }

  private teardown(): void {
    for (const p of this.panels) p.destroy();
    this.panels = [];
    this.overlays.destroy();
    this.overlays = new OverlaySource();
  }

  /** Query step: at most one point per pixel of the plot, never below 1 s. */
  private step(): number {
    const width = (this.grid?.querySelector(".panel-body")?.clientWidth ?? this.root.clientWidth / 2) - AXIS_PX;
    return stepFor(this.range.start, this.range.end, Math.max(100, width));
  }

  private build(): void {
    const s = this.state;
    if (s.vars.node.length === 0) {
      replaceChildren(
        this.root,
        h(
          "div",
          { class: "page-message", dataset: { testid: "gpu-pick" } },
          h("h1", null, "GPU"),
          h("p", null, "Choose a node (and a GPU) in the variable bar, or click a GPU on the ", h("a", { href: hrefFor("fleet") }, "Fleet page"), "."),
        ),
      );
      return;
    }
    const multiGpu = s.vars.gpu.length !== 1;
    const multiNode = s.vars.node.length > 1;
    const ctx = {
      selector: () => gpuSelector(this.state.vars),
      range: () => this.range,
      step: () => this.step(),
      overlays: this.overlays,
      multiGpu: () => multiGpu,
      multiNode: () => multiNode,
    };
    this.panels = PANELS.map((def) => {
      const p = chartPanel(def, ctx);
      return p as unknown as Panel<unknown>;
    });
    const header = h(
      "header",
      { class: "gm-gpu-header" },
      h("h1", { dataset: { testid: "gpu-title" } }, title(s)),
      h(
        "nav",
        { class: "gm-gpu-links" },
        h("a", { href: hrefFor("fleet", {}, { keepVars: false }) }, "← Fleet"),
        h("a", { href: hrefFor("alerts") }, "Alerts of this GPU"),
        multiGpu ? null : h("a", { href: hrefFor("gpu", {}, { vars: { gpu: [] } }) }, "All GPUs of the node"),
      ),
    );
    this.grid = h("div", { class: "panel-grid gm-gpu-grid" });
    addPanels(this.grid, this.panels);
    replaceChildren(this.root, header, this.grid);
    queueMicrotask(() => this.overlays.load(this.state.vars, this.range, this.step()));
  }

  private reloadAll(): void {
    for (const p of this.panels) p.reload();
    this.overlays.load(this.state.vars, this.range, this.step());
  }
}

registerPage("gpu", () => new GpuPage(), { title: "GPU", order: 20 });
