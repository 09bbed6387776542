"""Training jobs: the panels an ML developer watches (loss, throughput, MFU,
step time per rank and stragglers, step sections, gradient sync, pipeline
bubbles, collectives, memory, checkpoints, goodput), next to the GPUs the job
runs on.

Metric names and labels are docs/jobs.md's (the contract between gpumon's
Python client, the agent's push ingest, the rule pack and the views); the
straggler score and the job MFU are the rule pack's recording series
(rules/gpumon-training.rules.yml). Until a job exports them, these panels show
"No data"; the GPU panels work without a job.
"""

from . import grafana as g
from . import thresholds as t
from .common import Variant

NAME = "training"
# Every job series carries job, rank, local_rank and node (docs/jobs.md).
JOB = 'job=~"$training_job", rank=~"$rank", node=~"$node"'
RATE = "[$__rate_interval]"
RANK = "{{job}} rank {{rank}}"


def _by_value(panel):
    """Colours a time series by the thresholds (a line turns red where it is
    under the straggler threshold) instead of one colour per series."""
    panel["fieldConfig"]["defaults"]["color"] = {"mode": "thresholds"}
    panel["fieldConfig"]["defaults"]["custom"]["gradientMode"] = "scheme"
    return panel


def _right_axis(ref_name_regex):
    return {"matcher": {"id": "byRegexp", "options": ref_name_regex},
            "properties": [{"id": "custom.axisPlacement", "value": "right"},
                           {"id": "unit", "value": "short"}]}


def _mean(histogram, window=RATE, by="job"):
    return (f"sum by ({by}) (rate({histogram}_sum{{{JOB}}}{window})) / sum by ({by}) "
            f"(rate({histogram}_count{{{JOB}}}{window}))")


def _progress(lay):
    lay.row("Progress")
    lay.add(g.timeseries("Loss", "training_loss: the last step's loss, per rank.",
                         g.targets((f"training_loss{{{JOB}}}", RANK)), "none"), 12, 8)
    lay.add(g.timeseries("Throughput", "Tokens and samples per second, summed over the "
                         "selected ranks (training_tokens_total, training_samples_total).",
                         g.targets((f"sum by (job) (rate(training_tokens_total{{{JOB}}}{RATE}))",
                                    "{{job}} tokens/s"),
                                   (f"sum by (job) (rate(training_samples_total{{{JOB}}}{RATE}))",
                                    "{{job}} samples/s")),
                         "short", min_=0,
                         overrides=[_right_axis(".* samples/s")]), 12, 8)
    lay.add(g.timeseries("Model FLOPs utilisation", "MFU of each rank's last step "
                         "(training_model_flops_utilization_ratio: model FLOPs over the GPU's "
                         "peak, training_peak_flops), and the whole job's over 5 minutes from "
                         "the rule pack (job:training_mfu:ratio_rate5m, which "
                         "TrainingMFUDrop compares with the job's past).",
                         g.targets((f"training_model_flops_utilization_ratio{{{JOB}}}", RANK),
                                   ('job:training_mfu:ratio_rate5m{job=~"$training_job"}',
                                    "{{job}} job (5m)")),
                         "percentunit", min_=0, max_=1), 12, 8)
    lay.add(g.timeseries("Learning rate and gradient norm", "training_learning_rate per "
                         "parameter group (from the optimizer) and training_grad_norm (global "
                         "L2 norm of the last step's gradients), highest over the ranks.",
                         g.targets((f"max by (job, param_group) (training_learning_rate{{{JOB}}})",
                                    "{{job}} learning rate {{param_group}}"),
                                   (f"max by (job) (training_grad_norm{{{JOB}}})",
                                    "{{job}} gradient norm")),
                         "none", overrides=[_right_axis(".* gradient norm")]), 12, 8)


def _stragglers(lay):
    lay.row("Step time and stragglers")
    lay.add(g.timeseries("Step time per rank", "Mean wall time of a step of each rank "
                         "(training_step_duration_seconds). In synchronous data parallelism "
                         "every rank's step takes as long as the slowest rank's: the straggler "
                         "score tells who that is.",
                         g.targets((_mean("training_step_duration_seconds", by="job, rank"),
                                    RANK)),
                         "s", min_=0), 12, 8)
    score = ("min by (job, rank) (job:training_straggler_score:ratio1m"
             f"{{{JOB}}})")
    thr = g.thresholds((t.STRAGGLER_SCORE_WARNING, g.OK), base=g.CRITICAL)
    lay.add(g.bargauge("Straggler score per rank", "The rule pack's straggler score "
                       "(job:training_straggler_score:ratio1m): in the sections without "
                       "collectives (data wait, forward, optimizer), the fastest rank's time "
                       "over this rank's; 1 = as fast as the fastest. Red: under "
                       f"{t.STRAGGLER_SCORE_WARNING}, where TrainingStraggler fires; every "
                       "rank waits for it at the next all-reduce.",
                       g.targets((score, RANK)), "none", thr=thr, min_=0, max_=1), 12, 8)
    lay.add(_by_value(g.timeseries(
        "Straggler score over time", "The same score over time; a line turns red while the "
        f"rank scores under {t.STRAGGLER_SCORE_WARNING} (the TrainingStraggler threshold, "
        "dashed).",
        g.targets((score, RANK)), "none", thr=thr, threshold_style="dashed", min_=0,
        max_=1)), 12, 8)
    lay.add(g.timeseries("Step sections", "Time per step in data wait, forward, backward, "
                         "optimizer and other (training_step_section_seconds_total per "
                         "training_steps_total), mean over the selected ranks.",
                         g.targets((f"sum by (job, section) (rate(training_step_section_seconds_"
                                    f"total{{{JOB}}}{RATE})) / on (job) group_left () sum by (job) "
                                    f"(rate(training_steps_total{{{JOB}}}{RATE}))",
                                    "{{job}} {{section}}")),
                         "s", stack=True, min_=0), 12, 8)
    lay.add(g.timeseries("Gradient sync and overlap", "Share of step time with gradient "
                         "all-reduces in flight (training_grad_sync_seconds_total over the step "
                         "time), and share of the last step's communication hidden behind "
                         "compute (training_comm_overlap_ratio), per rank.",
                         g.targets((f"sum by (job, rank) (rate(training_grad_sync_seconds_total"
                                    f"{{{JOB}}}{RATE})) / sum by (job, rank) (rate(training_step_"
                                    f"duration_seconds_sum{{{JOB}}}{RATE}))",
                                    RANK + " sync share"),
                                   (f"training_comm_overlap_ratio{{{JOB}}}", RANK + " overlap")),
                         "percentunit", min_=0, max_=1), 12, 8)
    lay.add(g.timeseries("Pipeline bubble", "training_pipeline_bubble_ratio: 1 - busy time / "
                         "step time of each pipeline stage (jobs that run a pipeline "
                         "schedule).",
                         g.targets((f"training_pipeline_bubble_ratio{{{JOB}}}",
                                    RANK + " stage {{stage}}")),
                         "percentunit", min_=0, max_=1), 12, 8)
    lay.add(g.timeseries("Collectives", "Sequence number of the last collective each rank "
                         "started (training_collective_sequence{state=\"started\"}), and how "
                         "many it started but has not completed (right axis): a rank that "
                         "stops advancing, or keeps one in flight, is hung (TrainingCollectiveHang).",
                         g.targets((f'training_collective_sequence{{{JOB}, state="started"}}',
                                    RANK + " started"),
                                   (f'training_collective_sequence{{{JOB}, state="started"}} - '
                                    f'ignoring (state) training_collective_sequence{{{JOB}, '
                                    'state="completed"}', RANK + " in flight")),
                         "none", min_=0, overrides=[_right_axis(".* in flight")]), 24, 8)


def _memory_and_checkpoints(lay):
    lay.row("Memory, checkpoints, goodput")
    lay.add(g.timeseries("CUDA memory per rank", "PyTorch's caching allocator "
                         "(torch.cuda.memory_stats): allocated and reserved bytes now, and the "
                         "allocated peak.",
                         g.targets((f"training_cuda_memory_allocated_bytes{{{JOB}}}",
                                    RANK + " allocated"),
                                   (f"training_cuda_memory_reserved_bytes{{{JOB}}}",
                                    RANK + " reserved"),
                                   (f"training_cuda_memory_allocated_peak_bytes{{{JOB}}}",
                                    RANK + " allocated peak")),
                         "bytes", min_=0, overrides=[g.dashed_override(".* peak")]), 8, 8)
    lay.add(g.timeseries("Memory fragmentation", "training_cuda_memory_fragmentation_ratio: "
                         "inactive split bytes over reserved bytes.",
                         g.targets((f"training_cuda_memory_fragmentation_ratio{{{JOB}}}", RANK)),
                         "percentunit", min_=0, max_=1), 8, 8)
    lay.add(g.timeseries("Allocator retries and OOMs", "cudaMalloc retries of the caching "
                         "allocator (it freed its cache to satisfy a request: memory is "
                         "tight) and out-of-memory errors, per interval "
                         "(training_cuda_alloc_retries_total, training_cuda_ooms_total).",
                         g.targets((f"sum by (job, rank) (increase(training_cuda_alloc_retries_"
                                    f"total{{{JOB}}}{RATE}))", RANK + " retries"),
                                   (f"sum by (job, rank) (increase(training_cuda_ooms_total"
                                    f"{{{JOB}}}{RATE}))", RANK + " OOMs")),
                         "short", min_=0, draw="bars"), 8, 8)
    lay.add(g.timeseries("Checkpoint save and load time", "Mean checkpoint save and load "
                         "duration (training_checkpoint_save_seconds, "
                         "training_checkpoint_load_seconds).",
                         g.targets((_mean("training_checkpoint_save_seconds"), "{{job}} save"),
                                   (_mean("training_checkpoint_load_seconds"), "{{job}} load")),
                         "s", min_=0), 12, 8)
    lay.add(g.stat("Since the last checkpoint", "Time since the last checkpoint was saved "
                   "(training_last_checkpoint_timestamp_seconds), and the step it saved "
                   "(training_last_checkpoint_step): the progress a crash now would lose.",
                   g.targets((f"time() - max by (job) (training_last_checkpoint_timestamp_"
                              f"seconds{{{JOB}}})", "{{job}} since the last checkpoint")),
                   "s", thr=g.thresholds(base=g.NEUTRAL)), 6, 8)
    lay.add(g.stat("Last checkpoint step", "training_last_checkpoint_step: the optimizer step "
                   "of the last saved checkpoint.",
                   g.targets((f"max by (job) (training_last_checkpoint_step{{{JOB}}})",
                              "{{job}}")),
                   "none", thr=g.thresholds(base=g.NEUTRAL)), 6, 8)
    lay.add(g.timeseries("Goodput", "Share of wall time by what it bought "
                         "(training_goodput_seconds_total by category): productive, data "
                         "loading, checkpointing, restart, lost progress.",
                         g.targets((f"sum by (job, category) (rate(training_goodput_seconds_total"
                                    f"{{{JOB}}}{RATE})) / on (job) group_left () sum by (job) "
                                    f"(rate(training_goodput_seconds_total{{{JOB}}}{RATE}))",
                                    "{{job}} {{category}}")),
                         "percentunit", stack=True, min_=0, max_=1), 24, 8)


def _gpus(lay, ops):
    # The GPUs the agent joined the job's ranks to (hostname and gpu on the
    # job series, docs/jobs.md), and every GPU of the job's nodes.
    joined = ('count by (hostname, gpu) (training_info{job=~"$training_job", rank=~"$rank", '
              'node=~"$node", gpu!=""})')
    link = [g.dashboard_link("GPU operations", ops, "Per-GPU detail")]
    lay.row("The job's GPUs")
    lay.add(g.timeseries("Utilisation of the job's GPUs", "GPU utilisation of the GPUs the "
                         "job's ranks run on (joined by hostname and gpu), and the mean of "
                         "every GPU of the job's nodes.",
                         g.targets((f"avg by (hostname, gpu) (gpu_utilization_ratio and on "
                                    f"(hostname, gpu) {joined})", "{{hostname}} GPU {{gpu}}"),
                                   ('avg by (hostname) (gpu_utilization_ratio{hostname=~"$node"})',
                                    "{{hostname}} all GPUs")),
                         "percentunit", min_=0, max_=1, links=link), 12, 8)
    lay.add(g.timeseries("Temperature of the job's GPUs", "Die temperature of the GPUs the "
                         "job's ranks run on (joined by hostname and gpu); a straggler's GPU "
                         "that runs hot may be slowed by it.",
                         g.targets((f"max by (hostname, gpu) (gpu_temperature_celsius and on "
                                    f"(hostname, gpu) {joined})", "{{hostname}} GPU {{gpu}}")),
                         "celsius", links=link), 12, 8)


def build(variant: Variant):
    lay = g.Layout()
    _progress(lay)
    _stragglers(lay)
    _memory_and_checkpoints(lay)
    _gpus(lay, variant.uid("operations"))
    variables = [
        g.datasource_variable(),
        g.query_variable("training_job", "Job", "label_values(training_steps_total, job)",
                         "The training job (the job label of its metrics)."),
        g.query_variable("node", "Node", 'label_values(training_steps_total{job=~"$training_job"}, '
                         "node)", "Nodes the job runs on (its node label, the GPUs' hostname)."),
        g.query_variable("rank", "Rank", 'label_values(training_steps_total{job=~"$training_job", '
                         'node=~"$node"}, rank)', "The job's ranks."),
    ]
    return g.dashboard(
        variant.uid(NAME), variant.title("Training jobs"),
        variant.describe("Loss, throughput, MFU, step time and stragglers per rank, gradient "
                         "sync, pipeline bubbles, collectives, memory, checkpoints and goodput "
                         "of training jobs (docs/jobs.md: gpumon's Python client), with the "
                         "GPUs they run on; the straggler score and job MFU are the rule "
                         "pack's records (rules/gpumon-training.rules.yml)."),
        variant.tags(NAME), variables, lay, variant.links(), time_from="now-3h")
