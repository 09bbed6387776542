"""PyTorch integration for :class:`gpumon.TrainingMonitor`.

Importing this module imports ``torch``; ``import gpumon`` never does. Use it
as ``gpumon.torch.instrument(mon, model=..., optimizer=...)``. Works with
PyTorch 1.13 (Debian 12's ``python3-torch``) and 2.x; every API that differs
between them is probed, never assumed.

What :func:`instrument` records, all through the monitor's setters and all at
the end of each ``with mon.step(): ...`` (a step observer):

* learning rate of every optimizer param group (``mon.set_learning_rate``),
  as used by the last ``optimizer.step()`` (read just before it runs, so an
  LR scheduler stepping afterwards does not shift it by one step);
* the global L2 norm of the gradients the last ``optimizer.step()`` applied
  (``mon.set_grad_norm``): one norm per parameter (one fused
  ``torch._foreach_norm`` per device and dtype where available), then the
  norm of those norms. On CPU it is exported at the step's end; on CUDA it is
  copied to the host without blocking and exported at the first step end
  after the GPU computed it (usually the next), so no device sync is added.
  With gradient clipping this is the clipped norm; to export the unclipped
  one pass ``grad_norm=False`` and call
  ``mon.set_grad_norm(clip_grad_norm_(...))``;
* CUDA allocator statistics (``mon.set_cuda_memory(torch.cuda.memory_stats())``)
  only when CUDA is available and initialised in this process; a CPU-only
  run sets no CUDA series at all;
* for a ``DistributedDataParallel`` model, a communication hook (the default
  all-reduce-and-average, or the hook you pass) timing every gradient
  bucket from the hook call (the bucket is ready) to its future completing:

    - grad-sync time of the step (``mon.record_grad_sync``) = the wall time
      during which at least one bucket was in flight (the union of the bucket
      intervals, so concurrent buckets are not counted twice);
    - overlap (``mon.set_comm_overlap``) = 1 - exposed / grad-sync time, where
      exposed = (last bucket completed) - (last bucket ready), summed over the
      step's backward passes (bucket 0 starts a pass). The last bucket
      becomes ready when backward has produced the last gradient, so what is
      still in flight after that is communication the step waits for; what
      finished before it was hidden behind backward compute. One bucket
      means no overlap (0);
    - collective sequence numbers (``mon.collective_started`` /
      ``mon.collective_completed``), one per bucket all-reduce;

  on CUDA tensors the intervals come from CUDA events (the callback of an
  NCCL future runs when the work is enqueued, not finished) and are read one
  step late if the GPU has not reached them yet, never synchronising;
* with ``track_collectives=True``, every ``torch.distributed`` collective
  (all_reduce, broadcast, all_gather, reduce_scatter, barrier, ...) also
  takes a sequence number when called; it completes when a synchronous call
  returns or raises, or when an ``async_op=True`` work's future completes
  (polled at step end where the backend has no future). Collectives called
  inside another one (all_gather_object's all_gather) or by the DDP hook are
  not counted again. "Completed" is the highest
  number n such that 1..n all completed, so a rank whose number stops
  advancing while others' move on is stuck in a collective.

Pipeline parallelism: ``with inst.stage_timer("stage0"): ...`` around the
compute of a stage (any number of times per step); at step end each stage
seen so far gets ``bubble = 1 - busy / step time``
(``mon.set_pipeline_bubble``), clamped to 0..1.

Checkpoints: ``inst.save_checkpoint(obj, path)`` / ``inst.load_checkpoint(path)``
wrap ``torch.save`` / ``torch.load`` in ``mon.checkpoint_save`` /
``mon.checkpoint_load`` with the bytes taken from the file's size.

Nothing here raises into the training loop from a step observer or a
completion callback: a failure there is reported once with ``warnings`` and
the metric is skipped. Errors of your own calls (bad arguments, a failed
collective, a failed torch.save) propagate unchanged.
"""

import collections
import contextlib
import functools
import threading
import time
import types

import torch
import torch.distributed as dist

from .torch_checkpoint import load_checkpoint, save_checkpoint
from .torch_comm import (
    COLLECTIVES,
    CollectiveTracker,
    CommTimer,
    Sequencer,
    Warner,
    default_allreduce_hook,
    sync_and_overlap,
    timed_comm_hook,
)

__all__ = [
    "COLLECTIVES",
    "Instrumentation",
    "global_grad_norm",
    "instrument",
    "load_checkpoint",
    "save_checkpoint",
]


def _vector_norm(tensor, dtype=None):
    """L2 norm of all elements: torch.linalg.vector_norm (1.13 and 2.x), else torch.norm."""
    linalg = getattr(torch, "linalg", None)
    if linalg is not None and hasattr(linalg, "vector_norm"):
        return linalg.vector_norm(tensor, 2, dtype=dtype)
    if dtype is not None:
        tensor = tensor.to(dtype)
    return torch.norm(tensor, 2)


def global_grad_norm(parameters):
    """Global L2 norm of the gradients of ``parameters`` as a 0-d float32 tensor
    (on the first gradient's device), or None when no parameter has a gradient.

    One norm per gradient, then the norm of those norms: no concatenation of
    all gradients. Dense gradients of one device and dtype take one
    torch._foreach_norm call where torch has it (fp16 ones are normed per
    tensor in float32, which cannot overflow); sparse gradients count their
    stored values.
    """
    groups = {}
    singles = []
    for p in parameters:
        g = getattr(p, "grad", None)
        if g is None:
            continue
        if g.is_sparse:
            singles.append(g.coalesce()._values())
        elif g.dtype in _FOREACH_DTYPES and _foreach_norm is not None:
            groups.setdefault((g.device, g.dtype), []).append(g)
        else:
            singles.append(g)
    parts = []
    for grads in groups.values():
        try:
            norms = _foreach_norm(grads, 2)
        except (RuntimeError, TypeError):  # an op this build lacks for a device/dtype
            norms = [_vector_norm(g) for g in grads]
        stacked = torch.stack(list(norms))
        parts.append(_vector_norm(stacked if stacked.dtype == torch.float32 else stacked.float()))
    parts.extend(_vector_norm(g, dtype=torch.float32) for g in singles)
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    device = parts[0].device
    return _vector_norm(torch.stack([n if n.device == device else n.to(device) for n in parts]))


_foreach_norm = getattr(torch, "_foreach_norm", None)  # 1.13 and 2.x; private, so probed
_FOREACH_DTYPES = (torch.float32, torch.float64, torch.bfloat16)


_now_s = time.perf_counter


def _step_seconds(record):
    """The step's wall time from the monitor's step record, or None."""
    if record is None:
        return None
    for name in ("duration", "duration_seconds", "seconds", "wall_seconds", "step_seconds"):
        v = record.get(name) if isinstance(record, dict) else getattr(record, name, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


class Instrumentation:
    """What :func:`instrument` returns; see the module docstring.

    Keep it alive for the run; ``close()`` (or use it as a context manager)
    removes the step observer, the optimizer hook and the collective
    wrappers. The DDP communication hook cannot be unregistered (a DDP
    limitation) and keeps counting until the model is gone.
    """

    def __init__(
        self,
        mon,
        model=None,
        optimizer=None,
        track_collectives=False,
        grad_norm=True,
        learning_rate=True,
        cuda_memory=True,
        comm_hook=None,
        comm_state=None,
    ):
        if mon is None:
            raise ValueError("gpumon.torch.instrument: mon (a gpumon.TrainingMonitor) is required")
        if optimizer is not None and not hasattr(optimizer, "param_groups"):
            raise TypeError("gpumon.torch.instrument: optimizer must be a torch.optim.Optimizer, "
                            f"got {type(optimizer).__name__}")
        if model is not None and not isinstance(model, torch.nn.Module):
            raise TypeError("gpumon.torch.instrument: model must be a torch.nn.Module, "
                            f"got {type(model).__name__}")
        if comm_hook is not None and not callable(comm_hook):
            raise TypeError("gpumon.torch.instrument: comm_hook must be callable "
                            "(state, bucket) -> Future")
        ddp = isinstance(model, torch.nn.parallel.DistributedDataParallel)
        if comm_hook is not None and not ddp:
            raise ValueError("gpumon.torch.instrument: comm_hook needs a "
                             "DistributedDataParallel model")
        self.mon = mon
        self.model = model
        self.optimizer = optimizer
        self._warn = Warner()
        self._closed = False
        self._lock = threading.Lock()
        self._want_grad_norm = grad_norm
        self._want_lr = learning_rate
        self._want_cuda = cuda_memory
        self._seq = Sequencer(mon, self._warn)
        self._comm = CommTimer()
        self._comm_hooked = False
        self._grad_norm_tensor = None
        self._norms_in_flight = collections.deque()  # CUDA: (event, pinned host copy)
        self._lrs = None
        self._stage_busy = {}
        self._stages = []
        self._last_step_end = None
        self._tracker = None
        self._optimizer_handle = None
        self._optimizer_wrapped = None

        if ddp:  # first: the one step that can fail on a valid model
            self._register_comm_hook(model, comm_hook, comm_state)
        try:
            if track_collectives:
                self._tracker = CollectiveTracker(self._seq)
            if optimizer is not None:
                self._hook_optimizer(optimizer)
            self._set_training_info()
        except BaseException:
            self.close()
            raise
        mon.add_step_observer(self._on_step_end)

    # -- context manager ---------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Removes the step observer, the optimizer hook and the collective
        wrappers; idempotent. The monitor itself stays open."""
        if self._closed:
            return
        self._closed = True
        remove = getattr(self.mon, "remove_step_observer", None)
        if remove is not None:
            remove(self._on_step_end)
        if self._optimizer_handle is not None:
            self._optimizer_handle.remove()
            self._optimizer_handle = None
        if self._optimizer_wrapped is not None:
            opt, original, ours = self._optimizer_wrapped
            # Restore only while ours is outermost; if something (an LR
            # scheduler) wrapped it since, ours stays and passes through.
            if opt.__dict__.get("step") is ours:
                if original is None:
                    del opt.__dict__["step"]
                else:
                    opt.step = original
            self._optimizer_wrapped = None
        if self._tracker is not None:
            self._tracker.restore()

    def _set_training_info(self):
        set_info = getattr(self.mon, "set_training_info", None)
        if set_info is None:
            return
        world_size = backend = None
        try:
            if dist.is_available() and dist.is_initialized():
                world_size, backend = dist.get_world_size(), str(dist.get_backend())
        except Exception:  # noqa: BLE001 - training_info is best effort
            pass
        set_info(world_size=world_size, backend=backend, torch_version=torch.__version__)

    # -- sequence numbers (read-only views) --------------------------------
    @property
    def collectives_started(self):
        """Sequence number of the last collective started by this process."""
        return self._seq.started

    @property
    def collectives_completed(self):
        """Highest n such that collectives 1..n have all completed."""
        return self._seq.completed

    # -- optimizer ---------------------------------------------------------
    def _hook_optimizer(self, optimizer):
        if hasattr(optimizer, "register_step_pre_hook"):  # torch >= 2.0
            self._optimizer_handle = optimizer.register_step_pre_hook(
                lambda opt, args, kwargs: self._before_step())
            return
        # torch 1.13: wrap the instance's step. Kept a bound method so an LR
        # scheduler created later can wrap it again (it needs __self__/__func__).
        original = optimizer.__dict__.get("step")
        current = optimizer.step
        inst = self

        def step(opt, *args, **kwargs):
            inst._before_step()
            return current(*args, **kwargs)

        if getattr(current, "_with_counter", False):
            step._with_counter = True  # a scheduler already counts calls below us
        functools.update_wrapper(step, getattr(current, "__func__", current), updated=())
        ours = types.MethodType(step, optimizer)
        optimizer.step = ours
        self._optimizer_wrapped = (optimizer, original, ours)

    def _before_step(self):
        if self._closed:
            return
        opt = self.optimizer
        try:
            if self._want_lr:
                self._lrs = [(g.get("name", i), g["lr"])
                             for i, g in enumerate(opt.param_groups) if "lr" in g]
            if self._want_grad_norm:
                self._grad_norm_tensor = global_grad_norm(
                    p for g in opt.param_groups for p in g["params"])
        except Exception as e:  # noqa: BLE001
            self._warn("reading the optimizer", e)

    # -- DDP communication hook ------------------------------------------
    def _register_comm_hook(self, model, hook, state):
        timed = timed_comm_hook(hook or default_allreduce_hook(), self._seq, self._comm, self._warn)
        try:
            model.register_comm_hook(state, timed)
        except RuntimeError as e:
            raise RuntimeError(
                "gpumon.torch.instrument: could not register the DDP communication hook "
                f"({e}); a DDP model takes one hook: pass yours as comm_hook= "
                "instead of registering it"
            ) from e
        self._comm_hooked = True

    # -- pipeline stages ---------------------------------------------------
    @contextlib.contextmanager
    def stage_timer(self, stage):
        """Counts the wall time of the block as busy time of pipeline ``stage``
        (str or int) in the current step."""
        t0 = _now_s()
        try:
            yield
        finally:
            self.record_stage_busy(stage, _now_s() - t0)

    def record_stage_busy(self, stage, seconds):
        """Adds ``seconds`` of busy time to ``stage`` in the current step."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
            raise ValueError("gpumon.torch: stage busy seconds must be a number >= 0, "
                             f"got {seconds!r}")
        stage = str(stage)
        with self._lock:
            if stage not in self._stage_busy:
                self._stages.append(stage)
                self._stage_busy[stage] = 0.0
            self._stage_busy[stage] += float(seconds)

    def end_pipeline_step(self, step_seconds):
        """Sets each known stage's bubble ratio for a step of ``step_seconds``
        and starts the next step's busy time at 0. Called at every step end
        of the monitor; call it yourself only when you do not use mon.step()."""
        if (isinstance(step_seconds, bool) or not isinstance(step_seconds, (int, float))
                or not step_seconds > 0):
            raise ValueError("gpumon.torch: step seconds must be a number > 0, "
                             f"got {step_seconds!r}")
        with self._lock:
            stages = [(s, self._stage_busy[s]) for s in self._stages]
            for s in self._stages:
                self._stage_busy[s] = 0.0
        for stage, busy in stages:
            self.mon.set_pipeline_bubble(stage, min(1.0, max(0.0, 1.0 - busy / step_seconds)))

    # -- checkpoints -----------------------------------------------------------
    def save_checkpoint(self, obj, f, step=None, **torch_save_kwargs):
        """torch.save(obj, f) timed as a checkpoint save; returns the bytes written."""
        return save_checkpoint(self.mon, obj, f, step=step, **torch_save_kwargs)

    def load_checkpoint(self, f, **torch_load_kwargs):
        """torch.load(f, ...) timed as a checkpoint load; returns the object."""
        return load_checkpoint(self.mon, f, **torch_load_kwargs)

    # -- step end ----------------------------------------------------------
    def _on_step_end(self, record=None):
        if self._closed:
            return
        now = _now_s()
        mon = self.mon
        if self._lrs is None and self._want_lr and self.optimizer is not None:
            self._before_step()  # step() was not called: read the groups as they are
        lrs, self._lrs = self._lrs, None
        for group, lr in lrs or ():
            try:
                mon.set_learning_rate(group, float(lr))
            except Exception as e:  # noqa: BLE001
                self._warn("set_learning_rate", e)
        if self._want_grad_norm:
            norm, self._grad_norm_tensor = self._grad_norm_tensor, None
            try:
                if norm is None and self.optimizer is None and self.model is not None:
                    norm = global_grad_norm(self.model.parameters())
                self._export_grad_norm(norm)
            except Exception as e:  # noqa: BLE001
                self._warn("set_grad_norm", e)
        if self._comm_hooked:
            try:
                total, overlap = sync_and_overlap(self._comm.take_step())
                if total > 0.0:
                    mon.record_grad_sync(total)
                if overlap is not None:
                    mon.set_comm_overlap(overlap)
            except Exception as e:  # noqa: BLE001
                self._warn("grad sync timing", e)
        if self._tracker is not None:
            self._tracker.poll()
        if self._stages:
            seconds = _step_seconds(record)
            if seconds is None and self._last_step_end is not None:
                seconds = now - self._last_step_end
            if seconds is not None and seconds > 0:
                try:
                    self.end_pipeline_step(seconds)
                except Exception as e:  # noqa: BLE001
                    self._warn("pipeline bubble", e)
        self._last_step_end = now
        if self._want_cuda:
            try:
                if torch.cuda.is_available() and torch.cuda.is_initialized():
                    mon.set_cuda_memory(torch.cuda.memory_stats(self._cuda_device()))
            except Exception as e:  # noqa: BLE001
                self._warn("set_cuda_memory", e)

    def _export_grad_norm(self, norm):
        """A CPU norm is exported now; a CUDA one is copied to the host without
        blocking and exported at the first step end after the GPU got there
        (usually the next), so the integration adds no device sync."""
        if norm is not None and not norm.is_cuda:
            self.mon.set_grad_norm(float(norm.item()))
            return
        pending = self._norms_in_flight
        if norm is not None:
            host = torch.empty((), dtype=norm.dtype, pin_memory=True)
            host.copy_(norm, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
            pending.append((event, host))
            while len(pending) > 8:  # the GPU is far behind: keep the newest
                pending.popleft()
        latest = None
        while pending and pending[0][0].query():
            latest = pending.popleft()[1]
        if latest is not None:
            self.mon.set_grad_norm(float(latest.item()))

    def _cuda_device(self):
        if self.model is not None:
            for p in self.model.parameters():
                if p.is_cuda:
                    return p.device
                break
        return torch.cuda.current_device()


def instrument(mon, model=None, optimizer=None, track_collectives=False, **options):
    """Instruments a PyTorch training loop for ``mon`` (a gpumon.TrainingMonitor).

    ``model``: the module being trained; a DistributedDataParallel one gets the
    timing communication hook. ``optimizer``: its learning rates and the norm
    of the gradients it applies are exported. ``track_collectives``: count
    every torch.distributed collective's sequence number.

    Options: ``grad_norm``, ``learning_rate``, ``cuda_memory`` (bools, default
    True), ``comm_hook`` / ``comm_state`` (your own DDP hook and its state,
    timed the same way; register no other hook on the model).
    """
    return Instrumentation(mon, model=model, optimizer=optimizer,
                           track_collectives=track_collectives, **options)
