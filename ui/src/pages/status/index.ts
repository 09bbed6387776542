/**
 * Status page: build, runtime, TSDB head statistics with cardinality top
 * lists, command-line flags and the loaded configuration, from
 * /api/v1/status/{buildinfo,runtimeinfo,tsdb,flags,config}.
 *
 * DOM hooks: each section is a panel `[data-testid=status-<section>]` with
 * section in build|runtime|tsdb|flags|config (one request each).
 */
import { getJSON } from "../../core/api.ts";
import { h, replaceChildren, type Child } from "../../core/dom.ts";
import { Panel, type PanelHandle } from "../../core/panel.ts";
import { registerPage, type Page, type PageContext } from "../../core/router.ts";
import { formatAgo, formatTimestamp, parseRfc3339 } from "../../core/time.ts";
import { formatValue } from "../../charts/format.ts";

type Dict = Record<string, unknown>;
interface NameValue {
  name: string;
  value: number;
}
interface TsdbStatus {
  headStats?: { numSeries?: number; numLabelPairs?: number; chunkCount?: number; minTime?: number; maxTime?: number };
  seriesCountByMetricName?: NameValue[];
  labelValueCountByLabelName?: NameValue[];
  memoryInBytesByLabelName?: NameValue[];
  seriesCountByLabelValuePair?: NameValue[];
}

function kv(entries: Array<[string, Child]>): HTMLElement {
  return h(
    "dl",
    { class: "kv" },
    entries.flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v === "" || v === null || v === undefined ? "\u2013" : v)]),
  );
}

function display(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function topList(title: string, rows: NameValue[] | undefined, unit: "none" | "bytes" = "none"): HTMLElement | null {
  if (!rows || rows.length === 0) return null;
  return h(
    "div",
    { class: "top-list" },
    h("h3", null, title),
    h(
      "table",
      { class: "data" },
      h("thead", null, h("tr", null, h("th", null, "Name"), h("th", null, unit === "bytes" ? "Bytes" : "Count"))),
      h(
        "tbody",
        null,
        rows.map((r) =>
          h("tr", null, h("td", { class: "mono wrap" }, r.name), h("td", { class: "num" }, unit === "bytes" ? formatValue(r.value, "bytes") : r.value.toLocaleString("en-US"))),
        ),
      ),
    ),
  );
}

function statusPanel<T>(section: string, title: string, path: string, render: (body: HTMLElement, d: T) => void, span = ""): Panel<T> {
  const p = new Panel<T>({
    id: `status-${section}`,
    title,
    className: span,
    load: (signal) => getJSON<T>(path, {}, signal),
    isEmpty: () => false,
    render,
  });
  p.el.dataset.testid = `status-${section}`;
  return p;
}

class StatusPage implements Page {
  private panels: PanelHandle[] = [];

  mount(root: HTMLElement, _ctx: PageContext): void {
    const now = () => Date.now();
    const build = statusPanel<Dict>("build", "Build information", "/api/v1/status/buildinfo", (body, d) =>
      replaceChildren(body, kv(Object.entries(d).map(([k, v]) => [k, display(v)]))),
    );
    const runtime = statusPanel<Dict>("runtime", "Runtime information", "/api/v1/status/runtimeinfo", (body, d) => {
      const start = parseRfc3339(d.startTime as string);
      replaceChildren(
        body,
        kv(
          Object.entries(d).map(([k, v]): [string, Child] =>
            k === "startTime" && Number.isFinite(start) ? [k, `${display(v)} (up ${formatAgo(start, now()).replace(" ago", "")})`] : [k, display(v)],
          ),
        ),
      );
    });
    const tsdb = statusPanel<TsdbStatus>(
      "tsdb",
      "TSDB head",
      "/api/v1/status/tsdb",
      (body, d) => {
        const hs = d.headStats ?? {};
        const min = hs.minTime !== undefined && hs.minTime > 0 ? formatTimestamp(hs.minTime / 1000) : "";
        const max = hs.maxTime !== undefined && hs.maxTime > 0 ? formatTimestamp(hs.maxTime / 1000) : "";
        replaceChildren(
          body,
          h(
            "div",
            { class: "tsdb-stats" },
            [
              ["Series", hs.numSeries],
              ["Chunks", hs.chunkCount],
              ["Label pairs", hs.numLabelPairs],
            ].map(([label, v]) =>
              h("div", { class: "stat-box" }, h("div", { class: "stat-value" }, v === undefined ? "\u2013" : Number(v).toLocaleString("en-US")), h("div", { class: "muted" }, label as string)),
            ),
            h("div", { class: "stat-box wide" }, h("div", { class: "stat-value small" }, min && max ? `${min} \u2192 ${max}` : "\u2013"), h("div", { class: "muted" }, "Head time range")),
          ),
          h(
            "div",
            { class: "top-lists" },
            topList("Top metrics by series count", d.seriesCountByMetricName),
            topList("Top labels by value count", d.labelValueCountByLabelName),
            topList("Top labels by memory", d.memoryInBytesByLabelName, "bytes"),
            topList("Top label pairs by series count", d.seriesCountByLabelValuePair),
          ),
        );
      },
      "span-full",
    );
    const flags = statusPanel<Record<string, string>>("flags", "Command-line flags", "/api/v1/status/flags", (body, d) =>
      replaceChildren(
        body,
        h(
          "table",
          { class: "data" },
          h("thead", null, h("tr", null, h("th", null, "Flag"), h("th", null, "Value"))),
          h(
            "tbody",
            null,
            Object.keys(d)
              .sort()
              .map((k) => h("tr", null, h("td", { class: "mono" }, `--${k}`), h("td", { class: "mono wrap" }, d[k] ?? ""))),
          ),
        ),
      ),
    );
    const config = statusPanel<{ yaml: string }>("config", "Configuration", "/api/v1/status/config", (body, d) =>
      replaceChildren(
        body,
        d.yaml.trim() ? h("pre", { class: "config-yaml" }, d.yaml) : h("div", { class: "panel-empty" }, "No configuration file loaded (running from flags only)."),
      ),
    );
    this.panels = [build, runtime, tsdb, flags, config];
    replaceChildren(
      root,
      h("div", { class: "page-head" }, h("h1", null, "Status")),
      h(
        "div",
        { class: "panel-grid" },
        this.panels.map((p) => p.el),
      ),
    );
  }

  update(ctx: PageContext): void {
    if (ctx.reason === "refresh") for (const p of this.panels) p.reload();
  }

  unmount(): void {
    for (const p of this.panels) p.destroy();
    this.panels = [];
  }
}

registerPage("status", () => new StatusPage(), { title: "Status", order: 70 });
