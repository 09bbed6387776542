/**
 * The Alerts page (/alerts): firing and pending alerts from /api/v1/alerts,
 * grouped by node and GPU (model.ts), the related alerts of a GPU side by
 * side in its group (render.ts).
 *
 * Contract: page params `state` (firing|pending, default both) and
 * `severity` (critical|warning|info, default all) filter the list, as do
 * the template variables; selects `[data-testid=alert-state-filter]` and
 * `[data-testid=alert-severity-filter]` write them to the URL. One panel,
 * one request (`GET /api/v1/alerts`), reloaded on every refresh.
 */
import { getJSON } from "../../core/api.ts";
import { h, replaceChildren } from "../../core/dom.ts";
import { Panel, addPanels } from "../../core/panel.ts";
import { registerPage, type Page, type PageContext } from "../../core/router.ts";
import { setParams, type AppState } from "../../core/state.ts";
import { filterAlerts, groupAlerts, type ApiAlert } from "./model.ts";
import { renderGroups } from "./render.ts";
import "../../gpu/levels.css";
import "./alerts.css";

const STATES = ["", "firing", "pending"];
const SEVERITIES = ["", "critical", "warning", "info"];

function select(testid: string, label: string, options: string[], anyText: string, onChange: (v: string) => void): HTMLSelectElement {
  const el: HTMLSelectElement = h(
    "select",
    { "aria-label": label, dataset: { testid }, onChange: () => onChange(el.value) },
    options.map((o) => h("option", { value: o }, o === "" ? anyText : o)),
  );
  return el;
}

class AlertsPage implements Page {
  private state!: AppState;
  private panel: Panel<ApiAlert[]> | null = null;
  private stateSelect!: HTMLSelectElement;
  private severitySelect!: HTMLSelectElement;
  private summary!: HTMLElement;

  mount(root: HTMLElement, ctx: PageContext): void {
    this.state = ctx.state;
    this.stateSelect = select("alert-state-filter", "State", STATES, "Firing and pending", (v) => setParams({ state: v || null }));
    this.severitySelect = select("alert-severity-filter", "Severity", SEVERITIES, "All severities", (v) => setParams({ severity: v || null }));
    this.summary = h("span", { class: "gm-alert-summary-line", dataset: { testid: "alert-summary" } });
    this.syncControls();
    this.panel = new Panel<ApiAlert[]>({
      id: "alerts",
      title: "Alerts",
      lazy: false,
      toolbar: [this.summary, this.stateSelect, this.severitySelect],
      load: async (signal) => (await getJSON<{ alerts: ApiAlert[] }>("/api/v1/alerts", {}, signal)).alerts ?? [],
      isEmpty: () => false,
      render: (body, alerts) => this.render(body, alerts),
    });
    const grid = h("div", { class: "gm-alerts-page" });
    addPanels(grid, [this.panel as unknown as Panel<unknown>]);
    replaceChildren(root, grid);
  }

  update(ctx: PageContext): void {
    const prev = this.state;
    this.state = ctx.state;
    this.syncControls();
    const filterOnly =
      ctx.reason === "state" &&
      prev.from === ctx.state.from &&
      prev.to === ctx.state.to &&
      (prev.params["state"] !== ctx.state.params["state"] ||
        prev.params["severity"] !== ctx.state.params["severity"] ||
        JSON.stringify(prev.vars) !== JSON.stringify(ctx.state.vars));
    if (filterOnly) this.panel?.rerender();
    else if (ctx.reason === "refresh" || prev.from !== ctx.state.from || prev.to !== ctx.state.to) this.panel?.reload();
  }

  unmount(): void {
    this.panel?.destroy();
    this.panel = null;
  }

  private syncControls(): void {
    const st = this.state.params["state"] ?? "";
    const sev = this.state.params["severity"] ?? "";
    this.stateSelect.value = STATES.includes(st) ? st : "";
    this.severitySelect.value = SEVERITIES.includes(sev) ? sev : "";
  }

  private render(body: HTMLElement, all: ApiAlert[]): void {
    const filter = { state: this.stateSelect.value, severity: this.severitySelect.value };
    const shown = filterAlerts(all, filter, this.state.vars);
    const firing = shown.filter((a) => a.state === "firing").length;
    this.summary.textContent = `${firing} firing, ${shown.length - firing} pending${shown.length < all.length ? ` (of ${all.length})` : ""}`;
    if (shown.length === 0) {
      body.appendChild(h("div", { class: "panel-empty" }, all.length === 0 ? "No alerts are firing or pending." : "No alert matches the filters."));
      return;
    }
    renderGroups(body, groupAlerts(shown), Date.now());
  }
}

registerPage("alerts", () => new AlertsPage(), { title: "Alerts", order: 30 });
