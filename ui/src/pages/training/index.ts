/**
 * The Training page (/training?var-job=<job>[&var-node=..][&rank=..]): one
 * training job's progress, speed, stragglers, memory, checkpoints, goodput
 * and GPUs, from the job metrics of docs/jobs.md.
 *
 * Contract:
 * - URL state: the job is the `job` variable (var-job), the node filter the
 *   `node` variable (matched against the job series' `node` label, which
 *   equals the GPU series' `hostname`), the rank filter the page param
 *   `rank`; time range and refresh as on every page.
 * - Header: `select[data-testid=training-job]` lists the jobs
 *   (label values of `job` on training_steps_total over the range) and
 *   `select[data-testid=training-rank]` the selected job's ranks.
 * - No job selected: the jobs panel (tables.ts) lists every job with a link.
 *   No job at all: `[data-testid=training-empty]` says how to export one.
 *   A var-job naming no training job (e.g. the GPU agents' scrape job kept
 *   from another page) shows `[data-testid=training-unknown-job]`.
 * - A job selected: the ranks table (straggler ranking, one instant query),
 *   the chart panels of panels.ts (each one range query; the step-time chart
 *   colours the straggler), and the job's GPUs (one instant query) with
 *   links to the GPU page.
 * - A change of job, node or rank rebuilds the panels; a time-range change
 *   or refresh reloads them.
 */
import { instantQuery, isAbortError, labelValues, type VectorSample } from "../../core/api.ts";
import { h, replaceChildren } from "../../core/dom.ts";
import { Panel, addPanels, trackTask, type PanelHandle } from "../../core/panel.ts";
import { quote } from "../../core/promql.ts";
import { hrefFor, registerPage, type Page, type PageContext } from "../../core/router.ts";
import { setParams, setState, type AppState } from "../../core/state.ts";
import { stepFor, type TimeRange } from "../../core/time.ts";
import { naturalCompare } from "../../core/variables.ts";
import { trainingChartPanel } from "./chart-panel.ts";
import { TRAINING_PANELS } from "./panels.ts";
import { jobGpus, jobList, rankTable, rateWindow, STRAGGLER_THRESHOLD, type TrainingSelection } from "./queries.ts";
import { compareRanks, rankRows } from "./straggler.ts";
import { jobGpuRows, jobRows, renderJobGpus, renderJobs, renderRanks } from "./tables.ts";
import "./training.css";

/** Width of the y axis and padding: the plot is this much narrower than the panel. */
const AXIS_PX = 80;

async function vector(expr: string, time: number, signal: AbortSignal): Promise<VectorSample[]> {
  const data = await instantQuery(expr, time, signal);
  return data.resultType === "vector" ? data.result : [];
}

function selectionOf(s: AppState): TrainingSelection {
  return { vars: { job: s.vars.job, node: s.vars.node }, rank: s.params["rank"] ?? "" };
}

function sameSelection(a: AppState, b: AppState): boolean {
  return JSON.stringify(selectionOf(a)) === JSON.stringify(selectionOf(b));
}

class TrainingPage implements Page {
  private state!: AppState;
  private range!: TimeRange;
  private root!: HTMLElement;
  private content!: HTMLElement;
  private grid: HTMLElement | null = null;
  private panels: PanelHandle[] = [];
  private jobSelect!: HTMLSelectElement;
  private rankSelect!: HTMLSelectElement;
  private pickers: AbortController | null = null;
  private jobs: string[] = [];
  private jobsLoaded = false;
  private ranks: string[] = [];
  private notice!: HTMLElement;

  mount(root: HTMLElement, ctx: PageContext): void {
    this.root = root;
    this.state = ctx.state;
    this.range = ctx.range;
    this.jobSelect = h("select", {
      "aria-label": "Training job",
      dataset: { testid: "training-job" },
      onChange: () => setState((s) => ({ ...s, vars: { ...s.vars, job: this.jobSelect.value ? [this.jobSelect.value] : [] }, params: {} }), { push: true }),
    });
    this.rankSelect = h("select", {
      "aria-label": "Rank",
      dataset: { testid: "training-rank" },
      onChange: () => setParams({ rank: this.rankSelect.value || null }),
    });
    this.content = h("div", { class: "gm-training-content" });
    this.notice = h("p", { class: "gm-training-notice", dataset: { testid: "training-unknown-job" }, hidden: true });
    const header = h(
      "header",
      { class: "gm-training-header" },
      h("h1", { dataset: { testid: "training-title" } }, "Training"),
      h("label", { class: "gm-inline-label" }, "Job ", this.jobSelect),
      h("label", { class: "gm-inline-label" }, "Rank ", this.rankSelect),
      h("nav", { class: "gm-training-links" }, h("a", { href: hrefFor("alerts") }, "Alerts"), h("a", { href: hrefFor("fleet", {}, { vars: { job: [] } }) }, "Fleet")),
    );
    replaceChildren(root, header, this.notice, this.content);
    this.loadPickers();
    this.build();
  }

  update(ctx: PageContext): void {
    const prev = this.state;
    this.state = ctx.state;
    this.range = ctx.range;
    const rangeChanged = prev.from !== ctx.state.from || prev.to !== ctx.state.to;
    if (!sameSelection(prev, ctx.state)) {
      this.teardown();
      this.loadPickers();
      this.build();
      return;
    }
    if (ctx.reason === "state" && !rangeChanged) return;
    if (rangeChanged || ctx.reason === "refresh") this.loadPickers();
    for (const p of this.panels) p.reload();
  }

  unmount(): void {
    this.pickers?.abort();
    this.teardown();
  }

  private teardown(): void {
    for (const p of this.panels) p.destroy();
    this.panels = [];
  }

  private job(): string {
    return this.state.vars.job[0] ?? "";
  }

  /** Query step: at most one point per pixel of the plot, never below 1 s. */
  private step(): number {
    const width = (this.grid?.querySelector(".panel-body")?.clientWidth ?? this.root.clientWidth / 2) - AXIS_PX;
    return stepFor(this.range.start, this.range.end, Math.max(100, width));
  }

  /** Fills the job and rank pickers (label values over the range); shows the empty state when there is no job. */
  private loadPickers(): void {
    this.pickers?.abort();
    const ctrl = new AbortController();
    this.pickers = ctrl;
    const start = Math.floor(this.range.start);
    const end = Math.ceil(this.range.end);
    const job = this.job();
    const work = (async () => {
      try {
        const [jobs, ranks] = await Promise.all([
          labelValues("job", ["training_steps_total"], start, end, ctrl.signal),
          job ? labelValues("rank", [`training_steps_total{job=${quote(job)}}`], start, end, ctrl.signal) : Promise.resolve([]),
        ]);
        if (ctrl.signal.aborted) return;
        this.jobs = [...jobs].sort(naturalCompare);
        this.jobsLoaded = true;
        this.ranks = [...ranks].sort(compareRanks);
        this.syncPickers();
        if (this.jobs.length === 0 && !job) this.showEmpty();
      } catch (err) {
        if (isAbortError(err)) return;
        this.jobSelect.title = `could not list jobs: ${err instanceof Error ? err.message : String(err)}`;
      }
    })();
    void trackTask(work);
  }

  private syncPickers(): void {
    const job = this.job();
    const rank = this.state.params["rank"] ?? "";
    const jobs = [...new Set([...this.jobs, ...(job ? [job] : [])])].sort(naturalCompare);
    replaceChildren(this.jobSelect, h("option", { value: "" }, jobs.length ? "Choose a job" : "No jobs"), jobs.map((j) => h("option", { value: j }, j)));
    this.jobSelect.value = job;
    const ranks = [...new Set([...this.ranks, ...(rank ? [rank] : [])])].sort(compareRanks);
    replaceChildren(this.rankSelect, h("option", { value: "" }, "All"), ranks.map((r) => h("option", { value: r }, r)));
    this.rankSelect.value = rank;
    this.rankSelect.disabled = !job;
    // var-job is shared with the GPU pages, where it is the scrape job: say so
    // when it names no training job rather than showing empty panels.
    const unknown = job !== "" && this.jobsLoaded && !this.jobs.includes(job);
    this.notice.hidden = !unknown;
    this.notice.textContent = unknown
      ? `No training job named "${job}" reports training_steps_total in this time range (the Job variable also selects the GPU agents' scrape job on the GPU pages). Choose a job above.`
      : "";
  }

  private showEmpty(): void {
    this.teardown();
    replaceChildren(
      this.content,
      h(
        "div",
        { class: "page-message", dataset: { testid: "training-empty" } },
        h("h2", null, "No training jobs in this time range"),
        h(
          "p",
          null,
          "Instrument the training loop with gpumon's Python client (clients/python: gpumon.TrainingMonitor), ",
          "then push to the node's gpumon agent or serve /metrics for the server to scrape. ",
          "The metrics and labels are listed in docs/jobs.md.",
        ),
      ),
    );
  }

  private build(): void {
    this.syncPickers();
    const job = this.job();
    const title = this.root.querySelector("[data-testid=training-title]");
    if (title) title.textContent = job ? `Training · ${job}` : "Training";
    this.grid = h("div", { class: "panel-grid gm-training-grid" });
    if (!job) {
      this.panels = [
        new Panel<VectorSample[]>({
          id: "jobs",
          title: "Training jobs",
          description: "Jobs exporting training_steps_total at the end of the range, most recently active first",
          lazy: false,
          className: "span-full",
          emptyText: "No training job reports at the end of this range: pick a longer range, or see clients/python to instrument a job.",
          load: (signal) => vector(jobList(), this.range.end, signal),
          render: (body, data) => renderJobs(body, jobRows(data), this.range.end),
        }),
      ];
      addPanels(this.grid, this.panels as Panel<unknown>[]);
      replaceChildren(this.content, this.grid);
      return;
    }
    const chartCtx = {
      selection: () => selectionOf(this.state),
      range: () => this.range,
      step: () => this.step(),
      window: () => rateWindow(this.step()),
    };
    const ranks = new Panel<VectorSample[]>({
      id: "ranks",
      title: "Ranks and stragglers",
      description: `Each rank's straggler score: the fastest rank's time in the sections without collectives over its own (job:training_straggler_score:ratio1m, else computed from the sections); under ${STRAGGLER_THRESHOLD} is a straggler`,
      lazy: false,
      className: "span-full",
      emptyText: "This job has no ranks reporting at the end of the range.",
      isEmpty: (d) => !d.some((s) => s.metric["rank"] !== undefined),
      load: (signal) => vector(rankTable(selectionOf(this.state), Math.max(rateWindow(this.step()), 120)), this.range.end, signal),
      render: (body, data) => renderRanks(body, rankRows(data, STRAGGLER_THRESHOLD), this.range.end, this.state.params["rank"] ?? ""),
    });
    const charts = TRAINING_PANELS.map((def) => trainingChartPanel(def, chartCtx));
    const gpus = new Panel<VectorSample[]>({
      id: "job-gpus",
      title: "The job's GPUs",
      description: "Utilisation and temperature of the GPUs the job runs on, with links to the GPU page",
      className: "span-full",
      emptyText: "No GPU series for this job's nodes (is the node's gpumon agent scraped?).",
      isEmpty: (d) => jobGpuRows(d).length === 0,
      load: (signal) => vector(jobGpus(selectionOf(this.state)), this.range.end, signal),
      render: (body, data) => renderJobGpus(body, jobGpuRows(data)),
    });
    this.panels = [ranks, ...charts, gpus];
    addPanels(this.grid, this.panels as Panel<unknown>[]);
    replaceChildren(this.content, this.grid);
  }
}

registerPage("training", () => new TrainingPage(), { title: "Training", order: 25 });
