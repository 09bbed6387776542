/**
 * PromQL of the Training page, built from the page's selection (pure).
 *
 * Contract:
 * - Names and labels are docs/jobs.md's: every job series carries `job`,
 *   `rank`, `local_rank`, `node` (= the GPU series' `hostname`) and, when the
 *   agent joined the pushing process to one GPU, `hostname` and `gpu`.
 * - `jobSelector(sel)` is the inside of a selector (no braces): `job` from
 *   var-job, `node` from var-node, `rank` from the page param; "" = All.
 *   `scoreSelector(sel)` keeps only the job: a rank is scored against every
 *   rank of its job, whatever the node / rank filter shows.
 * - `rateWindow(step)` is the `[..]` window of rates on a range query's
 *   grid: at least four steps and a minute, so every point sees several
 *   scrapes or pushes.
 * - Queries that return several kinds of series in ONE request tag each kind
 *   with the label `gm` (`tagged(expr, kind)`), so a panel splits them
 *   without relying on `__name__` surviving functions.
 * - Straggler score (`stragglerScore`): the rule pack's recording series
 *   `STRAGGLER_RECORD` (rules/gpumon-training.rules.yml: per section free of
 *   collectives, the fastest rank's time over this rank's, the lowest
 *   section that costs the rank over 10 % of its step; 1 = as fast as the
 *   fastest, lower = slower) where it exists; for jobs without it (the rule
 *   pack not loaded, or not evaluated yet) a simpler ratio computed here
 *   from the raw series: the fastest rank's `stepTime` over the rank's own.
 */
import { matcher, quote, withMatchers } from "../../core/promql.ts";
import type { Vars } from "../../core/state.ts";

/** The rule pack's per-rank straggler score (1 = fastest rank, lower = slower). */
export const STRAGGLER_RECORD = "job:training_straggler_score:ratio1m";
/** A rank scoring below this is highlighted as a straggler (the rule pack's TrainingStraggler threshold). */
export const STRAGGLER_THRESHOLD = 0.7;

export interface TrainingSelection {
  vars: Pick<Vars, "job" | "node">;
  /** the `rank` page param ("" = every rank) */
  rank: string;
}

export function jobSelector(sel: TrainingSelection): string {
  return withMatchers(matcher("job", sel.vars.job), matcher("node", sel.vars.node), matcher("rank", sel.rank ? [sel.rank] : []));
}

export function scoreSelector(sel: TrainingSelection): string {
  return matcher("job", sel.vars.job);
}

/** `metric{selector}`, or just `metric` with an empty selector. */
export function sel(metric: string, selector: string, ...extra: string[]): string {
  const inner = withMatchers(selector, ...extra);
  return inner === "" ? metric : `${metric}{${inner}}`;
}

/** Rate window (seconds) for a range query at `step`. */
export function rateWindow(step: number): number {
  return Math.max(60, Math.ceil(4 * step));
}

/** Tags every series of `expr` with gm=<kind>. */
export function tagged(expr: string, kind: string): string {
  return `label_replace(${expr}, "gm", ${quote(kind)}, "", "")`;
}

/**
 * The sections without collectives, as the rule pack scores them: backward
 * holds DDP's gradient all-reduce, where fast ranks wait for the slowest,
 * and `other` can hold waits too.
 */
export const SCORED_SECTIONS = ["data_wait", "forward", "optimizer"] as const;

/**
 * Time per step of each rank over `[w]` seconds: its SCORED_SECTIONS per
 * step where it records sections, else its mean step duration. In
 * synchronous data parallelism every rank's step takes as long as the
 * slowest one's, so only the time outside collectives tells them apart.
 */
export function stepTime(selector: string, w: number): string {
  const by = "sum by (job, rank, node)";
  const sections = sel("training_step_section_seconds_total", selector, `section=~"${SCORED_SECTIONS.join("|")}"`);
  const compute = `${by} (rate(${sections}[${w}s])) / ${by} (rate(${sel("training_steps_total", selector)}[${w}s]))`;
  const whole =
    `${by} (rate(${sel("training_step_duration_seconds_sum", selector)}[${w}s]))` +
    ` / ${by} (rate(${sel("training_step_duration_seconds_count", selector)}[${w}s]))`;
  return `(${compute}) or (${whole})`;
}

/** Per-rank straggler score (see the contract): the record, else the raw ratio. */
export function stragglerScore(selector: string, w: number): string {
  const t = stepTime(selector, w);
  const raw = `min by (job) (${t}) / on (job) group_right () (${t})`;
  return `max by (job, rank) (${sel(STRAGGLER_RECORD, selector)}) or max by (job, rank) (${raw})`;
}

/** Step time per rank (gm="step") with each rank's score (gm="score"), for the step-time chart. */
export function stepTimeWithScores(s: TrainingSelection, w: number): string {
  return `${tagged(stepTime(jobSelector(s), w), "step")} or ${tagged(stragglerScore(scoreSelector(s), w), "score")}`;
}

/** The rule pack's per-section score (the sections it scores), one series per rank and section. */
export const SECTION_RECORD = "job:training_straggler_score:section_ratio1m";

/**
 * The ranks table: score, mean step time, steps done, the last step's
 * time, the GPU (hostname + gpu) per rank; the rule pack's score per section
 * (gm="section", to name the slow section); and the clock event reasons
 * active on the ranks' GPUs (gm="reason", by hostname + gpu, without
 * `gpu_idle`): the GPU-side cause of a straggler, when there is one.
 */
export function rankTable(s: TrainingSelection, w: number): string {
  const job = scoreSelector(s);
  const joined = sel("training_steps_total", job, 'gpu!=""');
  return [
    tagged(stragglerScore(job, w), "score"),
    tagged(stepTime(job, w), "step"),
    tagged(`max by (job, rank, node) (${sel("training_steps_total", job)})`, "steps"),
    tagged(`max by (job, rank, node) (${sel("training_last_step_timestamp_seconds", job)})`, "last"),
    tagged(`max by (job, rank, node, hostname, gpu) (${joined})`, "gpu"),
    tagged(`min by (job, rank, section) (${sel(SECTION_RECORD, job)})`, "section"),
    tagged(
      `max by (hostname, gpu, reason) ((gpu_clock_event_reason_active{reason!="gpu_idle"} == 1) and on (hostname, gpu) ${joined})`,
      "reason",
    ),
  ].join(" or ");
}

/** Jobs known to the server: ranks, steps and last step, per job (the job list). */
export function jobList(): string {
  return [
    tagged("count by (job) (training_steps_total)", "ranks"),
    tagged("max by (job) (training_steps_total)", "steps"),
    tagged("max by (job) (training_last_step_timestamp_seconds)", "last"),
  ].join(" or ");
}

/**
 * The job's GPUs: utilisation and temperature of the GPUs its ranks were
 * joined to (hostname + gpu on the job series); for ranks without the join,
 * every GPU of their nodes (node = hostname). Rows are tagged gm=util|temp,
 * and gm=rank holds which rank runs on which GPU.
 */
export function jobGpus(s: TrainingSelection): string {
  const job = jobSelector(s);
  const joined = `count by (hostname, gpu) (${sel("training_steps_total", job, 'gpu!=""')})`;
  const nodes = `count by (hostname) (label_replace(${sel("training_steps_total", job)}, "hostname", "$1", "node", "(.+)"))`;
  const of = (metric: string) => `(${metric} and on (hostname, gpu) ${joined}) or ((${metric} and on (hostname) ${nodes}) unless on (hostname) ${joined})`;
  return [
    tagged(of("gpu_utilization_ratio"), "util"),
    tagged(of("gpu_temperature_celsius"), "temp"),
    tagged(`count by (hostname, gpu, rank) (${sel("training_steps_total", job, 'gpu!=""')})`, "rank"),
  ].join(" or ");
}
