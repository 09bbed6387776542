/**
 * The Training page's chart panels: what each one queries and how its
 * series are named (pure definitions; chart-panel.ts draws them).
 *
 * Contract: `query(s, w)` is ONE range query for the selection `s` with
 * rates over `[w]` seconds (queries.ts rateWindow). Series tagged
 * gm="score" are not drawn: they carry each rank's straggler score, with
 * which `straggler: true` panels colour the ranks under the threshold in
 * the critical colour (and name them "… straggler"); every other series is
 * drawn. Metric names are docs/jobs.md's.
 */
import type { Labels } from "../../core/api.ts";
import type { Unit } from "../../charts/timeseries.ts";
import { quote, regexEscape } from "../../core/promql.ts";
import { jobSelector, sel, stepTimeWithScores, tagged, type TrainingSelection } from "./queries.ts";

export interface TrainingPanelDef {
  id: string;
  title: string;
  description: string;
  unit: Unit;
  query(s: TrainingSelection, w: number): string;
  name(labels: Labels): string;
  stacked?: boolean;
  yMin?: number;
  yMax?: number;
  /** colour the straggler ranks (series tagged gm="score" give the scores) */
  straggler?: boolean;
  /** wide panel (span 2 columns) */
  wide?: boolean;
}

const rankName = (l: Labels) => `rank ${l["rank"] ?? "?"}`;

function several(metrics: readonly string[], selector: string): string {
  const inner = [`__name__=~${quote(metrics.map(regexEscape).join("|"))}`, selector].filter((x) => x !== "").join(",");
  return `{${inner}}`;
}

/** Per-step share of a counter split by `label`, summed over the selected ranks. */
function perStep(metric: string, label: string, s: TrainingSelection, w: number): string {
  const j = jobSelector(s);
  return `sum by (${label}) (rate(${sel(metric, j)}[${w}s])) / scalar(sum(rate(${sel("training_steps_total", j)}[${w}s])))`;
}

export const TRAINING_PANELS: readonly TrainingPanelDef[] = [
  {
    id: "loss",
    title: "Loss",
    description: "training_loss: the last step's loss, per rank",
    unit: "none",
    query: (s) => sel("training_loss", jobSelector(s)),
    name: rankName,
  },
  {
    id: "tokens",
    title: "Tokens per second",
    description: "rate(training_tokens_total), summed over the selected ranks",
    unit: "none",
    query: (s, w) => `sum(rate(${sel("training_tokens_total", jobSelector(s))}[${w}s]))`,
    name: () => "tokens/s",
    yMin: 0,
  },
  {
    id: "samples",
    title: "Samples per second",
    description: "rate(training_samples_total), summed over the selected ranks",
    unit: "none",
    query: (s, w) => `sum(rate(${sel("training_samples_total", jobSelector(s))}[${w}s]))`,
    name: () => "samples/s",
    yMin: 0,
  },
  {
    id: "mfu",
    title: "Model FLOPs utilisation",
    description: "training_model_flops_utilization_ratio: model FLOPs of the last step over the GPU's peak (training_peak_flops), per rank",
    unit: "ratio",
    query: (s) => sel("training_model_flops_utilization_ratio", jobSelector(s)),
    name: rankName,
    yMin: 0,
    yMax: 1,
  },
  {
    id: "step-time",
    title: "Step time per rank",
    description:
      "Each rank's time per step outside collectives (data wait + forward + optimizer sections; the whole step where a rank records no sections). Ranks whose straggler score (job:training_straggler_score:ratio1m, else computed from these times) is under the TrainingStraggler threshold are drawn red",
    unit: "seconds",
    query: (s, w) => stepTimeWithScores(s, w),
    name: rankName,
    yMin: 0,
    straggler: true,
  },
  {
    id: "sections",
    title: "Step sections",
    description: "Time per step in data wait, forward, backward, optimizer and other (training_step_section_seconds_total / training_steps_total), mean over the selected ranks",
    unit: "seconds",
    query: (s, w) => perStep("training_step_section_seconds_total", "section", s, w),
    name: (l) => l["section"] ?? "",
    stacked: true,
    yMin: 0,
  },
  {
    id: "cuda-memory",
    title: "CUDA memory",
    description: "PyTorch caching allocator: allocated and reserved bytes (torch.cuda.memory_stats), per rank",
    unit: "bytes",
    query: (s) => several(["training_cuda_memory_allocated_bytes", "training_cuda_memory_reserved_bytes"], jobSelector(s)),
    name: (l) => `${rankName(l)} ${l["__name__"] === "training_cuda_memory_reserved_bytes" ? "reserved" : "allocated"}`,
    yMin: 0,
  },
  {
    id: "fragmentation",
    title: "Memory fragmentation",
    description: "training_cuda_memory_fragmentation_ratio: inactive split bytes / reserved bytes, per rank",
    unit: "ratio",
    query: (s) => sel("training_cuda_memory_fragmentation_ratio", jobSelector(s)),
    name: rankName,
    yMin: 0,
    yMax: 1,
  },
  {
    id: "checkpoints",
    title: "Checkpoint save and load time",
    description:
      "Mean checkpoint save duration over the window (training_checkpoint_save_seconds), and the mean load duration since the job started (training_checkpoint_load_seconds: loads are rare, one per start)",
    unit: "seconds",
    query: (s, w) => {
      const j = jobSelector(s);
      const cw = Math.max(w, 300);
      const save = `sum(rate(${sel("training_checkpoint_save_seconds_sum", j)}[${cw}s])) / sum(rate(${sel("training_checkpoint_save_seconds_count", j)}[${cw}s]))`;
      const load = `sum(${sel("training_checkpoint_load_seconds_sum", j)}) / sum(${sel("training_checkpoint_load_seconds_count", j)} > 0)`;
      return `${tagged(save, "save")} or ${tagged(load, "load")}`;
    },
    name: (l) => l["gm"] ?? "",
    yMin: 0,
  },
  {
    id: "goodput",
    title: "Goodput",
    description: "Share of wall time by what it bought (training_goodput_seconds_total by category): productive, data loading, checkpointing, restart, lost progress",
    unit: "ratio",
    query: (s, w) => {
      const j = jobSelector(s);
      return `sum by (category) (rate(${sel("training_goodput_seconds_total", j)}[${w}s])) / scalar(sum(rate(${sel("training_goodput_seconds_total", j)}[${w}s])))`;
    },
    name: (l) => (l["category"] ?? "").replace(/_/g, " "),
    stacked: true,
    yMin: 0,
    yMax: 1,
  },
  {
    id: "learning-rate",
    title: "Learning rate",
    description: "training_learning_rate per parameter group (the highest over the selected ranks)",
    unit: "none",
    query: (s) => `max by (param_group) (${sel("training_learning_rate", jobSelector(s))})`,
    name: (l) => `group ${l["param_group"] ?? ""}`,
    yMin: 0,
  },
  {
    id: "grad-norm",
    title: "Gradient norm",
    description: "training_grad_norm: global L2 norm of the last step's gradients, per rank",
    unit: "none",
    query: (s) => sel("training_grad_norm", jobSelector(s)),
    name: rankName,
    yMin: 0,
  },
  {
    id: "grad-sync",
    title: "Gradient sync and overlap",
    description: "Share of step time spent in gradient all-reduces (training_grad_sync_seconds_total) and share of communication hidden behind compute (training_comm_overlap_ratio), per rank",
    unit: "ratio",
    query: (s, w) => {
      const j = jobSelector(s);
      const by = "sum by (job, rank)";
      return (
        `${tagged(`${by} (rate(${sel("training_grad_sync_seconds_total", j)}[${w}s])) / ${by} (rate(${sel("training_step_duration_seconds_sum", j)}[${w}s]))`, "sync")} or ` +
        tagged(`max by (job, rank) (${sel("training_comm_overlap_ratio", j)})`, "overlap")
      );
    },
    name: (l) => `${rankName(l)} ${l["gm"] === "overlap" ? "overlap" : "sync share"}`,
    yMin: 0,
    yMax: 1,
  },
];
