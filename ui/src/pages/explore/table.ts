/**
 * The Explore table view of an instant-query result.
 *
 * Contract: `renderResultTable(body, result)` writes a table with one
 * `tr[data-testid=result-row]` per series (vector/matrix) or one row for a
 * scalar/string, with `data-series` holding the series text. Series are
 * shown as `name{label="value", ...}` with labels sorted; matrix rows list
 * every sample as `value @ time`. At most `limit` rows are drawn (a note says
 * how many were left out) so a huge result cannot freeze the page.
 */
import { type Labels, type QueryResult } from "../../core/api.ts";
import { h, replaceChildren } from "../../core/dom.ts";
import { formatTimestamp } from "../../core/time.ts";

export function seriesText(m: Labels): string {
  const name = m.__name__ ?? "";
  const rest = Object.keys(m)
    .filter((k) => k !== "__name__")
    .sort()
    .map((k) => `${k}="${m[k]}"`);
  return `${name}{${rest.join(", ")}}`;
}

export function resultCount(r: QueryResult): number {
  return r.resultType === "vector" || r.resultType === "matrix" ? r.result.length : 1;
}

export function renderResultTable(body: HTMLElement, r: QueryResult, limit = 2000): void {
  const rows: HTMLElement[] = [];
  const row = (series: string, value: HTMLElement | string) =>
    h(
      "tr",
      { "data-testid": "result-row", "data-series": series },
      h("td", { class: "mono wrap" }, series),
      h("td", { class: "num result-value" }, value),
    );
  if (r.resultType === "vector") {
    for (const s of r.result.slice(0, limit)) rows.push(row(seriesText(s.metric), s.value ? s.value[1] : s.histogram ? "(native histogram)" : ""));
  } else if (r.resultType === "matrix") {
    for (const s of r.result.slice(0, limit)) {
      const vals = h(
        "div",
        { class: "sample-list" },
        (s.values ?? []).map(([t, v]) => h("div", null, `${v} @ ${formatTimestamp(t)}`)),
      );
      rows.push(row(seriesText(s.metric), vals));
    }
  } else {
    rows.push(row(r.resultType, r.result[1]));
  }
  const total = resultCount(r);
  replaceChildren(
    body,
    h(
      "table",
      { class: "data", "data-testid": "result-table" },
      h("thead", null, h("tr", null, h("th", null, "Series"), h("th", null, "Value"))),
      h("tbody", null, rows),
    ),
    total > limit ? h("div", { class: "muted" }, `Showing ${limit} of ${total} series.`) : null,
  );
}
