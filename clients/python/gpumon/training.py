"""TrainingMonitor: the training metrics of docs/jobs.md, torch-free.

Contract:
- One monitor per process (per rank). Its metrics live in its own
  CollectorRegistry unless `registry` is given, so monitors never clash with
  each other or with prometheus_client's global registry. Every series
  carries job, rank, local_rank and node (labels.resolve()).
- Steps: `with mon.step(samples=n, tokens=t) as step:` is one optimizer step.
  Its duration is the block's wall time plus the data-loader wait measured
  (by mon.data_loader()) since the previous step ended, so data wait is part
  of the step. Sections (`with step.section(name)`, name one of SECTIONS) add
  up per step; "other" is the rest of the step. A step whose block raises is
  not counted. Callback style: step = mon.start_step(...); ...; step.end()
  (end(ok=False) drops it); step.add_section(name, seconds) adds time
  measured elsewhere. Steps are recorded from one thread (the training loop).
- At a step's end, in this order: the StepRecord is built (loss read with
  .item() when it has one), the step observers are called with it (they may
  change its loss/metrics/samples/tokens, and an observer that raises is
  logged once and skipped), then the metrics are updated. All metric
  children are bound once, so a step costs about 15 us of one core (see
  bench/client_overhead.py).
- Gauges never set (loss before the first step, CUDA memory on a CPU job,
  MFU without a peak, the last checkpoint before one is saved) are absent
  from the exposition, not 0; counters start at 0 (the CUDA and model-FLOPs
  ones once they apply).
- MFU = model FLOPs of the step / (step duration × peak FLOP/s). Model FLOPs
  = flops_per_token × tokens, else flops_per_sample × samples. The peak is
  `peak_flops`, else the table in flops.py for `gpu_model`, else for
  torch.cuda.get_device_name() when torch is already imported and has CUDA;
  with no peak, MFU is not exported.
- Setters (called by gpumon.torch and by users) never raise for a value
  they cannot use (None, NaN where a number is needed): they ignore it.
- Delivery: push_url (else $GPUMON_PUSH_URL) pushes to the node's agent;
  serve_port (else $GPUMON_SERVE_PORT) serves /metrics; both may be used.
  close() (also at interpreter exit) makes a final push and stops both.
"""

import atexit
import logging
import math
import os
import sys
import threading
import time
from time import perf_counter_ns
from typing import Callable, Dict, List, Optional

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from . import flops as _flops
from . import labels as _labels
from ._version import __version__
from .delivery import MetricsServer, PushDelivery, start_delivery
from .goodput import Goodput, process_start_time
from .step import (_DATA_WAIT, _OTHER, SECTIONS, Checkpoint, Step, StepRecord, _Lazy,
                   _number, _TimedLoader)

log = logging.getLogger("gpumon")

STEP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 0.75, 1.0, 1.5, 2.5,
                5.0, 7.5, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0)
CHECKPOINT_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0,
                      600.0, 1200.0, 1800.0, 3600.0)

# torch.cuda.memory_stats() keys -> gauge attribute names.
_MEMORY_GAUGES = (
    ("allocated_bytes.all.current", "_mem_allocated"),
    ("reserved_bytes.all.current", "_mem_reserved"),
    ("active_bytes.all.current", "_mem_active"),
    ("allocated_bytes.all.peak", "_mem_allocated_peak"),
    ("reserved_bytes.all.peak", "_mem_reserved_peak"),
    ("active_bytes.all.peak", "_mem_active_peak"),
)


class TrainingMonitor:
    """Training metrics for one rank; see the module docstring."""

    def __init__(self, job=None, rank=None, local_rank=None, node=None,
                 flops_per_token=None, flops_per_sample=None, peak_flops=None, gpu_model=None,
                 push_url=None, push_interval=5.0, serve_port=None, registry=None, *,
                 dtype="bf16", world_size=None, backend=None, serve_addr="0.0.0.0",
                 push_timeout=None):
        self.labels = _labels.resolve(job, rank, local_rank, node)
        self.registry = registry if registry is not None else CollectorRegistry()
        self._created_ns = perf_counter_ns()
        self._created_time = time.time()
        self.flops_per_token = _positive(flops_per_token, "flops_per_token")
        self.flops_per_sample = _positive(flops_per_sample, "flops_per_sample")
        self.dtype = _flops.normalize_dtype(dtype)
        self._peak_given = _positive(peak_flops, "peak_flops")
        self._gpu_model = gpu_model
        self.peak_flops = None
        self._define_metrics()
        self._resolve_peak()

        self._active: Optional[Step] = None
        self._pending_wait_ns = 0
        self._checkpoint_before_first_ns = 0
        self.steps = 0
        self._observers: List[Callable[[StepRecord], None]] = []
        self._failed_observers = set()
        self._lr: Dict[str, object] = {}
        self._bubble: Dict[str, object] = {}
        self._user_metrics: Dict[str, object] = {}
        self._cuda_counts = {"num_alloc_retries": None, "num_ooms": None}
        self._restart_pending = False
        self._restart_seconds = None
        self._lost_steps_pending = 0
        self._info_args = {"world_size": world_size, "backend": backend}
        self._info_values = None
        self.set_training_info()

        self._closed = False
        self._close_lock = threading.Lock()
        self._push: Optional[PushDelivery]
        self._server: Optional[MetricsServer]
        self._push, self._server = start_delivery(
            self.registry, self.labels.grouping(), self.labels.as_dict(), push_url,
            push_interval, push_timeout, serve_port, serve_addr)
        atexit.register(self.close)

    # ------------------------------------------------------------ metrics

    def _define_metrics(self):
        names = _labels.LABEL_NAMES
        values = self.labels.values()
        reg = self.registry
        self._label_values = values

        def bound(cls, name, doc, **kw):
            return cls(name, doc, names, registry=reg, **kw).labels(*values)

        def lazy(cls, name, doc, **kw):
            return _Lazy(cls(name, doc, names, registry=reg, **kw), values)

        def family(cls, name, doc, extra, **kw):
            return cls(name, doc, names + tuple(extra), registry=reg, **kw)

        self._info = family(Gauge, "training_info", "Training run information (value 1).",
                            ("world_size", "backend", "torch_version", "client_version"))
        self._steps = bound(Counter, "training_steps", "Optimizer steps completed.")
        self._step_duration = bound(Histogram, "training_step_duration_seconds",
                                    "Wall time of each step, data wait included.",
                                    buckets=STEP_BUCKETS)
        section_family = family(Counter, "training_step_section_seconds",
                                "Time per step section, summed over steps.", ("section",))
        self._sections = [section_family.labels(*values, s) for s in SECTIONS]
        self._last_step = lazy(Gauge, "training_last_step_timestamp_seconds",
                                "Unix time the last step completed.")
        self._loss = lazy(Gauge, "training_loss", "The last step's loss.")
        self._nonfinite = bound(Counter, "training_nonfinite_loss",
                                "Steps whose loss was NaN or infinite.")
        self._metric_family = family(Gauge, "training_metric", "User metric, last value.",
                                     ("metric",))
        self._lr_family = family(Gauge, "training_learning_rate",
                                 "Learning rate per optimizer parameter group.", ("param_group",))
        self._grad_norm = lazy(Gauge, "training_grad_norm",
                                "Global L2 norm of the gradients of the last step.")
        self._samples = bound(Counter, "training_samples", "Samples processed.")
        self._tokens = bound(Counter, "training_tokens", "Tokens processed.")
        self._model_flops = lazy(Counter, "training_model_flops", "Model FLOPs done.")
        self._peak_family = family(Gauge, "training_peak_flops",
                                   "Peak FLOP/s MFU is measured against.", ("dtype",))
        self._mfu = lazy(Gauge, "training_model_flops_utilization_ratio",
                          "Model FLOPs utilisation of the last step, 0..1.")
        self._mem_allocated = lazy(Gauge, "training_cuda_memory_allocated_bytes",
                                    "CUDA memory allocated (torch.cuda.memory_stats).")
        self._mem_reserved = lazy(Gauge, "training_cuda_memory_reserved_bytes",
                                   "CUDA memory reserved by the caching allocator.")
        self._mem_active = lazy(Gauge, "training_cuda_memory_active_bytes",
                                 "CUDA memory in active blocks.")
        self._mem_allocated_peak = lazy(Gauge, "training_cuda_memory_allocated_peak_bytes",
                                         "Peak CUDA memory allocated.")
        self._mem_reserved_peak = lazy(Gauge, "training_cuda_memory_reserved_peak_bytes",
                                        "Peak CUDA memory reserved.")
        self._mem_active_peak = lazy(Gauge, "training_cuda_memory_active_peak_bytes",
                                      "Peak CUDA memory in active blocks.")
        self._mem_fragmentation = lazy(Gauge, "training_cuda_memory_fragmentation_ratio",
                                        "Inactive split bytes / reserved bytes.")
        self._alloc_retries = lazy(Counter, "training_cuda_alloc_retries",
                                    "CUDA caching allocator retries.")
        self._ooms = lazy(Counter, "training_cuda_ooms", "CUDA out-of-memory errors.")
        self._ckpt_save_seconds = bound(Histogram, "training_checkpoint_save_seconds",
                                        "Checkpoint save duration.", buckets=CHECKPOINT_BUCKETS)
        self._ckpt_load_seconds = bound(Histogram, "training_checkpoint_load_seconds",
                                        "Checkpoint load duration.", buckets=CHECKPOINT_BUCKETS)
        self._ckpt_save_bytes = bound(Counter, "training_checkpoint_save_bytes",
                                      "Checkpoint bytes written.")
        self._ckpt_load_bytes = bound(Counter, "training_checkpoint_load_bytes",
                                      "Checkpoint bytes read.")
        self._last_ckpt_time = lazy(Gauge, "training_last_checkpoint_timestamp_seconds",
                                     "Unix time the last checkpoint was saved.")
        self._last_ckpt_step = lazy(Gauge, "training_last_checkpoint_step",
                                     "Step at which the last checkpoint was saved.")
        goodput = family(Counter, "training_goodput_seconds",
                         "Wall time by what it bought.", ("category",))
        self._goodput = Goodput(goodput, values)
        self._grad_sync = bound(Counter, "training_grad_sync_seconds",
                                "Time gradient all-reduces were in flight.")
        self._comm_overlap = lazy(Gauge, "training_comm_overlap_ratio",
                                   "Share of the last step's communication hidden behind "
                                   "compute, 0..1.")
        self._bubble_family = family(Gauge, "training_pipeline_bubble_ratio",
                                     "1 - busy time / step time of a pipeline stage.",
                                     ("stage",))
        collective = family(Gauge, "training_collective_sequence",
                            "Sequence number of the last collective started / completed.",
                            ("state",))
        self._coll_started = _Lazy(collective, values + ("started",))
        self._coll_completed = _Lazy(collective, values + ("completed",))

    def _resolve_peak(self):
        if self.peak_flops is not None:
            return
        peak = self._peak_given
        if peak is None:
            name = self._gpu_model or _cuda_device_name()
            peak = _flops.peak_flops(name, self.dtype) if name else None
        if peak is not None:
            self.peak_flops = peak
            self._peak_family.labels(*self._label_values, self.dtype).set(peak)

    # -------------------------------------------------------------- steps

    def step(self, samples: Optional[int] = None, tokens: Optional[int] = None) -> Step:
        """A context manager around one optimizer step (see the module doc)."""
        return Step(self, samples, tokens)

    def start_step(self, samples: Optional[int] = None, tokens: Optional[int] = None) -> Step:
        """Callback style: `step = mon.start_step(...)`, later `step.end()`."""
        return Step(self, samples, tokens).start()

    @property
    def active_step(self) -> Optional[Step]:
        """The step in progress, or None."""
        return self._active

    def data_loader(self, loader):
        """Wraps an iterable of batches; the time each next() takes is data_wait."""
        return _TimedLoader(self, loader)

    def _add_data_wait(self, ns: int) -> None:
        active = self._active
        if active is not None:
            active._wait_ns += ns
        else:
            self._pending_wait_ns += ns

    def _begin_step(self, step: Step) -> None:
        if self._active is not None:
            raise RuntimeError("gpumon: mon.step() entered while another step is active")
        self._active = step
        if self.steps == 0:
            self._first_step_starting()

    def _end_step(self, step: Step, end_ns: int, ok: bool) -> None:
        if self._active is not step:
            raise RuntimeError("gpumon: ending a step that is not the active one")
        self._active = None
        outside_wait = self._pending_wait_ns
        self._pending_wait_ns = 0
        if not ok:
            return
        sec = step._section_ns
        sec[_DATA_WAIT] += outside_wait + step._wait_ns
        duration_ns = end_ns - step._start_ns + outside_wait
        other = duration_ns - (sec[0] + sec[1] + sec[2] + sec[3])
        sec[_OTHER] += other if other > 0 else 0
        self.steps += 1
        record = StepRecord(self.steps, time.time(), duration_ns / 1e9,
                            {SECTIONS[i]: sec[i] / 1e9 for i in range(5)},
                            _number(step._loss) if step._loss is not None else None,
                            step._metrics, step.samples, step.tokens)
        if self._observers:
            self._notify(record)
        self._export(record, step._checkpoint_ns / 1e9)

    def _notify(self, record: StepRecord) -> None:
        for fn in list(self._observers):
            try:
                fn(record)
            except Exception:  # noqa: BLE001 - instrumentation must not stop training
                if id(fn) not in self._failed_observers:
                    self._failed_observers.add(id(fn))
                    log.exception("gpumon: step observer %r failed (logged once)", fn)

    def _export(self, r: StepRecord, checkpoint_s: float) -> None:
        duration = r.duration
        sections = r.sections
        self._steps.inc()
        self._step_duration.observe(duration)
        for child, name in zip(self._sections, SECTIONS):
            seconds = sections.get(name, 0.0)
            if seconds > 0:
                child.inc(seconds)
        self._last_step.set(r.end_time)
        loss = _number(r.loss)
        if loss is not None:
            self._loss.set(loss)
            if not math.isfinite(loss):
                self._nonfinite.inc()
        if r.metrics:
            for name, value in r.metrics.items():
                value = _number(value)
                if value is not None:
                    self._user_metric(name).set(value)
        flops = None
        if r.tokens:
            self._tokens.inc(r.tokens)
            if self.flops_per_token is not None:
                flops = self.flops_per_token * r.tokens
        if r.samples:
            self._samples.inc(r.samples)
            if flops is None and self.flops_per_sample is not None:
                flops = self.flops_per_sample * r.samples
        if flops is not None:
            r.model_flops = flops
            self._model_flops.inc(flops)
            if self.peak_flops is not None and duration > 0:
                r.mfu = flops / (duration * self.peak_flops)
                self._mfu.set(r.mfu)
        data_wait = sections.get("data_wait", 0.0)
        add = Goodput.add
        add(self._goodput.data_loading, data_wait)
        add(self._goodput.productive, duration - data_wait - checkpoint_s)
        if self._lost_steps_pending:
            add(self._goodput.lost_progress, self._lost_steps_pending * duration)
            self._lost_steps_pending = 0

    def _user_metric(self, name: str):
        child = self._user_metrics.get(name)
        if child is None:
            child = self._metric_family.labels(*self._label_values, name)
            self._user_metrics[name] = child
        return child

    def add_step_observer(self, fn: Callable[[StepRecord], None]) -> None:
        """fn(record) is called at each step's end, before the metrics are updated."""
        self._observers.append(fn)

    def remove_step_observer(self, fn) -> None:
        if fn in self._observers:
            self._observers.remove(fn)

    def _first_step_starting(self) -> None:
        self._resolve_peak()
        self.set_training_info()
        if self._restart_pending:
            self._restart_pending = False
            seconds = self._restart_seconds
            if seconds is None:
                started = process_start_time()
                if started is not None and started <= self._created_time:
                    seconds = time.time() - started
                else:
                    seconds = (perf_counter_ns() - self._created_ns) / 1e9
                seconds -= self._checkpoint_before_first_ns / 1e9
            Goodput.add(self._goodput.restart, seconds)

    # ------------------------------------------------------- checkpoints

    def checkpoint_save(self, step: Optional[int] = None,
                        bytes: Optional[int] = None):  # noqa: A002
        """Times a checkpoint save: `with mon.checkpoint_save(step=k) as ck: ...;
        ck.bytes = n`. step defaults to the steps completed so far."""
        return Checkpoint(self, "save", step, bytes)

    def checkpoint_load(self, step: Optional[int] = None,
                        bytes: Optional[int] = None):  # noqa: A002
        """Times a checkpoint load, like checkpoint_save."""
        return Checkpoint(self, "load", step, bytes)

    def _checkpoint_done(self, ck: Checkpoint, ok: bool) -> None:
        seconds = ck.duration
        Goodput.add(self._goodput.checkpointing, seconds)
        ns = int(seconds * 1e9)
        if self._active is not None:
            self._active._checkpoint_ns += ns
        elif self.steps == 0:
            self._checkpoint_before_first_ns += ns
        if not ok:
            return
        nbytes = _number(ck.bytes)
        if ck.kind == "save":
            self._ckpt_save_seconds.observe(seconds)
            if nbytes and nbytes > 0:
                self._ckpt_save_bytes.inc(nbytes)
            self._last_ckpt_time.set(time.time())
            step = _number(ck.step)
            self._last_ckpt_step.set(step if step is not None else self.steps)
        else:
            self._ckpt_load_seconds.observe(seconds)
            if nbytes and nbytes > 0:
                self._ckpt_load_bytes.inc(nbytes)

    def restarted(self, lost_steps: int = 0, lost_seconds: Optional[float] = None,
                  restart_seconds: Optional[float] = None) -> None:
        """Tells the monitor this process resumes a job that stopped: goodput
        gains `restart` (restart_seconds, else measured up to the first step)
        and `lost_progress` (lost_seconds, else lost_steps × the first
        step's duration)."""
        seconds = _number(restart_seconds)
        if self.steps == 0:
            self._restart_pending = True
            self._restart_seconds = seconds
        elif seconds is not None:
            Goodput.add(self._goodput.restart, seconds)
        lost = _number(lost_seconds)
        if lost is not None:
            Goodput.add(self._goodput.lost_progress, lost)
        else:
            steps = _number(lost_steps)
            if steps and steps > 0:
                self._lost_steps_pending += int(steps)

    # ----------------------------------------------------------- setters

    def set_learning_rate(self, param_group, value) -> None:
        value = _number(value)
        if value is None:
            return
        key = str(param_group)
        child = self._lr.get(key)
        if child is None:
            child = self._lr_family.labels(*self._label_values, key)
            self._lr[key] = child
        child.set(value)

    def set_grad_norm(self, value) -> None:
        value = _number(value)
        if value is not None:
            self._grad_norm.set(value)

    def set_cuda_memory(self, stats) -> None:
        """Takes a torch.cuda.memory_stats() dict (missing keys are skipped)."""
        if not stats:
            return
        get = stats.get
        for key, attr in _MEMORY_GAUGES:
            value = _number(get(key))
            if value is not None:
                getattr(self, attr).set(value)
        reserved = _number(get("reserved_bytes.all.current"))
        inactive = _number(get("inactive_split_bytes.all.current"))
        if reserved is not None and inactive is not None:
            self._mem_fragmentation.set(inactive / reserved if reserved > 0 else 0.0)
        for key, counter in (("num_alloc_retries", self._alloc_retries),
                             ("num_ooms", self._ooms)):
            value = _number(get(key))
            if value is None or value < 0:
                continue
            last = self._cuda_counts[key]
            # torch counts from process start; a reset of its counters starts over.
            delta = value if last is None or value < last else value - last
            self._cuda_counts[key] = value
            if delta > 0:
                counter.inc(delta)

    def record_grad_sync(self, seconds) -> None:
        seconds = _number(seconds)
        if seconds is not None and seconds > 0 and math.isfinite(seconds):
            self._grad_sync.inc(seconds)

    def set_comm_overlap(self, ratio) -> None:
        ratio = _number(ratio)
        if ratio is not None and math.isfinite(ratio):
            self._comm_overlap.set(min(1.0, max(0.0, ratio)))

    def set_pipeline_bubble(self, stage, ratio) -> None:
        ratio = _number(ratio)
        if ratio is None or not math.isfinite(ratio):
            return
        key = str(stage)
        child = self._bubble.get(key)
        if child is None:
            child = self._bubble_family.labels(*self._label_values, key)
            self._bubble[key] = child
        child.set(min(1.0, max(0.0, ratio)))

    def collective_started(self, seq) -> None:
        seq = _number(seq)
        if seq is not None:
            self._coll_started.set(seq)

    def collective_completed(self, seq) -> None:
        seq = _number(seq)
        if seq is not None:
            self._coll_completed.set(seq)

    def set_training_info(self, world_size=None, backend=None, torch_version=None) -> None:
        """training_info's labels; unset ones come from torch.distributed (when
        torch is imported and initialized), $WORLD_SIZE, else 1 / "none"."""
        if world_size is not None:
            self._info_args["world_size"] = world_size
        if backend is not None:
            self._info_args["backend"] = backend
        if torch_version is not None:
            self._info_args["torch_version"] = torch_version
        dist_world, dist_backend, version = _torch_facts()
        world = self._info_args.get("world_size") or dist_world or \
            os.environ.get("WORLD_SIZE") or 1
        values = (str(world), str(self._info_args.get("backend") or dist_backend or "none"),
                  str(self._info_args.get("torch_version") or version or "none"), __version__)
        if values == self._info_values:
            return
        if self._info_values is not None:
            try:
                self._info.remove(*self._label_values, *self._info_values)
            except KeyError:
                pass
        self._info_values = values
        self._info.labels(*self._label_values, *values).set(1)

    # ---------------------------------------------------------- delivery

    @property
    def serve_port(self) -> Optional[int]:
        """The port /metrics is served on (None when not serving)."""
        return self._server.port if self._server is not None else None

    @property
    def push(self) -> Optional[PushDelivery]:
        return self._push

    def push_now(self) -> None:
        """Asks the push thread to push soon (no-op without push_url)."""
        if self._push is not None:
            self._push.push_now()

    def close(self) -> None:
        """Final push, then stops the push thread and the /metrics server.
        Idempotent; never raises."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        try:
            atexit.unregister(self.close)
        except Exception:  # noqa: BLE001
            pass
        try:
            if self._push is not None:
                self._push.close()
            if self._server is not None:
                self._server.close()
        except Exception:  # noqa: BLE001 - never raise at shutdown
            log.exception("gpumon: closing the monitor failed")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _positive(value, what) -> Optional[float]:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"gpumon: {what} must be a number, got {value!r}") from None
    if not (number > 0 and math.isfinite(number)):
        raise ValueError(f"gpumon: {what} must be positive and finite, got {value!r}")
    return number


def _cuda_device_name() -> Optional[str]:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_available():
            return torch.cuda.get_device_name(torch.cuda.current_device())
    except Exception:  # noqa: BLE001 - no usable CUDA
        pass
    return None


def _torch_facts():
    """(world_size, backend, torch version) from an imported torch, else Nones."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None, None, None
    version = getattr(torch, "__version__", None)
    try:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return dist.get_world_size(), str(dist.get_backend()), version
    except Exception:  # noqa: BLE001
        pass
    return None, None, version
