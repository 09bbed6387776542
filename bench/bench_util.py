"""Helpers shared by the benchmark scripts in bench/ (Python 3 stdlib only).

Contract:
- Every child process is owned by a Child and stopped (SIGTERM, then SIGKILL
  after a grace period) when its `with` block ends, even on error.
- Only loopback addresses are contacted; proxies from the environment are
  ignored.
- CPU time of a process is read from /proc: per-thread run time in
  nanoseconds (/proc/PID/task/TID/schedstat) where available, which is
  precise enough to attribute short phases, and utime + stime from
  /proc/PID/stat (clock ticks) as a cross-check.
"""

import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port():
    """A loopback TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, headers=None, timeout=10.0):
    """GET a loopback URL; returns (status, body bytes)."""
    if not url.startswith("http://127.0.0.1:"):
        raise ValueError(f"refusing non-loopback URL {url}")
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with _OPENER.open(request, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Child:
    """A started process whose output goes to a temp file."""

    def __init__(self, argv, name=None, env=None):
        self.argv = [str(a) for a in argv]
        self.name = name or os.path.basename(self.argv[0])
        self._log = tempfile.TemporaryFile()
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=full_env)
        self.pid = self.proc.pid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def running(self):
        return self.proc.poll() is None

    def stop(self, grace=10.0):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=grace)
        return self.proc.returncode

    def log_tail(self, chars=3000):
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-chars:]

    def wait_http(self, url, timeout=60.0):
        """Polls url until it answers 200; raises if the process exits first."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if not self.running():
                raise RuntimeError(f"{self.name} exited before {url} answered:\n"
                                   f"{self.log_tail()}")
            try:
                status, _ = http_get(url, timeout=2.0)
                if status == 200:
                    return
                last = f"HTTP {status}"
            except OSError as e:
                last = str(e)
            time.sleep(0.2)
        raise RuntimeError(f"{url} did not answer within {timeout:.0f} s (last: {last})\n"
                           f"{self.log_tail()}")


def thread_cpu_ns(pid):
    """{tid: on-CPU nanoseconds} for every live thread of pid, or None when
    schedstat is unavailable."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as f:
                out[int(tid)] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # the thread exited meanwhile
    return out or None


def thread_wakeups(pid):
    """{tid: context switches so far (voluntary + involuntary)} of pid's threads."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status", encoding="ascii") as f:
                n = 0
                for line in f:
                    key, _, value = line.partition(":")
                    if key in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                        n += int(value)
                out[int(tid)] = n
        except (OSError, ValueError):
            continue
    return out


def stat_cpu_seconds(pid):
    """utime + stime of the whole process (live and exited threads), seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        # The command name may contain spaces; fields follow the last ')'.
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def memory_kib(pid):
    """{'VmRSS': kib, 'VmHWM': kib, ...} from /proc/PID/status."""
    out = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.startswith("Vm") and value.strip().endswith("kB"):
                out[key] = int(value.split()[0])
    return out


class CpuSample:
    """One reading of a process's CPU time."""

    def __init__(self, pid):
        self.time = time.monotonic()
        self.threads = thread_cpu_ns(pid)
        self.stat_seconds = stat_cpu_seconds(pid)

    def seconds(self):
        """Process CPU seconds: schedstat sum if available, else stat."""
        if self.threads is not None:
            return sum(self.threads.values()) / 1e9
        return self.stat_seconds


def cpu_delta(before, after, exclude_tids=()):
    """(wall seconds, CPU seconds) between two samples; CPU of the threads in
    exclude_tids is left out (schedstat only)."""
    wall = after.time - before.time
    if before.threads is None or after.threads is None:
        return wall, after.stat_seconds - before.stat_seconds
    cpu = 0
    for tid, ns in after.threads.items():
        if tid in exclude_tids:
            continue
        cpu += ns - before.threads.get(tid, 0)
    return wall, cpu / 1e9


def machine_description():
    """nproc, CPU model and memory of this machine, for the report."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_kib = 0
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_kib = int(line.split()[1])
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu_model": model,
            "memory_gib": round(mem_kib / 1024 / 1024, 1),
            "load_average": os.getloadavg()}


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)
