#!/usr/bin/env python3
"""`gpumon server` remote-writes every committed sample to real receivers.

Part 1: `gpumon simulate --nodes 2` is scraped every second by `gpumon
server`, which remote-writes to a real Prometheus (remote-write receiver
enabled) and a real VictoriaMetrics at once. At a fixed past time, both
receivers must hold exactly the series gpumon holds (plus the external
labels) with the same raw samples over a window, and the same count and sum
of gpu_temperature_celsius.

Part 2: the receiver is down (its port reserved, not listening) while a
server scrapes; the server is restarted, still with the receiver down; then
Prometheus starts on that port. Every sample gpumon holds for the whole
period, including those committed before the restart, must arrive: the disk
queue loses nothing. gpumon_remote_storage_samples_pending and
gpumon_remote_storage_samples_total on /metrics must move accordingly.
"""

import json
import math
import os
import socket
import tempfile
import time
import urllib.parse

from harness import (Process, TestFailure, check, http_get, need_tool, parse_exposition, run_test,
                     start_on_free_port, wait_until)

NODES = 2
GPUS = 8
EXTERNAL = {"monitor": "gpumon-rw-test"}
WINDOW_S = 15  # raw-sample comparison window of part 1


def query(base, expr, at=None, extra=""):
    url = base + "/api/v1/query?query=" + urllib.parse.quote(expr) + extra
    if at is not None:
        url += f"&time={at / 1000:.3f}"
    r = http_get(url, timeout=30.0)
    check(r.status == 200, f"{base}: query {expr!r} answered {r.status}: {r.body[:300]!r}")
    body = json.loads(r.text)
    check(body["status"] == "success", f"{base}: query {expr!r}: {body}")
    return body["data"]["result"]


def key(metric):
    return tuple(sorted(metric.items()))


def raw_samples(base, selector, at_ms, window_s, extra=""):
    """{labels: [(t_ms, value)]} of `selector[window]` at at_ms, restricted
    to (at - window, at] (Prometheus 2.x includes the left edge, 3.x and
    VictoriaMetrics do not). NaN values are dropped: they are stale
    markers, which VictoriaMetrics returns from range selectors and the
    Prometheus API leaves out."""
    out = {}
    lo = at_ms - window_s * 1000
    for s in query(base, f"{selector}[{window_s}s]", at_ms, extra):
        pts = [(round(float(t) * 1000), float(v)) for t, v in s["values"]]
        pts = [p for p in pts if p[0] > lo and not math.isnan(p[1])]
        if pts:
            out[key(s["metric"])] = pts
    return out


def with_external(samples):
    return {tuple(sorted(dict(k, **EXTERNAL).items())): v for k, v in samples.items()}


def diff_samples(want, got, rel_tol):
    """A description of how got differs from want, or None when equal."""
    problems = []
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    if missing:
        problems.append(f"{len(missing)} series missing, e.g. {dict(missing[0])}")
    if extra:
        problems.append(f"{len(extra)} unexpected series, e.g. {dict(extra[0])}")
    bad = 0
    for k, pts in want.items():
        other = got.get(k)
        if other is None:
            continue
        same = len(pts) == len(other) and all(
            a[0] == b[0] and (a[1] == b[1] or math.isclose(a[1], b[1], rel_tol=rel_tol))
            for a, b in zip(pts, other))
        if not same:
            if bad == 0:
                problems.append(f"samples differ for {dict(k)}: want {pts} got {other}")
            bad += 1
    if bad:
        problems.append(f"{bad} series with different samples")
    return "; ".join(problems) or None


def remote_metrics(base):
    """{remote_name: {metric: value}} from the server's own /metrics."""
    r = http_get(base + "/metrics")
    check(r.status == 200, f"{base}/metrics answered {r.status}")
    samples, _ = parse_exposition(r.text)
    out = {}
    for s in samples:
        if s.name.startswith("gpumon_remote_storage_") and "remote_name" in s.labels:
            out.setdefault(s.labels["remote_name"], {})[s.name] = s.value
    return out


def pending(stats):
    return stats.get("gpumon_remote_storage_samples_pending")


def write_config(path, sim_port, endpoints):
    groups = "".join(f"      - targets: ['127.0.0.1:{sim_port}']\n"
                     f"        labels: {{__metrics_path__: /node/{i}/metrics}}\n"
                     for i in range(NODES))
    remote = "".join(f"  - url: {url}\n    name: {name}\n"
                     "    queue_config: {batch_send_deadline: 500ms, min_backoff: 50ms, "
                     "max_backoff: 500ms}\n" for name, url in endpoints)
    ext = ", ".join(f"{k}: {v}" for k, v in EXTERNAL.items())
    with open(path, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n"
                f"  external_labels: {{{ext}}}\n"
                "remote_write:\n" + remote + "scrape_configs:\n  - job_name: gpu\n"
                "    static_configs:\n" + groups +
                "    relabel_configs:\n      - source_labels: [__metrics_path__]\n"
                "        regex: '/node/(\\d+)/metrics'\n        target_label: instance\n"
                "        replacement: node$1\n")


def start_server(gpumon, config, data):
    return start_on_free_port(
        lambda p: [gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data", data, "--config",
                   config], "/-/healthy", "gpumon server")


def prometheus_argv(prom, tmp, port):
    cfg = os.path.join(tmp, "prom-receiver.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 15s\n")
    return [prom, f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/prom-data-{port}",
            f"--web.listen-address=127.0.0.1:{port}", "--web.enable-remote-write-receiver"]


def now_ms():
    return int(time.time() * 1000)


def both_receivers(args, tmp, prom, vm, sim_port):
    prom_proc, prom_port = start_on_free_port(lambda p: prometheus_argv(prom, tmp, p), "/-/ready",
                                              "prometheus")
    vm_proc = server = None
    try:
        vm_proc, vm_port = start_on_free_port(
            lambda p: [vm, f"-httpListenAddr=127.0.0.1:{p}", f"-storageDataPath={tmp}/vm-data",
                       "-search.disableCache", "-search.latencyOffset=0s"], "/health",
            "victoria-metrics")
        prom_base = f"http://127.0.0.1:{prom_port}"
        vm_base = f"http://127.0.0.1:{vm_port}"
        config = os.path.join(tmp, "both.yml")
        write_config(config, sim_port, [("prom", f"{prom_base}/api/v1/write"),
                                        ("vm", f"{vm_base}/api/v1/write")])
        server, port = start_server(args.gpumon, config, os.path.join(tmp, "data-both"))
        base = f"http://127.0.0.1:{port}"
        started = now_ms()
        wait_until(lambda: len(query(base, "gpu_temperature_celsius")) == NODES * GPUS, 20,
                   what=f"{NODES * GPUS} gpu_temperature_celsius series in gpumon")
        # Let a full comparison window of data build up, then pick a time in
        # the past that every queue has sent beyond.
        time.sleep(max(0.0, (started + (WINDOW_S + 3) * 1000 - now_ms()) / 1000))
        at = now_ms() - 2000
        wait_until(lambda: all(
            m.get("gpumon_remote_storage_queue_highest_sent_timestamp_seconds", 0) * 1000 >= at
            for m in remote_metrics(base).values()) and len(remote_metrics(base)) == 2, 20,
                   what="both queues to send past the comparison time")

        mine = raw_samples(base, '{job=~"gpu|gpumon"}', at, WINDOW_S)
        temps = [k for k in mine if dict(k).get("__name__") == "gpu_temperature_celsius"]
        check(len(temps) == NODES * GPUS, f"gpumon holds {len(temps)} temperature series")
        check(all("monitor" not in dict(k) for k in mine),
              "external labels must not be stored locally")
        want = with_external(mine)
        n_samples = sum(len(v) for v in want.values())
        check(n_samples >= len(want) * (WINDOW_S - 3), f"only {n_samples} samples in gpumon")

        for name, rbase, extra, tol in (("prometheus", prom_base, "", 0.0),
                                        ("victoria-metrics", vm_base, "&nocache=1", 1e-12)):
            last = [None]

            def same():
                got = raw_samples(rbase, '{job=~"gpu|gpumon"}', at, WINDOW_S, extra)
                last[0] = diff_samples(want, got, tol)
                return last[0] is None

            try:
                wait_until(same, 30, interval=1.0, what=f"{name} to hold gpumon's samples")
            except TestFailure:
                raise TestFailure(f"{name} differs from gpumon over {WINDOW_S}s at {at}: "
                                  f"{last[0]}") from None
            for expr in ("count(gpu_temperature_celsius)", "sum(gpu_temperature_celsius)",
                         'count({job="gpu"})'):
                a = query(base, expr, at)
                b = query(rbase, expr, at, extra)
                check(len(a) == 1 and len(b) == 1 and
                      math.isclose(float(a[0]["value"][1]), float(b[0]["value"][1]),
                                   rel_tol=1e-12), f"{expr} at {at}: gpumon {a}, {name} {b}")
            check(float(query(rbase, "count(gpu_temperature_celsius)", at, extra)[0]["value"][1])
                  == NODES * GPUS, f"{name}: count(gpu_temperature_celsius)")
            print(f"{name}: {len(want)} series, {n_samples} samples identical to gpumon's")

        stats = remote_metrics(base)
        for name in ("prom", "vm"):
            check(stats[name].get("gpumon_remote_storage_samples_total", 0) >= n_samples,
                  f"queue {name}: samples_total {stats[name]} below the {n_samples} compared")
            check(stats[name].get("gpumon_remote_storage_samples_failed_total", 0) == 0 and
                  stats[name].get("gpumon_remote_storage_samples_dropped_total", 0) == 0,
                  f"queue {name} failed or dropped samples: {stats[name]}")
        check(server.running(), "gpumon server died")
    finally:
        if server:
            server.stop()
        if vm_proc:
            vm_proc.stop()
        prom_proc.stop()


def receiver_down(args, tmp, prom, sim_port):
    # Hold the receiver's port (bound, not listening: connections are
    # refused) so nothing else takes it before Prometheus starts there.
    hold = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    hold.bind(("127.0.0.1", 0))
    prom_port = hold.getsockname()[1]
    prom_base = f"http://127.0.0.1:{prom_port}"
    config = os.path.join(tmp, "down.yml")
    write_config(config, sim_port, [("prom", f"{prom_base}/api/v1/write")])
    data = os.path.join(tmp, "data-down")
    server = prom_proc = None
    try:
        server, port = start_server(args.gpumon, config, data)
        base = f"http://127.0.0.1:{port}"
        first = now_ms()
        wait_until(lambda: len(query(base, "gpu_temperature_celsius")) == NODES * GPUS, 20,
                   what="gpumon to scrape the simulator")
        time.sleep(4)
        p1 = remote_metrics(base).get("prom", {})
        time.sleep(2)
        p2 = remote_metrics(base).get("prom", {})
        check(p1.get("gpumon_remote_storage_samples_total") == 0 and
              p2.get("gpumon_remote_storage_samples_total") == 0,
              f"samples reported sent to a closed port: {p1} / {p2}")
        check(0 < p1.get("gpumon_remote_storage_samples_pending", 0) <
              p2.get("gpumon_remote_storage_samples_pending", 0),
              f"samples_pending must grow while the receiver is down: {p1} then {p2}")
        check(p2.get("gpumon_remote_storage_samples_retried_total", 0) > 0,
              f"sends to a closed port must be retried: {p2}")

        # Restart gpumon with the receiver still down.
        check(server.stop() == 0, f"gpumon server did not stop cleanly\n{server.describe()}")
        stopped = now_ms()
        server, port = start_server(args.gpumon, config, data)
        base = f"http://127.0.0.1:{port}"
        p3 = remote_metrics(base).get("prom", {})
        check(p3.get("gpumon_remote_storage_samples_pending", 0) >=
              p2.get("gpumon_remote_storage_samples_pending", 0),
              f"the backlog must survive the restart: pending {p2} before, {p3} after")
        wait_until(lambda: query(base, f'count(gpu_temperature_celsius) == {NODES * GPUS}'), 20,
                   what="the restarted server to scrape again")
        time.sleep(3)

        # The receiver comes up on the reserved port.
        hold.close()
        hold = None
        prom_proc = Process(prometheus_argv(prom, tmp, prom_port), name="prometheus")
        prom_proc.wait_http(prom_base + "/-/ready")
        up_at = now_ms()
        wait_until(lambda: remote_metrics(base)["prom"].get(
            "gpumon_remote_storage_queue_highest_sent_timestamp_seconds", 0) * 1000 >= up_at, 30,
                   what="the backlog to be sent")
        at = up_at
        window = (at - first) // 1000 + 2
        mine = raw_samples(base, '{job=~"gpu|gpumon"}', at, window)
        n_samples = sum(len(v) for v in mine.values())
        before = sum(1 for v in mine.values() for t, _ in v if t < stopped)
        check(before >= NODES * GPUS * 5, f"only {before} samples before the restart")
        want = with_external(mine)
        last = [None]

        def same():
            last[0] = diff_samples(want, raw_samples(prom_base, '{job=~"gpu|gpumon"}', at,
                                                     window), 0.0)
            return last[0] is None

        try:
            wait_until(same, 20, interval=1.0, what="prometheus to hold every sample")
        except TestFailure:
            raise TestFailure(f"samples lost or changed through the receiver outage "
                              f"(window {window}s at {at}): {last[0]}") from None
        counts = query(base, f'count_over_time(gpu_temperature_celsius[{window}s])', at)
        prom_counts = query(prom_base, f'count_over_time(gpu_temperature_celsius[{window}s])', at)
        check(sorted((key(s["metric"]), s["value"][1]) for s in counts) ==
              sorted((key({k: v for k, v in s["metric"].items() if k not in EXTERNAL}),
                      s["value"][1]) for s in prom_counts),
              f"count_over_time differs: gpumon {counts} prometheus {prom_counts}")
        print(f"receiver down: {len(want)} series, {n_samples} samples ({before} from before the "
              f"restart) all delivered; pending {pending(p1)} -> {pending(p2)} -> {pending(p3)} "
              "across the restart")
        stats = remote_metrics(base)["prom"]
        check(stats.get("gpumon_remote_storage_samples_total", 0) >= n_samples,
              f"samples_total {stats} below the {n_samples} samples delivered")
        wait_until(lambda: pending(remote_metrics(base)["prom"]) < pending(p2), 20,
                   what="samples_pending to fall below the backlog once the receiver is up")
    finally:
        if hold:
            hold.close()
        if server:
            server.stop()
        if prom_proc:
            prom_proc.stop()


def body(args):
    prom = need_tool("prometheus")
    vm = need_tool("victoria-metrics", ["/usr/bin/victoria-metrics"])
    with tempfile.TemporaryDirectory() as tmp:
        sim, sim_port = start_on_free_port(
            lambda port: [args.gpumon, "simulate", "--nodes", str(NODES), "--interval", "1s",
                          "--listen", f"127.0.0.1:{port}"], "/healthz", "gpumon simulate")
        try:
            both_receivers(args, tmp, prom, vm, sim_port)
            receiver_down(args, tmp, prom, sim_port)
        finally:
            sim.stop()


if __name__ == "__main__":
    run_test(body)
