"""``gpumon.torch``: the PyTorch integration (imports torch; ``import gpumon`` does not).

    import gpumon, gpumon.torch
    mon = gpumon.TrainingMonitor(job="llm")
    inst = gpumon.torch.instrument(mon, model=ddp_model, optimizer=opt)

See gpumon.torch_integration for what is recorded and how.
"""

from .torch_integration import (  # noqa: F401
    COLLECTIVES,
    Instrumentation,
    global_grad_norm,
    instrument,
    load_checkpoint,
    save_checkpoint,
)

__all__ = [
    "COLLECTIVES",
    "Instrumentation",
    "global_grad_norm",
    "instrument",
    "load_checkpoint",
    "save_checkpoint",
]
