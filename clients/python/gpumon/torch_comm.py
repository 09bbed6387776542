"""Communication timing for gpumon.torch: DDP bucket timing, the overlap
ratio, collective sequence numbers and the torch.distributed wrappers.

Contract (see gpumon.torch_integration for what reaches which metric):
- Sequencer: `started` counts collectives begun by this process; `completed`
  is the highest n such that 1..n all completed (completions may arrive out
  of order, from backend threads). Each change is passed to the monitor's
  collective_started / collective_completed under one lock, so the gauges
  never move backwards.
- CommTimer: one interval per gradient bucket, from the DDP hook's call (the
  bucket is ready) to its future completing; bucket index 0 starts a new
  backward pass. take_step() hands over the finished intervals of the step.
  CUDA buckets are timed with CUDA events and stay pending until the GPU has
  passed them (never synchronised).
- sync_and_overlap(): grad-sync time = union of the intervals; overlap =
  1 - sum over passes of (last done - last ready) / grad-sync time.
- CollectiveTracker: wraps the COLLECTIVES of torch.distributed (and of
  torch.distributed.distributed_c10d, where internal callers look them up);
  a call nested in another wrapped call or in the DDP hook is not counted.
"""

import contextlib
import functools
import threading
import time
import warnings

import torch
import torch.distributed as dist

# Collectives wrapped by track_collectives=True (those this torch has).
# Point-to-point send/recv are not collectives and are left alone.
COLLECTIVES = (
    "all_reduce",
    "all_reduce_coalesced",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_coalesced",
    "_all_gather_base",
    "gather",
    "scatter",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "monitored_barrier",
    "all_gather_object",
    "gather_object",
    "broadcast_object_list",
    "scatter_object_list",
)

_now = time.perf_counter

# Per-thread: > 0 while inside an instrumented collective or comm hook, so
# the collectives those call internally are not counted a second time.
_nesting = threading.local()


def _depth():
    return getattr(_nesting, "depth", 0)


@contextlib.contextmanager
def _nested():
    _nesting.depth = _depth() + 1
    try:
        yield
    finally:
        _nesting.depth -= 1


class Warner:
    """Warns once per kind of failure inside observers and callbacks."""

    def __init__(self):
        self._seen = set()
        self._lock = threading.Lock()

    def __call__(self, kind, exc):
        with self._lock:
            if kind in self._seen:
                return
            self._seen.add(kind)
        warnings.warn(f"gpumon.torch: {kind} failed and is skipped: {exc!r}", RuntimeWarning,
                      stacklevel=2)


class Sequencer:
    """Collective sequence numbers of one process: started counts calls;
    completed is the highest n with 1..n all completed."""

    def __init__(self, mon, warn):
        self._mon = mon
        self._warn = warn
        self._lock = threading.Lock()
        self._started = 0
        self._completed = 0
        self._done_ahead = set()  # completed out of order, above _completed

    def start(self):
        with self._lock:
            self._started += 1
            seq = self._started
            try:
                self._mon.collective_started(seq)
            except Exception as e:  # noqa: BLE001 - never raise into the caller
                self._warn("collective_started", e)
        return seq

    def complete(self, seq):
        with self._lock:
            if seq <= self._completed:
                return
            self._done_ahead.add(seq)
            advanced = False
            while self._completed + 1 in self._done_ahead:
                self._completed += 1
                self._done_ahead.discard(self._completed)
                advanced = True
            if advanced:
                try:
                    self._mon.collective_completed(self._completed)
                except Exception as e:  # noqa: BLE001
                    self._warn("collective_completed", e)

    @property
    def started(self):
        with self._lock:
            return self._started

    @property
    def completed(self):
        with self._lock:
            return self._completed


class _Bucket:
    __slots__ = ("backward", "ready", "done", "start_event", "end_event")

    def __init__(self, backward, ready, start_event):
        self.backward = backward
        self.ready = ready
        self.done = None
        self.start_event = start_event
        self.end_event = None


def _union_length(intervals):
    total = 0.0
    cur_start = cur_end = None
    for s, e in sorted(intervals):
        if cur_end is None or s > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = s, e
        elif e > cur_end:
            cur_end = e
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def sync_and_overlap(intervals):
    """(grad-sync seconds, overlap ratio or None) of one step's bucket
    intervals [(backward pass, ready, done)]: the union of the intervals, and
    1 - exposed / that, exposed summed over the step's backward passes (with
    gradient accumulation a step may sync more than once)."""
    if not intervals:
        return 0.0, None
    total = _union_length([(s, e) for _, s, e in intervals])
    if total <= 0.0:
        return 0.0, None
    last = {}
    for p, s, e in intervals:
        ready, done = last.get(p, (s, e))
        last[p] = (max(ready, s), max(done, e))
    exposed = sum(max(0.0, done - ready) for ready, done in last.values())
    return total, min(1.0, max(0.0, 1.0 - exposed / total))


class CommTimer:
    """Bucket intervals of the current step, filled from the comm hook (autograd
    thread) and its future callbacks (backend thread)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._buckets = []
        self._backward = 0

    def begin(self, tensor, index):
        """A bucket became ready; bucket 0 starts a new backward pass (DDP
        launches buckets in index order)."""
        start_event = None
        if tensor.is_cuda:
            start_event = torch.cuda.Event(enable_timing=True)
            start_event.record()
        ready = _now()
        with self._lock:
            if index == 0 or self._backward == 0:
                self._backward += 1
            b = _Bucket(self._backward, ready, start_event)
            self._buckets.append(b)
        return b

    def end(self, b):
        if b.start_event is not None:
            # The callback of a CUDA future runs on streams that wait for the
            # work, so this event marks the collective's end on the GPU.
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            b.end_event = ev
        b.done = _now()

    def take_step(self):
        """Intervals (seconds) of the buckets that have finished; unfinished ones
        (CUDA work the GPU has not reached) stay for the next step."""
        with self._lock:
            buckets, self._buckets = self._buckets, []
        finished, pending, gpu = [], [], []
        for b in buckets:
            if b.done is None:
                pending.append(b)
            elif b.start_event is not None:
                if b.end_event.query():
                    gpu.append(b)
                else:
                    pending.append(b)
            else:
                finished.append((b.backward, b.ready, b.done))
        if gpu:
            ref = gpu[0].start_event
            for b in gpu:
                s = ref.elapsed_time(b.start_event) / 1000.0
                e = ref.elapsed_time(b.end_event) / 1000.0
                finished.append((b.backward, s, max(s, e)))
        if pending:
            with self._lock:
                self._buckets[:0] = pending
        return finished


def bucket_index(bucket):
    index = getattr(bucket, "index", None) or getattr(bucket, "get_index", None)
    try:
        return index() if index is not None else None
    except Exception:  # noqa: BLE001
        return None


def default_allreduce_hook():
    """DDP's default behaviour as a hook: all-reduce the bucket, divide by the world size."""
    try:
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

        return allreduce_hook
    except ImportError:  # very old or stripped builds

        def allreduce_hook(process_group, bucket):
            group = process_group if process_group is not None else dist.group.WORLD
            tensor = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
            tensor.div_(group.size())
            fut = dist.all_reduce(tensor, group=group, async_op=True).get_future()
            return fut.then(lambda f: f.value()[0])

        return allreduce_hook


def timed_comm_hook(hook, seq, comm, warn):
    """A DDP communication hook doing what `hook` does, timed by `comm` and
    numbered by `seq`. `hook(state, bucket)` must return a Future."""

    def timed_hook(state, bucket):
        tensor = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
        number = seq.start()
        rec = comm.begin(tensor, bucket_index(bucket))
        with _nested():
            fut = hook(state, bucket)

        def finished(f):
            value = f.value()  # raises when the collective failed: DDP sees it
            try:
                comm.end(rec)
                seq.complete(number)
            except Exception as e:  # noqa: BLE001
                warn("timing a gradient bucket", e)
            return value

        return fut.then(finished)

    return timed_hook


class CollectiveTracker:
    """Numbers every torch.distributed collective call until restore()."""

    def __init__(self, seq):
        if not dist.is_available():
            raise RuntimeError("gpumon.torch: track_collectives needs torch.distributed")
        self._seq = seq
        self._lock = threading.Lock()
        self._pending = []  # (number, work) of async works without a future
        self._patched = []
        self._active = True
        modules = [dist]
        c10d = getattr(dist, "distributed_c10d", None)
        if c10d is not None:
            modules.append(c10d)
        wrappers = {}
        for name in COLLECTIVES:
            for module in modules:
                original = getattr(module, name, None)
                if original is None or not callable(original):
                    continue
                if id(original) not in wrappers:
                    wrappers[id(original)] = self._wrap(original)
                setattr(module, name, wrappers[id(original)])
                self._patched.append((module, name, original, wrappers[id(original)]))

    def restore(self):
        """Puts the original functions back (where nobody re-wrapped them)."""
        self._active = False
        for module, name, original, wrapper in reversed(self._patched):
            if getattr(module, name, None) is wrapper:
                setattr(module, name, original)
        self._patched = []

    def _wrap(self, original):
        tracker = self

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            if not tracker._active or _depth() > 0:
                return original(*args, **kwargs)
            number = tracker._seq.start()
            try:
                with _nested():
                    result = original(*args, **kwargs)
            except BaseException:
                tracker._seq.complete(number)  # failed, not in flight: no false hang
                raise
            if result is not None and hasattr(result, "is_completed"):
                tracker._track(number, result)
            else:
                tracker._seq.complete(number)
            return result

        return wrapper

    def _track(self, number, work):
        try:
            fut = work.get_future()
        except Exception:  # noqa: BLE001 - some backends/ops have no future
            fut = None
        if fut is not None:
            try:
                fut.add_done_callback(lambda f: self._seq.complete(number))
                return
            except Exception:  # noqa: BLE001 - a Future without add_done_callback
                pass
        with self._lock:
            self._pending.append((number, work))

    def poll(self):
        """Completes the async works (without a future) that have finished."""
        with self._lock:
            works, self._pending = self._pending, []
        if not works:
            return
        still = []
        for number, work in works:
            try:
                done = work.is_completed()
            except Exception:  # noqa: BLE001
                done = True
            if done:
                self._seq.complete(number)
            else:
                still.append((number, work))
        if still:
            with self._lock:
                self._pending[:0] = still
