"""gpumon's Python client: training and serving job metrics.

    import gpumon
    mon = gpumon.TrainingMonitor(flops_per_token=6 * n_params)
    for batch in mon.data_loader(loader):
        with mon.step(samples=len(batch)) as step:
            with step.section("forward"):
                loss = model(batch)
            ...
            step.loss(loss)

Metric names and labels: docs/jobs.md. PyTorch is never imported here; the
PyTorch integration is `gpumon.torch` (import it explicitly).
"""

from ._version import __version__
from .serving import ServingMetrics
from .training import SECTIONS, StepRecord, TrainingMonitor

__all__ = ["TrainingMonitor", "ServingMetrics", "StepRecord", "SECTIONS", "__version__"]
