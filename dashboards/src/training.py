"""Training jobs: the panels an ML developer watches (loss, throughput, step
time per rank, MFU, memory, checkpoints, goodput), next to the GPUs the job
runs on.

The job metrics are the ones planned by issue 12 (the Python client and push
ingest); their names are listed in docs/dashboards.md. Until a job exports
them, these panels show "No data"; the GPU panels work today.
"""

from . import grafana as g
from .common import Variant

NAME = "training"
# Every job series carries job, rank, local_rank and node (issue 12).
JOB = 'job=~"$training_job", rank=~"$rank", node=~"$node"'
RATE = "[$__rate_interval]"


def build(variant: Variant):
    lay = g.Layout()
    ops = variant.uid("operations")

    lay.row("Progress")
    lay.add(g.timeseries("Loss", "Training loss reported by each rank.",
                         g.targets((f"training_loss{{{JOB}}}", "{{job}} rank {{rank}}")),
                         "none"), 12, 8)
    lay.add(g.timeseries("Throughput", "Tokens and samples per second, whole job.",
                         g.targets((f"sum by (job) (rate(training_tokens_total{{{JOB}}}{RATE}))",
                                    "{{job}} tokens/s"),
                                   (f"sum by (job) (rate(training_samples_total{{{JOB}}}{RATE}))",
                                    "{{job}} samples/s")),
                         "short"), 12, 8)
    lay.add(g.timeseries("Model FLOPs utilisation", "MFU per rank: achieved model FLOPs over "
                         "the GPU's peak.",
                         g.targets((f"training_model_flops_utilization_ratio{{{JOB}}}",
                                    "{{job}} rank {{rank}}")),
                         "percentunit", min_=0, max_=1), 12, 8)
    lay.add(g.timeseries("Learning rate and gradient norm", "From the optimizer and the global "
                         "gradient norm of each step.",
                         g.targets((f"max by (job) (training_learning_rate{{{JOB}}})",
                                    "{{job}} learning rate"),
                                   (f"max by (job) (training_grad_norm{{{JOB}}})",
                                    "{{job}} gradient norm")),
                         "none"), 12, 8)

    lay.row("Step time and stragglers")
    lay.add(g.timeseries("Step time per rank", "Mean step time of each rank over the interval; "
                         "a rank far above the others holds the job back.",
                         g.targets((f"rate(training_step_duration_seconds_sum{{{JOB}}}{RATE}) / "
                                    f"rate(training_step_duration_seconds_count{{{JOB}}}{RATE})",
                                    "{{job}} rank {{rank}}")),
                         "s", min_=0), 12, 8)
    lay.add(g.bargauge("Slowest rank against the fastest", "Each rank's mean step time over the "
                       "range divided by the fastest rank's (1 = as fast as the fastest).",
                       g.targets((f"sum by (job, rank) (increase(training_step_duration_seconds_sum"
                                  f"{{{JOB}}}[$__range])) / sum by (job, rank) (increase("
                                  f"training_step_duration_seconds_count{{{JOB}}}[$__range])) / "
                                  "on (job) group_left () min by (job) (sum by (job, rank) ("
                                  f"increase(training_step_duration_seconds_sum{{{JOB}}}"
                                  "[$__range])) / sum by (job, rank) (increase("
                                  f"training_step_duration_seconds_count{{{JOB}}}[$__range])))",
                                  "{{job}} rank {{rank}}")),
                       "none", min_=1), 12, 8)
    lay.add(g.timeseries("Step sections", "Time per step in data wait, forward, backward and "
                         "optimizer, whole job.",
                         g.targets((f"sum by (job, section) (rate(training_step_section_seconds_"
                                    f"total{{{JOB}}}{RATE})) / on (job) group_left () sum by (job) "
                                    f"(rate(training_steps_total{{{JOB}}}{RATE}))",
                                    "{{job}} {{section}}")),
                         "s", stack=True, min_=0), 24, 8)

    lay.row("Memory, checkpoints, goodput")
    lay.add(g.timeseries("CUDA memory per rank", "Allocated and reserved memory of PyTorch's "
                         "caching allocator.",
                         g.targets((f"training_cuda_memory_allocated_bytes{{{JOB}}}",
                                    "{{job}} rank {{rank}} allocated"),
                                   (f"training_cuda_memory_reserved_bytes{{{JOB}}}",
                                    "{{job}} rank {{rank}} reserved")),
                         "bytes", min_=0), 8, 8)
    lay.add(g.timeseries("Memory fragmentation", "Inactive split bytes over reserved bytes.",
                         g.targets((f"training_cuda_memory_fragmentation_ratio{{{JOB}}}",
                                    "{{job}} rank {{rank}}")),
                         "percentunit", min_=0, max_=1), 8, 8)
    lay.add(g.timeseries("Checkpoint save time", "Mean checkpoint save duration.",
                         g.targets((f"sum by (job) (rate(training_checkpoint_save_seconds_sum"
                                    f"{{{JOB}}}{RATE})) / sum by (job) (rate("
                                    f"training_checkpoint_save_seconds_count{{{JOB}}}{RATE}))",
                                    "{{job}}")),
                         "s", min_=0), 8, 8)
    lay.add(g.timeseries("Goodput", "Share of wall time that was productive, and time lost by "
                         "cause.",
                         g.targets((f"sum by (job, category) (rate(training_goodput_seconds_total"
                                    f"{{{JOB}}}{RATE})) / on (job) group_left () sum by (job) "
                                    f"(rate(training_goodput_seconds_total{{{JOB}}}{RATE}))",
                                    "{{job}} {{category}}")),
                         "percentunit", stack=True, min_=0, max_=1), 24, 8)

    lay.row("The job's GPUs")
    lay.add(g.timeseries("GPU utilisation of the job's nodes", "Mean utilisation of the GPUs "
                         "on the nodes the job runs on.",
                         g.targets(('avg by (hostname) (gpu_utilization_ratio{hostname=~"$node"})',
                                    "{{hostname}}")),
                         "percentunit", min_=0, max_=1,
                         links=[g.dashboard_link("GPU operations", ops, "Per-GPU detail")]),
            24, 8)

    variables = [
        g.datasource_variable(),
        g.query_variable("training_job", "Job", "label_values(training_loss, job)",
                         "The training job (the job label of its metrics)."),
        g.query_variable("node", "Node", 'label_values(training_loss{job=~"$training_job"}, '
                         "node)", "Nodes the job runs on (its node label, the GPUs' hostname)."),
        g.query_variable("rank", "Rank", 'label_values(training_loss{job=~"$training_job", '
                         'node=~"$node"}, rank)', "The job's ranks."),
    ]
    return g.dashboard(
        variant.uid(NAME), variant.title("Training jobs"),
        variant.describe("Loss, throughput, step time per rank, MFU, memory, checkpoints and "
                         "goodput of training jobs, with the GPUs they run on. The job metrics "
                         "come with gpumon's Python client (planned); until a job exports them "
                         "these panels show no data."),
        variant.tags(NAME), variables, lay, variant.links(), time_from="now-3h")
