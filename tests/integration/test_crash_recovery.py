#!/usr/bin/env python3
"""Every remote-write request `gpumon server` acknowledged survives kill -9,
in gpumon and in the remote-write receiver it forwards to.

`gpumon server` runs the whole pipeline at once: it scrapes `gpumon
simulate` every second, evaluates a recording rule every second, accepts
remote write (--web.enable-remote-write-receiver), and remote-writes
everything to a real VictoriaMetrics on loopback. A sender thread pushes
one series of its own, crash_probe{run=...}, to gpumon's /api/v1/write: 4
samples per request with known timestamps and values, retrying a request
until it is answered, and records which requests were acknowledged (2xx).
Meanwhile gpumon is killed with SIGKILL at seeded-random moments (KILLS
times; some during start-up, the rest 0.3-1.5 s after it is serving) and
restarted on the same data directory and port.

At the end, with gpumon running again and the sender stopped:
- gpumon holds every acknowledged sample with its exact value, and for
  crash_probe nothing else than what was sent (no changed values);
- once the remote-write queue has drained, VictoriaMetrics holds every
  acknowledged sample exactly too (values chosen to be exact in both
  binary and decimal, since VictoriaMetrics stores decimals); duplicates
  (at-least-once delivery) are allowed, other values are not;
- scraping and rule evaluation resumed after the last restart;
- SIGTERM then stops gpumon with exit status 0.

GPUMON_CRASH_SEED overrides the seed (printed) to replay a run.
"""

import json
import os
import random
import signal
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from harness import (Process, TestFailure, check, free_port, http_get, need_tool, run_test,
                     start_on_free_port, wait_until)
from remote_write_encoding import snappy_literal, write_request

KILLS = 50
STARTUP_KILL_SHARE = 0.2  # of the kills land while the server is starting
SAMPLES_PER_REQUEST = 4
STEP_MS = 5  # between the probe's timestamps
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def probe_value(i):
    # Exact in binary and with two decimals, distinct for every i.
    return 3 + 1.25 * i


def post(url, body, headers, timeout):
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with _OPENER.open(request, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Sender(threading.Thread):
    """Pushes crash_probe in batches; a batch is resent until answered."""

    def __init__(self, port_of, run_id, t0_ms):
        super().__init__(daemon=True)
        self.port_of = port_of
        self.labels = {"__name__": "crash_probe", "run": run_id}
        self.t0_ms = t0_ms
        self.stopping = threading.Event()
        self.acked = {}  # t_ms -> value
        self.rejected = []  # (first t_ms, status, body)
        self.attempts = 0
        self.failed_attempts = 0
        self.batches = 0

    def batch(self, k):
        first = k * SAMPLES_PER_REQUEST
        return [(self.t0_ms + i * STEP_MS, probe_value(i))
                for i in range(first, first + SAMPLES_PER_REQUEST)]

    def run(self):
        k = 0
        headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "snappy",
                   "X-Prometheus-Remote-Write-Version": "0.1.0"}
        while not self.stopping.is_set():
            samples = self.batch(k)
            # Timestamps never run ahead of the clock, as a real sender's.
            while samples[-1][0] > time.time() * 1000 and not self.stopping.is_set():
                time.sleep(0.05)
            body = snappy_literal(write_request([(self.labels, samples)]))
            while not self.stopping.is_set():
                self.attempts += 1
                try:
                    status, text = post(f"http://127.0.0.1:{self.port_of()}/api/v1/write", body,
                                        headers, timeout=5)
                except OSError:
                    status, text = None, b""
                if status is not None and 200 <= status < 300:
                    self.acked.update(samples)
                    break
                if status is not None and 400 <= status < 500:
                    self.rejected.append((samples[0][0], status, text[:200]))
                    break
                self.failed_attempts += 1
                time.sleep(0.02)
            k += 1
            self.batches = k

    def stop(self):
        """Stops after the batch in flight is answered (bounded)."""
        self.stopping.set()
        self.join(timeout=15)
        check(not self.is_alive(), "the sender did not stop")


def write_files(tmp, sim_port, vm_port):
    with open(os.path.join(tmp, "rules.yml"), "w") as f:
        f.write("groups:\n  - name: crash\n    interval: 1s\n    rules:\n"
                "      - record: crash:gpu_temperature_celsius:sum\n"
                "        expr: sum(gpu_temperature_celsius)\n")
    config = os.path.join(tmp, "gpumon.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "rule_files:\n  - rules.yml\n"
                "scrape_configs:\n  - job_name: gpu\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{sim_port}']\n"
                "        labels: {__metrics_path__: /node/0/metrics}\n"
                "remote_write:\n"
                f"  - url: http://127.0.0.1:{vm_port}/api/v1/write\n    name: vm\n"
                "    queue_config: {batch_send_deadline: 500ms, min_backoff: 50ms, "
                "max_backoff: 500ms}\n")
    return config


def raw_series(base, selector, at_s, window_s, extra=""):
    """[(t_ms, value)] of selector[window] at at_s (one series expected)."""
    url = (base + "/api/v1/query?query=" + urllib.parse.quote(f"{selector}[{window_s}s]") +
           f"&time={at_s:.3f}" + extra)
    r = http_get(url, timeout=30)
    check(r.status == 200, f"{url} answered {r.status}: {r.body[:300]!r}")
    result = json.loads(r.text)["data"]["result"]
    check(len(result) <= 1, f"{selector}: {len(result)} series, want 1: {result[:2]}")
    return [(round(float(t) * 1000), float(v)) for t, v in result[0]["values"]] if result else []


def vm_export(vm_base, selector):
    """[(t_ms, value)] of every raw sample VictoriaMetrics holds."""
    http_get(vm_base + "/internal/force_flush", timeout=10)
    # The default end of the export is now; take everything.
    r = http_get(vm_base + "/api/v1/export?" + urllib.parse.urlencode(
        {"match[]": selector, "start": "0", "end": f"{time.time() + 3600:.0f}"}), timeout=30)
    check(r.status == 200, f"VictoriaMetrics export answered {r.status}: {r.body[:300]!r}")
    out = []
    for line in r.text.splitlines():
        if line.strip():
            doc = json.loads(line)
            out += zip(doc["timestamps"], doc["values"])
    return sorted((int(t), float(v)) for t, v in out)


def compare(name, acked, sent, got, allow_duplicates):
    """A description of how `got` fails to hold `acked`, or None."""
    problems = []
    held = {}
    duplicates = 0
    for t, v in got:
        if t in held:
            duplicates += 1
            if held[t] != v:
                problems.append(f"two values at {t}: {held[t]} and {v}")
        held[t] = v
    if duplicates and not allow_duplicates:
        problems.append(f"{duplicates} duplicate samples")
    missing = sorted(t for t in acked if t not in held)
    if missing:
        problems.append(f"{len(missing)} of {len(acked)} acknowledged samples missing, first "
                        f"{missing[:5]} (t0-relative ms: {[t - min(sent) for t in missing[:5]]})")
    changed = [(t, v, sent.get(t)) for t, v in held.items() if sent.get(t) != v]
    if changed:
        problems.append(f"{len(changed)} samples with a value never sent (t, held, sent): "
                        f"{changed[:5]}")
    if problems:
        return f"{name}: " + "; ".join(problems)
    return None


def body(args):
    vm = need_tool("victoria-metrics", ["/usr/bin/victoria-metrics"])
    seed = int(os.environ.get("GPUMON_CRASH_SEED", random.SystemRandom().randrange(1 << 30)))
    rng = random.Random(seed)
    print(f"seed {seed} (GPUMON_CRASH_SEED={seed} replays the kill schedule)")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpumon-crash-") as tmp:
        sim, sim_port = start_on_free_port(
            lambda p: [args.gpumon, "simulate", "--nodes", "1", "--interval", "1s", "--listen",
                       f"127.0.0.1:{p}"], "/healthz", "gpumon simulate")
        vm_proc = server = sender = None
        try:
            vm_proc, vm_port = start_on_free_port(
                lambda p: [vm, f"-httpListenAddr=127.0.0.1:{p}", f"-storageDataPath={tmp}/vm",
                           "-search.disableCache", "-search.latencyOffset=0s",
                           "-loggerLevel=ERROR"], "/health", "victoria-metrics")
            vm_base = f"http://127.0.0.1:{vm_port}"
            config = write_files(tmp, sim_port, vm_port)
            data = os.path.join(tmp, "data")
            port = free_port()

            def argv():
                return [args.gpumon, "server", "--listen", f"127.0.0.1:{port}", "--data", data,
                        "--config", config, "--web.enable-remote-write-receiver"]

            base = f"http://127.0.0.1:{port}"
            server = Process(argv(), name="gpumon server")
            server.wait_http(base + "/-/healthy")
            run_id = f"r{seed}"
            t0_ms = int(time.time() * 1000)
            sender = Sender(lambda: port, run_id, t0_ms)
            sender.start()
            kills = startup_kills = 0
            restart_s = []
            during_startup = False
            while kills < KILLS:
                time.sleep(rng.uniform(0.0, 0.3) if during_startup else rng.uniform(0.3, 1.5))
                check(server.running(), f"gpumon server died on its own\n{server.describe()}")
                server.proc.kill()
                server.proc.wait(timeout=10)
                kills += 1
                startup_kills += during_startup
                t_restart = time.monotonic()
                server = Process(argv(), name="gpumon server")
                # Some kills land while it starts (WAL replay, queue recovery).
                during_startup = rng.random() < STARTUP_KILL_SHARE
                if not during_startup:
                    server.wait_http(base + "/-/healthy", timeout=30)
                    restart_s.append(time.monotonic() - t_restart)
            server.wait_http(base + "/-/healthy", timeout=30)
            # Let the sender get a few batches through the last server.
            seen = sender.batches
            wait_until(lambda: sender.batches >= seen + 5, 10, what="the sender to go on")
            sender.stop()
            acked = dict(sender.acked)
            sent = {t: v for k in range(sender.batches) for t, v in sender.batch(k)}
            crash_s = time.monotonic() - started
            print(f"{kills} kills ({startup_kills} during start-up) in {crash_s:.0f} s; restart to "
                  f"serving {min(restart_s):.2f}-{max(restart_s):.2f} s; {sender.batches} "
                  f"batches, {len(acked)} samples acknowledged, {sender.failed_attempts} failed "
                  f"attempts retried, {len(sender.rejected)} batches refused "
                  f"{[(s, b.decode('utf-8', 'replace')) for _, s, b in sender.rejected[:2]]}")
            check(len(acked) >= 20 * SAMPLES_PER_REQUEST,
                  f"only {len(acked)} samples acknowledged: the run proves little")
            check(not sender.rejected or all(s == 400 for _, s, _ in sender.rejected),
                  f"batches refused with statuses other than 400: {sender.rejected[:3]}")

            selector = f'crash_probe{{run="{run_id}"}}'
            last_t = max(sent)
            window = (last_t - t0_ms) // 1000 + 10
            at = last_t / 1000 + 1
            problem = compare("gpumon", acked, sent, raw_series(base, selector, at, window),
                              allow_duplicates=False)
            check(problem is None, problem)
            print(f"gpumon: all {len(acked)} acknowledged samples present, values exact")

            # Everything gpumon committed is queued for VictoriaMetrics.
            last = [None]

            def vm_holds_all():
                last[0] = compare("victoria-metrics", acked, sent, vm_export(vm_base, selector),
                                  allow_duplicates=True)
                return last[0] is None

            try:
                wait_until(vm_holds_all, 40, interval=1.0,
                           what="VictoriaMetrics to hold every acknowledged sample")
            except TestFailure:
                raise TestFailure(f"after the queue drained: {last[0]}") from None
            in_vm = vm_export(vm_base, selector)
            print(f"victoria-metrics: all {len(acked)} acknowledged samples present, values exact "
                  f"({len(in_vm) - len(set(t for t, _ in in_vm))} duplicates from resends)")

            # The rest of the pipeline came back too.
            for expr in ('up{job="gpu"} == 1', "crash:gpu_temperature_celsius:sum"):
                wait_until(lambda: json.loads(http_get(
                    base + "/api/v1/query?query=" + urllib.parse.quote(expr)).text)["data"][
                        "result"], 15, what=f"{expr} after the last restart")
            server.proc.send_signal(signal.SIGTERM)
            rc = server.proc.wait(timeout=30)
            check(rc == 0, f"gpumon exited with {rc} after SIGTERM\n{server.describe()}")
            print(f"total {time.monotonic() - started:.0f} s")
        finally:
            if sender and sender.is_alive():
                sender.stopping.set()
            if server:
                server.stop()
            if vm_proc:
                vm_proc.stop()
            sim.stop()


if __name__ == "__main__":
    run_test(body)
