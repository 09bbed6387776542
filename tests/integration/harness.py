"""Shared helpers for gpumon's black-box integration tests (stdlib only).

Each test_*.py is a standalone program run by ctest:
    python3 test_x.py --gpumon PATH/TO/gpumon --source-dir REPO_ROOT
It exits 0 on pass, 77 when it must skip (a tool it needs is absent), and 1
on failure with a message saying what was expected and what was seen.

Every process a test starts is owned by a Process object and killed in a
`finally`; every wait is bounded; only loopback addresses are ever contacted
(proxies from the environment are ignored on purpose).
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

SKIP = 77

# Prometheus' own Accept header (2.42), which prefers OpenMetrics.
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,"
                     "application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OPENMETRICS_CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"


class Skip(Exception):
    """Raised to end a test with the skip exit code."""


class TestFailure(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise TestFailure(message)


def parse_args(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpumon", required=True, help="path to the gpumon binary")
    parser.add_argument("--source-dir", required=True, help="repository root")
    return parser.parse_args(argv)


def run_test(body):
    """Runs body(args) and exits with the ctest convention (0/77/1)."""
    args = parse_args()
    name = os.path.basename(sys.argv[0])
    try:
        if not os.access(args.gpumon, os.X_OK):
            raise TestFailure(f"gpumon binary not found or not executable: {args.gpumon}")
        body(args)
    except Skip as e:
        print(f"SKIP {name}: {e}")
        sys.exit(SKIP)
    except TestFailure as e:
        print(f"FAIL {name}: {e}")
        sys.exit(1)
    except Exception:  # noqa: BLE001 - any crash of the test is a failure
        traceback.print_exc()
        print(f"FAIL {name}: unexpected error")
        sys.exit(1)
    print(f"PASS {name}")
    sys.exit(0)


def free_port():
    """A loopback TCP port that was free a moment ago (bind port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- HTTP

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # email.message.Message: case-insensitive get()
        self.body = body  # bytes, as received (not decompressed)

    def header(self, name):
        return self.headers.get(name)

    @property
    def text(self):
        return self.body.decode("utf-8")


def http_get(url, headers=None, timeout=10.0):
    """GET url; returns a Response for any HTTP status (raises on no answer)."""
    check(url.startswith("http://127.0.0.1:"), f"refusing non-loopback URL {url}")
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with _OPENER.open(request, timeout=timeout) as r:
            return Response(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, e.headers, e.read())


# ------------------------------------------------------------ processes


class Process:
    """A child process with output captured to temp files; use as a context
    manager so it is always stopped."""

    def __init__(self, argv, env=None, name=None):
        self.argv = [str(a) for a in argv]
        self.name = name or os.path.basename(self.argv[0])
        self._out = tempfile.TemporaryFile()
        self._err = tempfile.TemporaryFile()
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=self._err, env=full_env)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def running(self):
        return self.proc.poll() is None

    def stop(self, grace=5.0):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=grace)
        return self.proc.returncode

    def _read(self, f):
        f.seek(0)
        return f.read().decode("utf-8", "replace")

    def stdout(self):
        return self._read(self._out)

    def stderr(self):
        return self._read(self._err)

    def describe(self):
        rc = self.proc.poll()
        state = "still running" if rc is None else f"exited with {rc}"
        err = self.stderr().strip()[-3000:]
        out = self.stdout().strip()[-1500:]
        return (f"{self.name} ({' '.join(self.argv)}) {state}\n"
                f"--- stderr ---\n{err}\n--- stdout ---\n{out}")

    def wait_http(self, url, timeout=30.0, expect_status=200):
        """Polls url until it answers expect_status; fails early if the process dies."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if not self.running():
                raise TestFailure(f"{self.name} exited before {url} answered\n{self.describe()}")
            try:
                r = http_get(url, timeout=2.0)
                if r.status == expect_status:
                    return r
                last = f"HTTP {r.status}"
            except (OSError, urllib.error.URLError) as e:
                last = str(e)
            time.sleep(0.1)
        raise TestFailure(f"{url} did not answer {expect_status} within {timeout:.0f} s "
                          f"(last: {last})\n{self.describe()}")


def start_on_free_port(make_argv, ready_path, name, env=None, ready_timeout=30.0,
                       expect_status=200):
    """Starts make_argv(port) on a free loopback port and waits until
    ready_path answers expect_status (401 for a server behind basic auth
    probed without credentials). Another process may take the port between our
    probe and the server's bind, so a start that fails with "address already
    in use" is retried on a new port. Returns (process, port)."""
    for attempt in range(3):
        port = free_port()
        proc = Process(make_argv(port), env=env, name=name)
        try:
            proc.wait_http(f"http://127.0.0.1:{port}{ready_path}", timeout=ready_timeout,
                           expect_status=expect_status)
            return proc, port
        except TestFailure:
            proc.stop()
            if attempt < 2 and "in use" in proc.stderr().lower():
                continue
            raise
        except BaseException:
            proc.stop()
            raise
    raise TestFailure("unreachable")


class Agent:
    """`gpumon agent` on a free loopback port; a context manager."""

    def __init__(self, gpumon, args=(), env=None, ready_timeout=30.0, ready_path="/healthz"):
        self.process, self.port = start_on_free_port(
            lambda port: [gpumon, "agent", "--listen", f"127.0.0.1:{port}", *args],
            ready_path, "gpumon agent", env=env, ready_timeout=ready_timeout)
        self.base = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def stop(self):
        return self.process.stop()

    def running(self):
        return self.process.running()

    def describe(self):
        return self.process.describe()

    def metrics(self, headers=None):
        r = http_get(self.base + "/metrics", headers=headers)
        check(r.status == 200, f"GET /metrics answered {r.status}: {r.body[:300]!r}")
        return r


def wait_until(predicate, timeout, interval=0.25, what="condition"):
    """Calls predicate() until it returns a truthy value; returns it.
    On timeout raises TestFailure with the last value seen."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise TestFailure(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def need_tool(name, fallback_paths=()):
    path = shutil.which(name)
    if path:
        return path
    for p in fallback_paths:
        if os.access(p, os.X_OK):
            return p
    raise Skip(f"{name} is not installed (scripts/install-deps.sh installs it)")


# ------------------------------------------------------ exposition parsing

_SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(\s+\S+)?\s*$")
_LABEL_RE = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')


class Sample:
    def __init__(self, name, labels, value):
        self.name = name
        self.labels = labels
        self.value = value

    def __repr__(self):
        inner = ",".join(f'{k}="{v}"' for k, v in sorted(self.labels.items()))
        return f"{self.name}{{{inner}}} {self.value}"


def _unescape(v):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def _parse_labels(text, line):
    labels = {}
    body = text[1:-1]
    pos = 0
    while pos < len(body):
        m = _LABEL_RE.match(body, pos)
        if not m:
            raise TestFailure(f"cannot parse labels in line: {line!r}")
        labels[m.group(1)] = _unescape(m.group(2))
        pos = m.end()
    return labels


def parse_exposition(text):
    """Parses Prometheus text 0.0.4 / OpenMetrics into (samples, types) where
    samples is a list of Sample and types maps family name -> type. Strict
    enough to catch malformed lines; not a full validator (promtool is)."""
    samples = []
    types = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                types[parts[2]] = parts[3].strip()
            continue
        m = _SAMPLE_RE.match(line)
        if not m:
            raise TestFailure(f"cannot parse sample line: {line!r}")
        labels = _parse_labels(m.group(2), line) if m.group(2) else {}
        value = m.group(3)
        try:
            number = float(value)
        except ValueError:
            raise TestFailure(f"bad sample value in line: {line!r}") from None
        samples.append(Sample(m.group(1), labels, number))
    return samples, types


def series(samples, name, **labels):
    """Samples named `name` whose labels include all of `labels`."""
    return [s for s in samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]


def names(samples):
    return {s.name for s in samples}


def gpu_indexes(samples, name):
    return sorted({s.labels.get("gpu") for s in samples if s.name == name},
                  key=lambda g: (len(g or ""), g or ""))


def source_file(args, *parts):
    return os.path.join(args.source_dir, *parts)
