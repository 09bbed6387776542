/**
 * Rules page: recording and alerting rules from /api/v1/rules, by group.
 *
 * DOM hooks: `[data-testid=rule-group][data-group]` per group; one
 * `[data-testid=rule-row]` per rule with `data-rule-name`, `data-type`
 * (alerting|recording), `data-health` (ok|err|unknown) and, for alerting
 * rules, `data-state` (inactive|pending|firing). Filters (URL params):
 * `search` (group, rule name or expression text), `type` (alerting|recording).
 */
import { getJSON, type Labels } from "../../core/api.ts";
import { h, replaceChildren } from "../../core/dom.ts";
import { Panel } from "../../core/panel.ts";
import { hrefFor, registerPage, type Page, type PageContext } from "../../core/router.ts";
import { setParams } from "../../core/state.ts";
import { formatAgo, formatDuration, parseRfc3339 } from "../../core/time.ts";
import { formatValue } from "../../charts/format.ts";

interface Rule {
  name: string;
  query: string;
  type: "alerting" | "recording";
  health: string;
  lastError?: string;
  lastEvaluation?: string;
  evaluationTime?: number;
  state?: "inactive" | "pending" | "firing";
  duration?: number;
  keepFiringFor?: number;
  labels?: Labels;
  annotations?: Labels;
  alerts?: Array<{ labels: Labels; state: string; activeAt?: string; value?: string }>;
}
interface RuleGroup {
  name: string;
  file: string;
  interval?: number;
  rules: Rule[];
  lastEvaluation?: string;
  evaluationTime?: number;
}

function chips(labels: Labels | undefined): HTMLElement | null {
  if (!labels || Object.keys(labels).length === 0) return null;
  return h(
    "div",
    { class: "chips" },
    Object.keys(labels)
      .sort()
      .map((k) => h("span", { class: "chip" }, `${k}="${labels[k]}"`)),
  );
}

function ruleMatches(r: Rule, group: string, search: string, type: string): boolean {
  if (type && r.type !== type) return false;
  if (!search) return true;
  return `${group} ${r.name} ${r.query}`.toLowerCase().includes(search.toLowerCase());
}

function ruleRow(r: Rule, now: number): HTMLElement {
  const last = parseRfc3339(r.lastEvaluation);
  const state = r.type === "alerting" ? (r.state ?? "inactive") : null;
  const runbook = r.annotations?.runbook_url;
  return h(
    "tr",
    {
      "data-testid": "rule-row",
      "data-rule-name": r.name,
      "data-type": r.type,
      "data-health": r.health,
      "data-state": state,
    },
    h(
      "td",
      { class: "rule-main" },
      h("div", { class: "rule-name" }, h("span", { class: "rule-kind" }, r.type === "alerting" ? "alert" : "record"), " ", h("strong", null, r.name)),
      h("pre", { class: "expr" }, h("a", { href: hrefFor("explore", { expr: r.query, tab: "graph" }), title: "Open in Explore" }, r.query)),
      r.type === "alerting" && r.duration ? h("div", { class: "muted" }, `for ${formatDuration(r.duration)}`) : null,
      chips(r.labels),
      r.annotations?.summary ? h("div", { class: "muted" }, r.annotations.summary) : null,
      runbook ? h("a", { href: runbook, target: "_blank", rel: "noopener noreferrer" }, "Runbook") : null,
      r.lastError ? h("div", { class: "error-text" }, r.lastError) : null,
    ),
    h("td", null, h("span", { class: `badge ${r.health}` }, r.health.toUpperCase())),
    h(
      "td",
      null,
      state ? h("span", { class: `badge ${state}` }, `${state.toUpperCase()}${r.alerts?.length ? ` (${r.alerts.length})` : ""}`) : "",
    ),
    h("td", { class: "num", title: r.lastEvaluation ?? "" }, formatAgo(last, now)),
    h("td", { class: "num" }, formatValue(r.evaluationTime ?? NaN, "seconds")),
  );
}

class RulesPage implements Page {
  private panel: Panel<RuleGroup[]> | null = null;
  private search = "";
  private type = "";

  mount(root: HTMLElement, ctx: PageContext): void {
    this.search = ctx.state.params.search ?? "";
    this.type = ctx.state.params.type ?? "";
    const filter = h("input", {
      type: "search",
      placeholder: "Filter by group, name or expression",
      "data-testid": "rule-filter",
      value: this.search,
      onInput: () => setParams({ search: filter.value }),
    });
    const typeSel = h(
      "select",
      { "data-testid": "rule-type", "aria-label": "Rule type", onChange: () => setParams({ type: typeSel.value }) },
      h("option", { value: "" }, "All rules"),
      h("option", { value: "alerting" }, "Alerting"),
      h("option", { value: "recording" }, "Recording"),
    );
    typeSel.value = this.type;
    this.panel = new Panel<RuleGroup[]>({
      id: "rules",
      title: "Rule groups",
      lazy: false,
      load: async (signal) => (await getJSON<{ groups: RuleGroup[] }>("/api/v1/rules", {}, signal)).groups,
      emptyText: "No rules loaded (start the server with --rules or rule_files in the config).",
      render: (body, groups) => this.render(body, groups),
    });
    replaceChildren(
      root,
      h("div", { class: "page-head" }, h("h1", null, "Rules"), h("span", { class: "spacer" }), filter, typeSel),
      this.panel.el,
    );
  }

  private render(body: HTMLElement, groups: RuleGroup[]): void {
    const now = Date.now();
    const out: HTMLElement[] = [];
    for (const g of groups) {
      const rules = g.rules.filter((r) => ruleMatches(r, g.name, this.search, this.type));
      if (rules.length === 0) continue;
      const bad = g.rules.filter((r) => r.health === "err").length;
      out.push(
        h(
          "div",
          { class: "rule-group", "data-testid": "rule-group", "data-group": g.name },
          h(
            "div",
            { class: "rule-group-head" },
            h("h3", null, g.name),
            h("span", { class: "muted mono" }, g.file),
            g.interval ? h("span", { class: "muted" }, `every ${formatDuration(g.interval)}`) : null,
            g.lastEvaluation ? h("span", { class: "muted" }, `evaluated ${formatAgo(parseRfc3339(g.lastEvaluation), now)}`) : null,
            g.evaluationTime !== undefined ? h("span", { class: "muted" }, `in ${formatValue(g.evaluationTime, "seconds")}`) : null,
            bad ? h("span", { class: "badge err" }, `${bad} failing`) : null,
          ),
          h(
            "table",
            { class: "data" },
            h(
              "thead",
              null,
              h("tr", null, ["Rule", "Health", "State", "Last evaluation", "Took"].map((c) => h("th", null, c))),
            ),
            h(
              "tbody",
              null,
              rules.map((r) => ruleRow(r, now)),
            ),
          ),
        ),
      );
    }
    replaceChildren(body, out.length ? out : h("div", { class: "panel-empty" }, "No rule matches the filter."));
  }

  update(ctx: PageContext): void {
    if (ctx.reason === "refresh") {
      this.panel?.reload();
      return;
    }
    const search = ctx.state.params.search ?? "";
    const type = ctx.state.params.type ?? "";
    if (search !== this.search || type !== this.type) {
      this.search = search;
      this.type = type;
      this.panel?.rerender();
    }
  }

  unmount(): void {
    this.panel?.destroy();
    this.panel = null;
  }
}

registerPage("rules", () => new RulesPage(), { title: "Rules", order: 60 });
