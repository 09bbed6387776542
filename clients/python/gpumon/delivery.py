"""Getting a monitor's registry to gpumon: push to the node's agent, or serve.

Contract:
- PushDelivery: a daemon thread that renders the registry and sends it with
  HTTP PUT to <url>/metrics/job/<job>{/<label>/<value>} (Pushgateway paths,
  the same request prometheus_client's push_to_gateway makes: text format
  0.0.4; values that are empty or hold "/" are sent as `<label>@base64/...`)
  every `interval` seconds, once more at close(), and when push_now() asks.
  The grouping labels are left out of the body's samples: the path carries
  them, and a sample label conflicting with the grouping key is an error for a
  Pushgateway-compatible receiver.
- Bounded: it holds one snapshot at a time, rendered just before it is sent;
  nothing queues while the receiver is down. Each request has a short timeout
  (default min(2 s, interval)).
- Never raises into, nor blocks, the caller: errors are counted and logged on
  the "gpumon" logger (once when pushes start failing, once when they work
  again). Counters, in the same registry and so delivered with the next
  successful push: gpumon_client_pushes_total (successful pushes),
  gpumon_client_push_failures_total (failed pushes),
  gpumon_client_dropped_samples_total (samples in snapshots that could not be
  delivered).
- Fork-safe: in a forked child (a data-loader worker, say) the inherited
  object never pushes, so a child's stale copy cannot replace the parent's
  group.
- MetricsServer: serves the registry on /metrics (prometheus_client's WSGI
  app: text or OpenMetrics by Accept header) from a daemon thread; port 0
  picks a free port (see .port); close() stops it.
"""

import base64
import http.client
import logging
import math
import os
import socket
import threading
import urllib.parse
from typing import Dict, Iterable, Optional, Tuple
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.exposition import ThreadingWSGIServer, make_wsgi_app
from prometheus_client.utils import floatToGoString

log = logging.getLogger("gpumon")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


# ------------------------------------------------------------- rendering

def _escape_label(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _escape_help(text: str) -> str:
    return text.replace("\\", r"\\").replace("\n", r"\n")


_TYPE_NAMES = {"info": "gauge", "stateset": "gauge", "gaugehistogram": "histogram",
               "unknown": "untyped"}


def render_text(registry, drop_labels: Iterable[str] = ()) -> Tuple[bytes, int]:
    """The registry in text format 0.0.4 without the labels in drop_labels
    and without the OpenMetrics-only `_created` samples; returns (body,
    number of samples)."""
    drop = frozenset(drop_labels)
    out = []
    count = 0
    for metric in registry.collect():
        name = metric.name
        mtype = metric.type
        if mtype == "counter":
            name += "_total"
        elif mtype == "info":
            name += "_info"
        lines = []
        for s in metric.samples:
            if s.name.endswith(("_created", "_gsum", "_gcount")) and s.name != name:
                continue
            labels = [(k, v) for k, v in sorted(s.labels.items()) if k not in drop]
            if labels:
                label_text = "{" + ",".join(f'{k}="{_escape_label(v)}"' for k, v in labels) + "}"
            else:
                label_text = ""
            lines.append(f"{s.name}{label_text} {floatToGoString(s.value)}\n")
        if not lines:
            continue
        out.append(f"# HELP {name} {_escape_help(metric.documentation)}\n")
        out.append(f"# TYPE {name} {_TYPE_NAMES.get(mtype, mtype)}\n")
        out.extend(lines)
        count += len(lines)
    return "".join(out).encode("utf-8"), count


def grouping_path(grouping: Dict[str, str]) -> str:
    """/metrics/job/<job>/<label>/<value>... with Pushgateway's encoding."""
    if not grouping.get("job"):
        raise ValueError("gpumon: a push needs a non-empty job label")
    parts = ["/metrics"]
    for key in ["job"] + [k for k in grouping if k != "job"]:
        value = str(grouping[key])
        if value == "":
            parts.append(f"{key}@base64/=")
        elif "/" in value:
            encoded = base64.urlsafe_b64encode(value.encode("utf-8")).decode("ascii")
            parts.append(f"{key}@base64/{encoded}")
        else:
            parts.append(f"{key}/{urllib.parse.quote(value, safe='')}")
    return "/".join(parts)


def parse_port(value, what) -> int:
    """A TCP port number (0: any free port); ValueError naming `what` if not."""
    try:
        port = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"gpumon: {what} must be a port number, got {value!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"gpumon: {what} must be 0..65535, got {port}")
    return port


# ------------------------------------------------------------------ push

class PushDelivery:
    """Pushes `registry` to a Pushgateway-compatible receiver from a thread."""

    def __init__(self, registry: CollectorRegistry, url: str, grouping: Dict[str, str],
                 interval: float = 5.0, timeout: Optional[float] = None,
                 self_labels: Optional[Dict[str, str]] = None):
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError(f"gpumon: push interval must be a positive number, got {interval!r}")
        if "://" not in url:
            url = "http://" + url
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("gpumon: push URL must be http(s)://host[:port][/prefix], "
                             f"got {url!r}")
        self._https = parsed.scheme == "https"
        self._host = parsed.hostname
        self._port = parsed.port or (443 if self._https else 80)
        self._path = parsed.path.rstrip("/") + grouping_path(grouping)
        self._headers = {"Content-Type": CONTENT_TYPE}
        if parsed.username is not None:
            creds = f"{urllib.parse.unquote(parsed.username)}:" \
                    f"{urllib.parse.unquote(parsed.password or '')}"
            self._headers["Authorization"] = "Basic " + base64.b64encode(
                creds.encode("utf-8")).decode("ascii")
        self.url = f"{parsed.scheme}://{parsed.hostname}:{self._port}{self._path}"
        self._registry = registry
        self._drop = tuple(grouping)
        self._interval = float(interval)
        self._timeout = float(timeout) if timeout is not None else min(2.0, self._interval)

        self_labels = dict(self_labels or {})
        names = list(self_labels)
        values = [self_labels[n] for n in names]

        def counter(name, doc):
            c = Counter(name, doc, names, registry=registry)
            return c.labels(*values) if names else c

        self._pushes = counter("gpumon_client_pushes", "Successful pushes of this client.")
        self._failures = counter("gpumon_client_push_failures", "Failed pushes of this client.")
        self._dropped = counter("gpumon_client_dropped_samples",
                                "Samples in snapshots this client could not deliver.")
        self._pid = os.getpid()
        self._failing = False
        self._last_error: Optional[str] = None
        self._lock = threading.Lock()  # one push at a time (thread vs. close)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gpumon-push", daemon=True)
        self._thread.start()

    @property
    def last_error(self) -> Optional[str]:
        """The last push's error, None when it succeeded."""
        return self._last_error

    def push_now(self) -> None:
        """Asks the thread to push soon; returns at once."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self._interval)
            self._wake.clear()
            if self._stopping.is_set():
                break
            self.push_once()

    def push_once(self) -> bool:
        """Renders and sends one snapshot; True on success. Never raises."""
        if os.getpid() != self._pid:
            return False
        with self._lock:
            try:
                body, samples = render_text(self._registry, self._drop)
            except Exception as e:  # noqa: BLE001 - a collector failed; keep going
                self._record_failure(f"rendering the registry failed: {e!r}", 0)
                return False
            error = self._send(body)
            if error is None:
                self._pushes.inc()
                self._last_error = None
                if self._failing:
                    self._failing = False
                    log.info("gpumon: pushes to %s work again", self.url)
                return True
            self._record_failure(error, samples)
            return False

    def _record_failure(self, error: str, samples: int) -> None:
        self._failures.inc()
        self._dropped.inc(samples)
        self._last_error = error
        if not self._failing:
            self._failing = True
            log.warning("gpumon: push to %s failed (%s); retrying every %.3g s, "
                        "dropping the snapshots meanwhile", self.url, error, self._interval)

    def _send(self, body: bytes) -> Optional[str]:
        conn_class = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = conn_class(self._host, self._port, timeout=self._timeout)
        try:
            conn.request("PUT", self._path, body=body, headers=self._headers)
            response = conn.getresponse()
            detail = response.read(300)
            if 200 <= response.status < 300:
                return None
            text = detail.decode("utf-8", "replace").strip()
            return f"HTTP {response.status}: {text}" if text else f"HTTP {response.status}"
        except (OSError, http.client.HTTPException, socket.timeout) as e:
            return f"{type(e).__name__}: {e}"
        except Exception as e:  # noqa: BLE001 - never raise into the caller
            return f"{type(e).__name__}: {e}"
        finally:
            conn.close()

    def close(self, timeout: Optional[float] = None) -> None:
        """Stops the thread, then makes one final push (skipped when the
        thread is still stuck in a push after `timeout`, default the request
        timeout + 1 s); at most about two request timeouts. Never raises."""
        if self._stopping.is_set() or os.getpid() != self._pid:
            return
        self._stopping.set()
        self._wake.set()
        wait = (self._timeout + 1.0) if timeout is None else timeout
        self._thread.join(wait)
        if self._thread.is_alive():
            return  # still stuck in a push to a stalled receiver: give up
        self.push_once()


# ----------------------------------------------------------------- serve

class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


class MetricsServer:
    """Serves a registry on http://<addr>:<port>/metrics from a thread."""

    def __init__(self, registry: CollectorRegistry, port: int, addr: str = "0.0.0.0"):
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET

        class _Server(ThreadingWSGIServer):
            address_family = family

        try:
            self._httpd = make_server(addr, int(port), make_wsgi_app(registry), _Server,
                                      handler_class=_QuietHandler)
        except OSError as e:
            raise OSError(e.errno, f"gpumon: cannot serve /metrics on {addr}:{port}: "
                                   f"{e.strerror}") from None
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        name="gpumon-serve", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(2.0)


def start_delivery(registry, grouping, self_labels, push_url=None, push_interval=5.0,
                   push_timeout=None, serve_port=None, serve_addr="0.0.0.0"):
    """(PushDelivery or None, MetricsServer or None) for a monitor: push_url
    else $GPUMON_PUSH_URL, serve_port else $GPUMON_SERVE_PORT. Everything is
    validated before any thread starts; on error nothing is left running."""
    if push_url is None:
        push_url = os.environ.get("GPUMON_PUSH_URL") or None
    if serve_port is None and os.environ.get("GPUMON_SERVE_PORT"):
        serve_port = parse_port(os.environ["GPUMON_SERVE_PORT"], "$GPUMON_SERVE_PORT")
    elif serve_port is not None:
        serve_port = parse_port(serve_port, "serve_port")
    server = MetricsServer(registry, serve_port, serve_addr) if serve_port is not None else None
    try:
        push = None
        if push_url:
            push = PushDelivery(registry, push_url, grouping, interval=push_interval,
                                timeout=push_timeout, self_labels=self_labels)
    except BaseException:
        if server is not None:
            server.close()
        raise
    return push, server
