"""The objects of one training step: Step (with its sections), StepRecord
(what step observers get), Checkpoint, the timed data-loader wrapper.

Contract: these only measure (time.perf_counter_ns) and hand what they
measured to their TrainingMonitor (training.py), which owns the metrics; see
TrainingMonitor for the semantics. Not thread-safe: one training thread.
"""

from time import perf_counter_ns
from typing import Optional

SECTIONS = ("data_wait", "forward", "backward", "optimizer", "other")
_SECTION_INDEX = {name: i for i, name in enumerate(SECTIONS)}
_DATA_WAIT = 0
_OTHER = 4


def _number(value) -> Optional[float]:
    """float(value), reading 0-d tensors with .item(); None when not a number."""
    if value is None:
        return None
    try:
        if hasattr(value, "item"):
            value = value.item()
        return float(value)
    except (TypeError, ValueError, RuntimeError):
        return None


class _Lazy:
    """A metric child created on first use, so a value never set (CUDA
    memory on a CPU job, MFU without a peak) is absent, not a misleading 0."""

    __slots__ = ("_family", "_values", "_child")

    def __init__(self, family, values):
        self._family = family
        self._values = values
        self._child = None

    def _get(self):
        child = self._child
        if child is None:
            child = self._child = self._family.labels(*self._values)
        return child

    def set(self, value):
        self._get().set(value)

    def inc(self, amount=1):
        self._get().inc(amount)


class StepRecord:
    """One completed step, as given to step observers.

    number: steps completed by this monitor, this one included (1-based).
    end_time: Unix time the step ended. duration: seconds, data wait included.
    sections: seconds per section name (SECTIONS; "other" is the remainder).
    loss: float or None. metrics: {name: float}. samples, tokens: ints or None.
    model_flops: FLOPs of the step or None. mfu: 0..1 or None.
    """

    __slots__ = ("number", "end_time", "duration", "sections", "loss", "metrics", "samples",
                 "tokens", "model_flops", "mfu")

    def __init__(self, number, end_time, duration, sections, loss, metrics, samples, tokens):
        self.number = number
        self.end_time = end_time
        self.duration = duration
        self.sections = sections
        self.loss = loss
        self.metrics = metrics
        self.samples = samples
        self.tokens = tokens
        self.model_flops = None
        self.mfu = None

    @property
    def data_wait(self) -> float:
        return self.sections.get("data_wait", 0.0)

    def __repr__(self):
        return (f"StepRecord(number={self.number}, duration={self.duration:.6f}, "
                f"loss={self.loss}, sections={self.sections})")


class _Section:
    __slots__ = ("_step", "_index", "_start")

    def __init__(self, step, index):
        self._step = step
        self._index = index

    def __enter__(self):
        self._start = perf_counter_ns()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._step._section_ns[self._index] += perf_counter_ns() - self._start
        return False


class Step:
    """The object `with mon.step() as step` gives; see TrainingMonitor.step."""

    __slots__ = ("_mon", "_start_ns", "_section_ns", "_wait_ns", "_checkpoint_ns", "_loss",
                 "_metrics", "samples", "tokens")

    def __init__(self, mon, samples, tokens):
        self._mon = mon
        self._section_ns = [0, 0, 0, 0, 0]
        self._wait_ns = 0  # data-loader wait measured inside the step
        self._checkpoint_ns = 0
        self._loss = None
        self._metrics = None
        self.samples = samples
        self.tokens = tokens

    def section(self, name: str) -> _Section:
        """Times a part of the step: data_wait, forward, backward, optimizer
        or other. Raises ValueError for any other name."""
        index = _SECTION_INDEX.get(name)
        if index is None:
            raise ValueError(f"gpumon: unknown step section {name!r} "
                             f"(one of: {', '.join(SECTIONS)})")
        return _Section(self, index)

    def add_section(self, name: str, seconds: float) -> None:
        """Adds time measured elsewhere to a section (for callback APIs)."""
        index = _SECTION_INDEX.get(name)
        if index is None:
            raise ValueError(f"gpumon: unknown step section {name!r} "
                             f"(one of: {', '.join(SECTIONS)})")
        ns = int(seconds * 1e9) if seconds == seconds else 0
        if ns > 0:
            self._section_ns[index] += ns

    def loss(self, value) -> None:
        """The step's loss: a number or a 0-d tensor (read at the step's end)."""
        self._loss = value

    def metric(self, name: str, value) -> None:
        """Any user metric (e.g. accuracy), exported as training_metric{metric=name}."""
        if self._metrics is None:
            self._metrics = {}
        self._metrics[str(name)] = value

    def __enter__(self):
        self._mon._begin_step(self)
        self._start_ns = perf_counter_ns()
        return self

    def __exit__(self, exc_type, exc, tb):
        end_ns = perf_counter_ns()
        self._mon._end_step(self, end_ns, exc_type is None)
        return False

    # Callback style (frameworks with on_batch_start / on_batch_end hooks).
    def start(self) -> "Step":
        return self.__enter__()

    def end(self, ok: bool = True) -> None:
        """Ends the step; ok=False drops it (as an exception in `with` does)."""
        self._mon._end_step(self, perf_counter_ns(), ok)


class Checkpoint:
    """The object of `with mon.checkpoint_save(step=k) as ck`; set ck.bytes."""

    __slots__ = ("_mon", "kind", "step", "bytes", "duration", "_start_ns")

    def __init__(self, mon, kind, step, nbytes):
        self._mon = mon
        self.kind = kind
        self.step = step
        self.bytes = nbytes
        self.duration = None

    def __enter__(self):
        self._start_ns = perf_counter_ns()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.duration = (perf_counter_ns() - self._start_ns) / 1e9
        self._mon._checkpoint_done(self, exc_type is None)
        return False


class _TimedLoader:
    """Iterates a data loader, adding each next()'s wait to data_wait."""

    def __init__(self, mon, loader):
        self._mon = mon
        self._loader = loader

    def __iter__(self):
        mon = self._mon
        it = iter(self._loader)
        while True:
            start = perf_counter_ns()
            try:
                batch = next(it)
            except StopIteration:
                mon._add_data_wait(perf_counter_ns() - start)
                return
            mon._add_data_wait(perf_counter_ns() - start)
            yield batch

    def __len__(self):
        return len(self._loader)

    def __getattr__(self, name):  # sampler, dataset, batch_size, ...
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._loader, name)
