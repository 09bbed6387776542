/**
 * Explore page: an ad-hoc PromQL editor with graph and table views.
 *
 * URL params: `expr` (the query; written when the query runs), `tab`
 * (graph|table, default graph), `display` (lines|stacked|heatmap, default
 * lines; graph tab only). The time range and refresh come from the shell.
 *
 * DOM hooks: `[data-testid=promql-editor]` (CodeMirror inside its open
 * shadow root; `.cm-content` is the editable element),
 * `[data-testid=run-query]`, `[data-testid=tab-graph]`,
 * `[data-testid=tab-table]`, `[data-testid=display-<lines|stacked|heatmap>]`
 * (buttons with aria-pressed), the result panel `[data-panel=explore-result]`
 * with `data-series-count`, table rows `[data-testid=result-row]`, and the
 * histogram heatmap `[data-testid=histogram-heatmap][data-buckets]`.
 *
 * Requests: one per run/refresh (the result panel's load): a range query
 * whose step is limited to the chart's pixel width (graph tab), or an
 * instant query at the range's end (table tab).
 */
import { instantQuery, rangeQuery, type MatrixSeries, type QueryResult } from "../../core/api.ts";
import { h, replaceChildren } from "../../core/dom.ts";
import { Panel, trackTask } from "../../core/panel.ts";
import { registerPage, type Page, type PageContext } from "../../core/router.ts";
import { getState, setParams, type AppState } from "../../core/state.ts";
import { isRelative, resolveRange, stepFor, formatDuration, type TimeRange } from "../../core/time.ts";
import { TimeSeriesChart, unitForMetric, type QueryGrid } from "../../charts/timeseries.ts";
import type { PromQLEditor } from "./editor.ts";
import { renderHeatmap } from "./heatmap-chart.ts";
import { bucketsToHeatmap } from "./histogram.ts";
import { renderResultTable, resultCount } from "./table.ts";

type Tab = "graph" | "table";
type Display = "lines" | "stacked" | "heatmap";
const DISPLAYS: readonly Display[] = ["lines", "stacked", "heatmap"];
const MAX_GRAPH_SERIES = 500;

type Result =
  | { kind: "none" }
  | { kind: "graph"; matrix: MatrixSeries[]; grid: QueryGrid; tookMs: number }
  | { kind: "table"; result: QueryResult; tookMs: number };

function tabOf(s: AppState): Tab {
  return s.params.tab === "table" ? "table" : "graph";
}
function displayOf(s: AppState): Display {
  const d = s.params.display as Display;
  return DISPLAYS.includes(d) ? d : "lines";
}

class ExplorePage implements Page {
  private editor: PromQLEditor | null = null;
  private panel: Panel<Result> | null = null;
  private disposeView: (() => void) | null = null;
  private state: AppState = getState();
  private range: TimeRange = { start: 0, end: 0 };
  private readonly tabButtons = new Map<Tab, HTMLButtonElement>();
  private readonly displayButtons = new Map<Display, HTMLButtonElement>();
  private displayGroup: HTMLElement | null = null;
  private meta: HTMLElement | null = null;

  mount(root: HTMLElement, ctx: PageContext): void {
    this.state = ctx.state;
    this.range = ctx.range;
    const host = h("div", { class: "promql-editor", "data-testid": "promql-editor" });
    const runBtn = h(
      "button",
      { type: "button", class: "btn primary", "data-testid": "run-query", onClick: () => this.run(this.editor?.getValue() ?? "") },
      "Run query",
    );
    for (const t of ["graph", "table"] as const) {
      this.tabButtons.set(
        t,
        h("button", { type: "button", class: "btn", "data-testid": `tab-${t}`, onClick: () => setParams({ tab: t }, { push: true }) }, t === "graph" ? "Graph" : "Table"),
      );
    }
    for (const d of DISPLAYS) {
      this.displayButtons.set(
        d,
        h(
          "button",
          { type: "button", class: "btn", "data-testid": `display-${d}`, title: d === "heatmap" ? "Heatmap of histogram _bucket series (le label)" : null, onClick: () => setParams({ display: d }) },
          d[0]!.toUpperCase() + d.slice(1),
        ),
      );
    }
    this.displayGroup = h("div", { class: "seg", role: "group", "aria-label": "Display" }, [...this.displayButtons.values()]);
    this.meta = h("span", { class: "explore-meta", "data-testid": "query-meta" });
    this.panel = new Panel<Result>({
      id: "explore-result",
      title: "Result",
      lazy: false,
      load: (signal) => this.load(signal),
      isEmpty: (r) => r.kind !== "none" && (r.kind === "graph" ? r.matrix.length === 0 : resultCount(r.result) === 0),
      emptyText: "The query returned no series.",
      render: (body, r) => this.render(body, r),
      className: "explore-result",
    });
    replaceChildren(
      root,
      h("div", { class: "page-head" }, h("h1", null, "Explore")),
      h("div", { class: "explore-query" }, host, runBtn),
      h(
        "div",
        { class: "explore-tabs" },
        h("div", { class: "seg", role: "tablist" }, [...this.tabButtons.values()]),
        this.displayGroup,
        h("span", { class: "spacer" }),
        this.meta,
      ),
      this.panel.el,
    );
    this.syncControls();
    // CodeMirror is a separate chunk, loaded when Explore is first shown
    void trackTask(
      import("./editor.ts").then(({ createPromQLEditor }) => {
        if (this.panel === null) return; // unmounted meanwhile
        this.editor = createPromQLEditor(host, { value: this.state.params.expr ?? "", onRun: (e) => this.run(e) });
        if (!this.state.params.expr) this.editor.focus();
      }),
    );
  }

  private run(expr: string): void {
    this.editor?.closeMenus();
    const e = expr.trim();
    if (e === (this.state.params.expr ?? "")) this.panel?.reload();
    else setParams({ expr: e }, { push: true });
  }

  private syncControls(): void {
    const tab = tabOf(this.state);
    const display = displayOf(this.state);
    for (const [t, b] of this.tabButtons) {
      b.setAttribute("aria-pressed", String(t === tab));
      b.classList.toggle("active", t === tab);
    }
    for (const [d, b] of this.displayButtons) {
      b.setAttribute("aria-pressed", String(d === display));
      b.classList.toggle("active", d === display);
    }
    if (this.displayGroup) this.displayGroup.hidden = tab !== "graph";
  }

  private async load(signal: AbortSignal): Promise<Result> {
    const expr = (this.state.params.expr ?? "").trim();
    if (!expr) return { kind: "none" };
    const range = resolveRange(this.state.from, this.state.to, Date.now());
    const t0 = performance.now();
    if (tabOf(this.state) === "table") {
      const time = isRelative(this.state.to) ? undefined : range.end;
      const result = await instantQuery(expr, time, signal);
      return { kind: "table", result, tookMs: performance.now() - t0 };
    }
    const widthPx = Math.max(100, (this.panel?.body.clientWidth ?? 800) - 90);
    const step = stepFor(range.start, range.end, widthPx);
    // align to the step: stable buckets between refreshes and downsampled-tier friendly
    const start = Math.floor(range.start / step) * step;
    const end = Math.ceil(range.end / step) * step;
    const matrix = await rangeQuery(expr, start, end, step, signal);
    return { kind: "graph", matrix, grid: { start, end, step }, tookMs: performance.now() - t0 };
  }

  private render(body: HTMLElement, r: Result): void {
    this.disposeView?.();
    this.disposeView = null;
    const panelEl = this.panel?.el;
    if (r.kind === "none") {
      replaceChildren(body, h("div", { class: "panel-empty" }, "Enter a PromQL expression and press Enter or Run query."));
      if (this.meta) this.meta.textContent = "";
      panelEl?.removeAttribute("data-series-count");
      return;
    }
    if (r.kind === "table") {
      renderResultTable(body, r.result);
      if (panelEl) panelEl.dataset.seriesCount = String(resultCount(r.result));
      if (this.meta) this.meta.textContent = `${resultCount(r.result)} result(s), ${r.result.resultType}, ${Math.round(r.tookMs)} ms`;
      return;
    }
    if (panelEl) panelEl.dataset.seriesCount = String(r.matrix.length);
    const shown = r.matrix.slice(0, MAX_GRAPH_SERIES);
    const note = r.matrix.length > MAX_GRAPH_SERIES ? ` (graphing the first ${MAX_GRAPH_SERIES})` : "";
    const display = displayOf(this.state);
    const hint = display !== "heatmap" && r.matrix.some((s) => s.metric.le !== undefined) ? " (histogram buckets: try Heatmap)" : "";
    if (this.meta) this.meta.textContent = `${r.matrix.length} series${note}, step ${formatDuration(r.grid.step)}, ${Math.round(r.tookMs)} ms${hint}`;
    if (display === "heatmap") {
      this.disposeView = renderHeatmap(body, bucketsToHeatmap(r.matrix), r.grid);
      return;
    }
    // a unit only when every series is the same raw metric (rate() etc. drop __name__)
    const names = new Set(shown.map((s) => s.metric.__name__));
    const unit = names.size === 1 ? unitForMetric([...names][0]) : "none";
    const chart = new TimeSeriesChart(body, { stacked: display === "stacked", height: 320, unit });
    chart.setData(shown, r.grid);
    this.disposeView = () => chart.destroy();
  }

  update(ctx: PageContext): void {
    const prev = this.state;
    this.state = ctx.state;
    this.range = ctx.range;
    this.syncControls();
    if (ctx.reason === "refresh") {
      this.panel?.reload();
      return;
    }
    const expr = ctx.state.params.expr ?? "";
    if (this.editor && expr !== (prev.params.expr ?? "") && expr !== this.editor.getValue()) this.editor.setValue(expr);
    const needsQuery =
      expr !== (prev.params.expr ?? "") || tabOf(prev) !== tabOf(ctx.state) || prev.from !== ctx.state.from || prev.to !== ctx.state.to;
    if (needsQuery) this.panel?.reload();
    else if (displayOf(prev) !== displayOf(ctx.state)) this.panel?.rerender();
  }

  unmount(): void {
    this.disposeView?.();
    this.panel?.destroy();
    this.editor?.destroy();
    this.panel = null;
    this.editor = null;
  }
}

registerPage("explore", () => new ExplorePage(), { title: "Explore", order: 40 });
