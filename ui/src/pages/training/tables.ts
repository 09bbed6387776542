/**
 * The Training page's tables: the ranks (straggler ranking), the job's
 * GPUs, and the list of jobs. Models are pure; render* draw them.
 *
 * Contract (DOM, for the browser tests):
 * - ranks: `table[data-testid=training-ranks]`, one
 *   `tr[data-testid=rank-row][data-rank][data-score][data-straggler=true|false]`
 *   per rank, slowest first; the worst straggler also has `data-worst=true`;
 *   `td[data-testid=rank-section]` names its slowest section (the rule
 *   pack's section score) and `td[data-testid=rank-gpu-reasons][data-reasons=a,b]`
 *   the clock event reasons active on its GPU.
 * - GPUs: `table[data-testid=training-gpus]`, one
 *   `tr[data-testid=job-gpu][data-node][data-gpu]` per GPU with a link to
 *   the GPU page (/gpu?var-node=..&var-gpu=.., the job variable cleared).
 * - jobs: `ul[data-testid=training-jobs]`, `a[data-testid=training-job-link][data-job]`.
 */
import { parseSampleValue, type VectorSample } from "../../core/api.ts";
import { h } from "../../core/dom.ts";
import { hrefFor } from "../../core/router.ts";
import { formatDuration } from "../../core/time.ts";
import { formatValue } from "../../charts/format.ts";
import { naturalCompare } from "../../core/variables.ts";
import { compareRanks, type RankRow } from "./straggler.ts";

function finite(v: string): number | undefined {
  const x = parseSampleValue(v);
  return Number.isFinite(x) ? x : undefined;
}

function ago(t: number | undefined, now: number): string {
  if (t === undefined) return "—";
  const d = Math.max(0, Math.round(now - t));
  return d === 0 ? "now" : `${formatDuration(d)} ago`;
}

const gpuLink = (node: string, gpu: string) => hrefFor("gpu", {}, { vars: { node: [node], gpu: [gpu], job: [] } });

export function renderRanks(body: HTMLElement, rows: readonly RankRow[], now: number, selectedRank: string): void {
  body.appendChild(
    h(
      "table",
      { class: "data gm-ranks", dataset: { testid: "training-ranks" } },
      h(
        "thead",
        null,
        h("tr", null, ["Rank", "Score", "Slowest section", "Step time", "Steps", "Last step", "Node", "GPU", "GPU clock events"].map((t) => h("th", null, t))),
      ),
      h(
        "tbody",
        null,
        rows.map((r) =>
          h(
            "tr",
            {
              class: `gm-rank-row${r.straggler ? " is-straggler" : ""}${r.rank === selectedRank ? " is-selected" : ""}`,
              dataset: {
                testid: "rank-row",
                rank: r.rank,
                score: r.score !== undefined ? r.score.toFixed(3) : null,
                straggler: r.straggler ? "true" : "false",
                worst: r.worst ? "true" : null,
              },
            },
            h("td", null, r.rank, r.straggler ? h("span", { class: "gm-straggler-badge" }, "straggler") : null),
            h("td", { class: "num" }, r.score !== undefined ? r.score.toFixed(2) : "—"),
            h(
              "td",
              { dataset: { testid: "rank-section", section: r.slowSection ?? "" } },
              r.slowSection !== undefined ? `${r.slowSection.replace(/_/g, " ")} (${(r.slowSectionScore ?? 0).toFixed(2)})` : "—",
            ),
            h("td", { class: "num" }, formatValue(r.stepSeconds, "seconds")),
            h("td", { class: "num" }, r.steps !== undefined ? String(Math.round(r.steps)) : "—"),
            h("td", { class: "num" }, ago(r.lastStep, now)),
            h("td", null, r.node || "—"),
            h("td", null, r.hostname !== undefined && r.gpu !== undefined ? h("a", { href: gpuLink(r.hostname, r.gpu) }, `GPU ${r.gpu}`) : "—"),
            h(
              "td",
              {
                class: r.gpuReasons.length ? "gm-gpu-reasons" : "",
                dataset: { testid: "rank-gpu-reasons", reasons: r.gpuReasons.join(",") },
                title: "Clock event reasons active on the rank's GPU (gpu_clock_event_reason_active, gpu_idle left out)",
              },
              r.hostname === undefined ? "no GPU labels" : r.gpuReasons.length ? r.gpuReasons.join(", ").replace(/_/g, " ") : "none",
            ),
          ),
        ),
      ),
    ),
  );
}

export interface JobGpuRow {
  node: string;
  gpu: string;
  utilization?: number;
  temperature?: number;
  ranks: string[];
}

/** Rows of the job's GPUs from the gm-tagged samples of queries.ts jobGpus, by node then GPU. */
export function jobGpuRows(samples: readonly VectorSample[]): JobGpuRow[] {
  const rows = new Map<string, JobGpuRow>();
  for (const s of samples) {
    const node = s.metric["hostname"];
    const gpu = s.metric["gpu"];
    if (node === undefined || gpu === undefined) continue;
    const key = `${node}\u0000${gpu}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { node, gpu, ranks: [] }));
    const v = s.value ? finite(s.value[1]) : undefined;
    if (s.metric["gm"] === "util") row.utilization = v;
    else if (s.metric["gm"] === "temp") row.temperature = v;
    else if (s.metric["gm"] === "rank" && s.metric["rank"] !== undefined && !row.ranks.includes(s.metric["rank"])) row.ranks.push(s.metric["rank"]);
  }
  const list = [...rows.values()].filter((r) => r.utilization !== undefined || r.temperature !== undefined);
  for (const r of list) r.ranks.sort(compareRanks);
  return list.sort((a, b) => naturalCompare(a.node, b.node) || naturalCompare(a.gpu, b.gpu));
}

export function renderJobGpus(body: HTMLElement, rows: readonly JobGpuRow[]): void {
  const joined = rows.some((r) => r.ranks.length > 0);
  body.append(
    h(
      "p",
      { class: "gm-table-note" },
      joined
        ? "The GPUs the agent joined the job's processes to (hostname and gpu labels on the job's series)."
        : "Every GPU of the job's nodes: the job's series carry no GPU labels (the agent adds them when a process uses exactly one GPU).",
    ),
    h(
      "table",
      { class: "data", dataset: { testid: "training-gpus" } },
      h("thead", null, h("tr", null, ["Node", "GPU", "Ranks", "Utilisation", "Temperature"].map((t) => h("th", null, t)))),
      h(
        "tbody",
        null,
        rows.map((r) =>
          h(
            "tr",
            { dataset: { testid: "job-gpu", node: r.node, gpu: r.gpu } },
            h("td", null, r.node),
            h("td", null, h("a", { href: gpuLink(r.node, r.gpu) }, `GPU ${r.gpu}`)),
            h("td", null, r.ranks.length ? r.ranks.join(", ") : "—"),
            h("td", { class: "num" }, formatValue(r.utilization, "ratio")),
            h("td", { class: "num" }, formatValue(r.temperature, "celsius")),
          ),
        ),
      ),
    ),
  );
}

export interface JobRow {
  job: string;
  ranks?: number;
  steps?: number;
  lastStep?: number;
}

export function jobRows(samples: readonly VectorSample[]): JobRow[] {
  const rows = new Map<string, JobRow>();
  for (const s of samples) {
    const job = s.metric["job"];
    if (job === undefined) continue;
    let row = rows.get(job);
    if (!row) rows.set(job, (row = { job }));
    const v = s.value ? finite(s.value[1]) : undefined;
    if (s.metric["gm"] === "ranks") row.ranks = v;
    else if (s.metric["gm"] === "steps") row.steps = v;
    else if (s.metric["gm"] === "last") row.lastStep = v;
  }
  // most recently active first
  return [...rows.values()].sort((a, b) => (b.lastStep ?? 0) - (a.lastStep ?? 0) || naturalCompare(a.job, b.job));
}

export function renderJobs(body: HTMLElement, rows: readonly JobRow[], now: number): void {
  body.appendChild(
    h(
      "ul",
      { class: "gm-jobs", dataset: { testid: "training-jobs" } },
      rows.map((r) =>
        h(
          "li",
          null,
          h("a", { href: hrefFor("training", {}, { vars: { job: [r.job] } }), dataset: { testid: "training-job-link", job: r.job } }, r.job),
          h(
            "span",
            { class: "gm-job-meta" },
            `${r.ranks ?? "?"} rank${r.ranks === 1 ? "" : "s"} · ${r.steps !== undefined ? Math.round(r.steps) : "?"} steps · last step ${ago(r.lastStep, now)}`,
          ),
        ),
      ),
    ),
  );
}
