"""ServingMetrics: request latency, TTFT, TPOT, queue and token metrics for
any Python inference server (docs/jobs.md, "Serving metrics").

Contract:
- naming="gpumon" (default) emits serving_* names; naming="vllm" emits vLLM's
  vllm:* names so vLLM dashboards work unchanged. Series carry job, node and
  model; with vLLM names they also carry vLLM's `model_name` (same value),
  which vLLM's dashboards select on.
- Own CollectorRegistry unless `registry` is given. job/node as in labels.py.
- `with m.request() as r:` times one request from arrival to completion:
  r.scheduled() ends its queue time (called implicitly at the start unless
  request(queued=True)); r.first_token() marks the first output token (TTFT
  from arrival); r.tokens(prompt=, generated=) adds token counts (may be
  called repeatedly; counts add up); r.finished_reason defaults to "stop",
  "abort" when the block raises. At the end: request duration, TPOT
  ((end - first token) / (generated - 1), when generated > 1), token
  counters and requests_total{finished_reason}.
- Queue depth: requests in a request() block count as waiting until scheduled
  and running after, unless track_queue=False; set_queue_depth() sets the
  gauges directly (use one or the other).
- observe_batch(requests=, tokens=): serving_batch_size observes requests
  per batch; with vLLM names vllm:iteration_tokens_total observes tokens.
- Delivery as TrainingMonitor: push_url / serve_port, close().
"""

import atexit
import math
import threading
from time import perf_counter
from typing import Optional

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from . import labels as _labels
from .delivery import PushDelivery, start_delivery

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0,
                   15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 300.0)
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                5.0, 7.5, 10.0, 20.0, 40.0)
TPOT_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
                1.0, 2.5)
BATCH_REQUEST_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
BATCH_TOKEN_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)

# metric key -> (gpumon name, vLLM name, help)
NAMES = {
    "duration": ("serving_request_duration_seconds", "vllm:e2e_request_latency_seconds",
                 "End-to-end request latency."),
    "ttft": ("serving_time_to_first_token_seconds", "vllm:time_to_first_token_seconds",
             "Time from a request's arrival to its first output token."),
    "tpot": ("serving_time_per_output_token_seconds", "vllm:time_per_output_token_seconds",
             "Time per output token after the first."),
    "queue": ("serving_request_queue_time_seconds", "vllm:request_queue_time_seconds",
              "Time requests waited before being scheduled."),
    "waiting": ("serving_requests_waiting", "vllm:num_requests_waiting",
                "Requests waiting to be scheduled."),
    "running": ("serving_requests_running", "vllm:num_requests_running",
                "Requests being processed."),
    "batch": ("serving_batch_size", "vllm:iteration_tokens_total",
              "Requests per batch (vLLM naming: tokens per iteration)."),
    "prompt": ("serving_prompt_tokens", "vllm:prompt_tokens", "Prompt tokens processed."),
    "generation": ("serving_generation_tokens", "vllm:generation_tokens",
                   "Generation tokens produced."),
    "requests": ("serving_requests", "vllm:request_success", "Requests finished."),
}


class Request:
    """One request; see ServingMetrics.request."""

    __slots__ = ("_m", "_arrival", "_scheduled", "_first", "prompt_tokens",
                 "generated_tokens", "finished_reason", "_queued")

    def __init__(self, metrics, queued):
        self._m = metrics
        self._queued = queued
        self._scheduled = None
        self._first = None
        self.prompt_tokens = 0
        self.generated_tokens = 0
        self.finished_reason = None

    def __enter__(self):
        self._arrival = perf_counter()
        if self._queued:
            self._m._queue_change(waiting=1)
        else:
            self._scheduled = self._arrival
            self._m._queue_change(running=1)
        return self

    def scheduled(self) -> None:
        """The request leaves the queue (observes its queue time once)."""
        if self._scheduled is not None:
            return
        self._scheduled = perf_counter()
        self._m._queue.observe(self._scheduled - self._arrival)
        self._m._queue_change(waiting=-1, running=1)

    def first_token(self) -> None:
        """The first output token is ready (observes TTFT once)."""
        if self._first is not None:
            return
        if self._scheduled is None:
            self.scheduled()
        self._first = perf_counter()
        self._m._ttft.observe(self._first - self._arrival)

    def tokens(self, prompt: int = 0, generated: int = 0) -> None:
        self.prompt_tokens += int(prompt)
        self.generated_tokens += int(generated)

    def __exit__(self, exc_type, exc, tb):
        end = perf_counter()
        m = self._m
        if self._scheduled is None:  # never scheduled: it waited all along
            m._queue.observe(end - self._arrival)
            m._queue_change(waiting=-1)
        else:
            m._queue_change(running=-1)
        m._duration.observe(end - self._arrival)
        if self._first is not None and self.generated_tokens > 1:
            m._tpot.observe((end - self._first) / (self.generated_tokens - 1))
        if self.prompt_tokens > 0:
            m._prompt.inc(self.prompt_tokens)
        if self.generated_tokens > 0:
            m._generation.inc(self.generated_tokens)
        reason = self.finished_reason or ("abort" if exc_type is not None else "stop")
        m._finished(reason).inc()
        return False


class ServingMetrics:
    """Serving metrics of one server process; see the module docstring."""

    def __init__(self, naming: str = "gpumon", model: str = "", job=None, node=None,
                 registry=None, push_url=None, push_interval=5.0, serve_port=None,
                 track_queue: bool = True, serve_addr: str = "0.0.0.0", push_timeout=None):
        if naming not in ("gpumon", "vllm"):
            raise ValueError(f"gpumon: naming must be 'gpumon' or 'vllm', got {naming!r}")
        self.naming = naming
        self.labels = _labels.resolve(job=job, node=node)
        self.model = str(model)
        self.registry = registry if registry is not None else CollectorRegistry()
        self.track_queue = track_queue
        self._lock = threading.Lock()
        names = ["job", "node", "model"]
        values = [self.labels.job, self.labels.node, self.model]
        if naming == "vllm":
            names.append("model_name")
            values.append(self.model)
        self._names = tuple(names)
        self._values = tuple(values)
        column = 0 if naming == "gpumon" else 1

        def make(cls, key, **kw):
            name = NAMES[key][column]
            return cls(name, NAMES[key][2], self._names, registry=self.registry, **kw)

        self._duration = make(Histogram, "duration", buckets=LATENCY_BUCKETS).labels(*values)
        self._ttft = make(Histogram, "ttft", buckets=TTFT_BUCKETS).labels(*values)
        self._tpot = make(Histogram, "tpot", buckets=TPOT_BUCKETS).labels(*values)
        self._queue = make(Histogram, "queue", buckets=LATENCY_BUCKETS).labels(*values)
        self._waiting = make(Gauge, "waiting").labels(*values)
        self._running = make(Gauge, "running").labels(*values)
        batch_buckets = BATCH_REQUEST_BUCKETS if naming == "gpumon" else BATCH_TOKEN_BUCKETS
        self._batch = make(Histogram, "batch", buckets=batch_buckets).labels(*values)
        self._prompt = make(Counter, "prompt").labels(*values)
        self._generation = make(Counter, "generation").labels(*values)
        self._requests = Counter(NAMES["requests"][column], NAMES["requests"][2],
                                 self._names + ("finished_reason",), registry=self.registry)
        self._reasons = {}

        self._closed = False
        self._push, self._server = start_delivery(
            self.registry, self.labels.grouping(),
            {"job": self.labels.job, "node": self.labels.node}, push_url, push_interval,
            push_timeout, serve_port, serve_addr)
        atexit.register(self.close)

    def request(self, queued: bool = False) -> Request:
        """A context manager around one request (see the module docstring)."""
        return Request(self, queued)

    def _finished(self, reason: str):
        child = self._reasons.get(reason)
        if child is None:
            child = self._requests.labels(*self._values, reason)
            self._reasons[reason] = child
        return child

    def _queue_change(self, waiting: int = 0, running: int = 0) -> None:
        if not self.track_queue:
            return
        if waiting:
            self._waiting.inc(waiting)
        if running:
            self._running.inc(running)

    def observe_queue_time(self, seconds: float) -> None:
        """For servers that measure queue time themselves."""
        if seconds >= 0 and math.isfinite(seconds):
            self._queue.observe(seconds)

    def set_queue_depth(self, waiting: Optional[int] = None,
                        running: Optional[int] = None) -> None:
        if waiting is not None:
            self._waiting.set(waiting)
        if running is not None:
            self._running.set(running)

    def observe_batch(self, requests: Optional[int] = None, tokens: Optional[int] = None) -> None:
        """One batch (iteration): requests in it and the tokens it processed."""
        value = requests if self.naming == "gpumon" else tokens
        if value is not None and value >= 0:
            self._batch.observe(value)

    @property
    def serve_port(self) -> Optional[int]:
        return self._server.port if self._server is not None else None

    @property
    def push(self) -> Optional[PushDelivery]:
        return self._push

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            atexit.unregister(self.close)
        except Exception:  # noqa: BLE001
            pass
        if self._push is not None:
            self._push.close()
        if self._server is not None:
            self._server.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
