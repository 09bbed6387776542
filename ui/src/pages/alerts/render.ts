/**
 * Alerts page rendering: one `[data-testid=alert-group][data-node][data-gpu]`
 * per GPU (or node) holding its alerts side by side, each an
 * `[data-testid=alert][data-alertname][data-state][data-severity]` card with
 * severity, state, active since, summary and description annotations, the
 * value, the other labels, and the runbook link `a[data-testid=runbook]`
 * (annotation `runbook_url`). Group headings link to the GPU page.
 */
import { h } from "../../core/dom.ts";
import { hrefFor } from "../../core/router.ts";
import { formatClock } from "../../gpu/format.ts";
import { levelOfSeverity } from "../../gpu/levels.ts";
import type { AlertGroup, ApiAlert } from "./model.ts";

/** Labels shown in the heading or as fields already, or only noise on a card. */
const HIDDEN_LABELS = new Set(["alertname", "severity", "hostname", "gpu", "uuid", "simulated", "pci_bus_id", "device", "model"]);

function since(activeAt: string | undefined, nowMs: number): string {
  if (!activeAt) return "";
  const t = Date.parse(activeAt);
  if (!Number.isFinite(t)) return "";
  const s = Math.max(0, Math.round((nowMs - t) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d`;
}

/** Only http(s) runbook links become links (an annotation is user data). */
function safeUrl(u: string | undefined): string | null {
  if (!u) return null;
  try {
    const url = new URL(u, window.location.href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

function alertCard(a: ApiAlert, nowMs: number): HTMLElement {
  const name = a.labels["alertname"] ?? "alert";
  const severity = a.labels["severity"] ?? "";
  const ann = a.annotations ?? {};
  const runbook = safeUrl(ann["runbook_url"]);
  const extra = Object.entries(a.labels).filter(([k]) => !HIDDEN_LABELS.has(k));
  return h(
    "article",
    {
      class: "gm-alert",
      dataset: { testid: "alert", alertname: name, state: a.state, severity, level: levelOfSeverity(severity) },
    },
    h(
      "header",
      { class: "gm-alert-head" },
      h("span", { class: "gm-alert-name" }, name),
      h("span", { class: "gm-badge", dataset: { level: levelOfSeverity(severity) } }, severity || "no severity"),
      h("span", { class: "gm-badge gm-state", dataset: { state: a.state } }, a.state),
    ),
    h(
      "p",
      { class: "gm-alert-since", title: a.activeAt ? formatClock(Date.parse(a.activeAt)) : null },
      a.activeAt ? `active since ${formatClock(Date.parse(a.activeAt))} (${since(a.activeAt, nowMs)})` : "",
      a.value !== undefined ? ` · value ${Number.isFinite(Number(a.value)) ? Number(Number(a.value).toPrecision(4)) : a.value}` : "",
    ),
    ann["summary"] ? h("p", { class: "gm-alert-summary" }, ann["summary"]) : null,
    ann["description"] ? h("p", { class: "gm-alert-description" }, ann["description"]) : null,
    extra.length > 0 ? h("p", { class: "gm-alert-labels" }, extra.map(([k, v]) => h("code", null, `${k}=${v}`))) : null,
    runbook
      ? h("a", { class: "gm-runbook", href: runbook, target: "_blank", rel: "noopener noreferrer", dataset: { testid: "runbook" } }, "Runbook ↗")
      : null,
  );
}

function groupHeading(g: AlertGroup): HTMLElement {
  const where = g.node === "" ? "No node label" : g.node;
  const label = g.gpu === "" ? `${where} · node` : `${where} · GPU ${g.gpu}`;
  const link =
    g.node === ""
      ? label
      : h("a", { href: hrefFor("gpu", {}, { vars: { node: [g.node], gpu: g.gpu === "" ? [] : [g.gpu] } }) }, label);
  return h(
    "h2",
    { class: "gm-alert-group-head" },
    h("span", { class: "gm-level-dot", dataset: { level: g.level } }),
    link,
    h("span", { class: "gm-alert-count" }, `${g.firing} firing, ${g.alerts.length - g.firing} pending`),
  );
}

export function renderGroups(body: HTMLElement, groups: readonly AlertGroup[], nowMs: number): void {
  body.appendChild(
    h(
      "div",
      { class: "gm-alert-groups" },
      groups.map((g) =>
        h(
          "section",
          { class: "gm-alert-group", dataset: { testid: "alert-group", node: g.node, gpu: g.gpu, level: g.level } },
          groupHeading(g),
          h("div", { class: "gm-alert-cards" }, g.alerts.map((a) => alertCard(a, nowMs))),
        ),
      ),
    ),
  );
}
