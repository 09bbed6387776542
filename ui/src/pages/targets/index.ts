/**
 * Targets page: the scrape targets from /api/v1/targets, grouped by scrape
 * pool, with health, last error, last scrape and scrape duration.
 *
 * DOM hooks: one `tr[data-testid=target-row]` per active target, with
 * `data-pool`, `data-health` (up|down|unknown) and `data-instance`. The text
 * filter (`[data-testid=target-filter]`) and "unhealthy only" toggle
 * (`[data-testid=target-unhealthy]`) filter rows client-side; they live in the
 * URL as `search` and `unhealthy=1`.
 */
import { getJSON, type Labels } from "../../core/api.ts";
import { h, replaceChildren } from "../../core/dom.ts";
import { Panel } from "../../core/panel.ts";
import { registerPage, type Page, type PageContext } from "../../core/router.ts";
import { setParams } from "../../core/state.ts";
import { formatAgo, parseRfc3339 } from "../../core/time.ts";
import { formatValue } from "../../charts/format.ts";

interface Target {
  discoveredLabels: Labels;
  labels: Labels;
  scrapePool: string;
  scrapeUrl: string;
  globalUrl?: string;
  lastError: string;
  lastScrape: string;
  lastScrapeDuration: number;
  health: "up" | "down" | "unknown";
  scrapeInterval?: string;
  scrapeTimeout?: string;
}
interface TargetsData {
  activeTargets: Target[];
  droppedTargets?: unknown[];
  droppedTargetCounts?: Record<string, number>;
}

function labelChips(labels: Labels): HTMLElement {
  return h(
    "div",
    { class: "chips" },
    Object.keys(labels)
      .sort()
      .map((k) => h("span", { class: "chip" }, `${k}="${labels[k]}"`)),
  );
}

function matches(t: Target, search: string, unhealthy: boolean): boolean {
  if (unhealthy && t.health === "up") return false;
  if (!search) return true;
  const hay = `${t.scrapePool} ${t.scrapeUrl} ${Object.entries(t.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")} ${t.lastError}`.toLowerCase();
  return hay.includes(search.toLowerCase());
}

class TargetsPage implements Page {
  private panel: Panel<TargetsData> | null = null;
  private search = "";
  private unhealthy = false;

  mount(root: HTMLElement, ctx: PageContext): void {
    this.search = ctx.state.params.search ?? "";
    this.unhealthy = ctx.state.params.unhealthy === "1";
    const filter = h("input", {
      type: "search",
      placeholder: "Filter by pool, endpoint, label or error",
      "data-testid": "target-filter",
      value: this.search,
      onInput: () => setParams({ search: filter.value }),
    });
    const toggle = h("input", {
      type: "checkbox",
      "data-testid": "target-unhealthy",
      checked: this.unhealthy,
      onChange: () => setParams({ unhealthy: toggle.checked ? "1" : null }),
    });
    this.panel = new Panel<TargetsData>({
      id: "targets",
      title: "Scrape targets",
      lazy: false,
      load: (signal) => getJSON<TargetsData>("/api/v1/targets", { state: "active" }, signal),
      isEmpty: (d) => d.activeTargets.length === 0,
      emptyText: "No scrape targets configured.",
      render: (body, d) => this.render(body, d),
    });
    replaceChildren(
      root,
      h(
        "div",
        { class: "page-head" },
        h("h1", null, "Targets"),
        h("span", { class: "spacer" }),
        filter,
        h("label", { class: "check" }, toggle, "Unhealthy only"),
      ),
      this.panel.el,
    );
  }

  private render(body: HTMLElement, d: TargetsData): void {
    const now = Date.now();
    const pools = new Map<string, Target[]>();
    for (const t of d.activeTargets) {
      const list = pools.get(t.scrapePool) ?? [];
      list.push(t);
      pools.set(t.scrapePool, list);
    }
    const sections: HTMLElement[] = [];
    for (const pool of [...pools.keys()].sort()) {
      const all = pools.get(pool) ?? [];
      const shown = all
        .filter((t) => matches(t, this.search, this.unhealthy))
        .sort((a, b) => a.scrapeUrl.localeCompare(b.scrapeUrl, undefined, { numeric: true }));
      if (shown.length === 0) continue;
      const up = all.filter((t) => t.health === "up").length;
      sections.push(
        h(
          "div",
          { class: "target-pool", "data-testid": "target-pool", "data-pool": pool },
          h(
            "h3",
            null,
            pool,
            " ",
            h("span", { class: `badge ${up === all.length ? "ok" : "critical"}` }, `${up}/${all.length} up`),
          ),
          h(
            "table",
            { class: "data" },
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                ["Endpoint", "State", "Labels", "Last scrape", "Duration", "Interval", "Error"].map((c) => h("th", null, c)),
              ),
            ),
            h(
              "tbody",
              null,
              shown.map((t) => {
                const last = parseRfc3339(t.lastScrape);
                return h(
                  "tr",
                  {
                    "data-testid": "target-row",
                    "data-pool": pool,
                    "data-health": t.health,
                    "data-instance": t.labels.instance ?? "",
                  },
                  h("td", { class: "wrap mono" }, t.scrapeUrl),
                  h("td", null, h("span", { class: `badge ${t.health}` }, t.health.toUpperCase())),
                  h("td", null, labelChips(t.labels)),
                  h("td", { class: "num", title: t.lastScrape }, formatAgo(last, now)),
                  h("td", { class: "num" }, formatValue(t.lastScrapeDuration, "seconds")),
                  h("td", { class: "num" }, t.scrapeInterval ?? ""),
                  h("td", { class: "error-text" }, t.lastError || ""),
                );
              }),
            ),
          ),
        ),
      );
    }
    replaceChildren(body, sections.length ? sections : h("div", { class: "panel-empty" }, "No target matches the filter."));
  }

  update(ctx: PageContext): void {
    const search = ctx.state.params.search ?? "";
    const unhealthy = ctx.state.params.unhealthy === "1";
    if (ctx.reason === "refresh") {
      this.panel?.reload();
      return;
    }
    if (search !== this.search || unhealthy !== this.unhealthy) {
      this.search = search;
      this.unhealthy = unhealthy;
      this.panel?.rerender();
    }
  }

  unmount(): void {
    this.panel?.destroy();
    this.panel = null;
  }
}

registerPage("targets", () => new TargetsPage(), { title: "Targets", order: 50 });
