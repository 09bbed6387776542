#!/usr/bin/env python3
"""A real Prometheus scrapes a simulated fleet: can `gpumon simulate` sustain
--nodes targets (default 1,000 nodes x 8 GPUs) scraped every 15 s?

Starts `gpumon simulate --nodes N --gpus 8 --interval 15s` and the Debian
`prometheus` binary, both on loopback only, Prometheus with a private config
and storage directory. Every node is its own scrape target: one static target
group per node, all at the simulator's address, with the group's labels
setting __metrics_path__ to /node/<i>/metrics and a distinct instance label
(Prometheus tells targets apart by their labels and scrape URL, so one
address serves them all). Prometheus negotiates OpenMetrics with gzip, as in
production.

After a warm-up of two scrape intervals the steady-state window begins; over
it the script measures CPU (% of one core, from /proc/PID/stat) and RSS
(sampled VmRSS, and VmHWM) of both processes, then asks Prometheus' API how
the scrapes went: targets up, whether every target was up on every scrape of
the window (min_over_time / count_over_time of up), samples per scrape,
scrape durations, and how many GPU series it holds.

usage: fleet_scrape.py PATH/TO/gpumon [--nodes 1000] [--duration 180]
                       [--prometheus /usr/bin/prometheus] [--json FILE]
Prints a markdown table; stops both processes on exit.
"""

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
import urllib.parse

# Keep the source tree free of __pycache__ when importing bench_util.
sys.dont_write_bytecode = True

from bench_util import (  # noqa: E402
    Child, free_port, http_get, machine_description, markdown_table, memory_kib,
    stat_cpu_seconds)

SCRAPE_INTERVAL_S = 15
JOB = "gpumon_sim"


def write_config(path, sim_port, prom_port, nodes):
    """One target per simulated node; prom_port, when given, adds a job
    scraping the server itself (for its ingestion rate and head series)."""
    lines = ["global:", f"  scrape_interval: {SCRAPE_INTERVAL_S}s", "  scrape_timeout: 10s",
             f"  evaluation_interval: {SCRAPE_INTERVAL_S}s", "scrape_configs:"]
    if prom_port:
        lines += ["  - job_name: prometheus", "    static_configs:",
                  f"      - targets: ['127.0.0.1:{prom_port}']"]
    lines += [f"  - job_name: {JOB}", "    static_configs:"]
    for i in range(nodes):
        lines += [f"      - targets: ['127.0.0.1:{sim_port}']",
                  f"        labels: {{__metrics_path__: '/node/{i}/metrics', "
                  f"instance: 'sim-node-{i:04d}'}}"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def query(base, promql, at=None):
    params = {"query": promql}
    if at is not None:
        params["time"] = f"{at:.3f}"
    url = f"{base}/api/v1/query?{urllib.parse.urlencode(params)}"
    status, body = http_get(url, timeout=60)
    doc = json.loads(body)
    if status != 200 or doc.get("status") != "success":
        raise RuntimeError(f"query {promql!r} failed: HTTP {status} {body[:300]!r}")
    return doc["data"]["result"]


def scalar(base, promql, at=None):
    """The single value of an aggregating query, or NaN when it is empty."""
    result = query(base, promql, at)
    return float(result[0]["value"][1]) if result else math.nan


def wait_for_targets(base, want, timeout=60.0):
    """Number of distinct active targets once it reaches `want` (or at the
    timeout): proves the per-target __metrics_path__ kept them apart."""
    deadline = time.monotonic() + timeout
    urls = set()
    while time.monotonic() < deadline:
        status, body = http_get(f"{base}/api/v1/targets?state=active", timeout=30)
        if status == 200:
            urls = {t["scrapeUrl"] for t in json.loads(body)["data"]["activeTargets"]
                    if t["labels"].get("job") == JOB}
            if len(urls) >= want:
                break
        time.sleep(1)
    return len(urls)


class Usage:
    """CPU and RSS of one process over the steady-state window."""

    def __init__(self, name, pid):
        self.name, self.pid = name, pid
        self.rss_kib = []
        self.cpu0 = self.t0 = None
        self.cpu1 = self.t1 = None

    def begin(self):
        self.t0, self.cpu0 = time.monotonic(), stat_cpu_seconds(self.pid)

    def sample(self):
        self.rss_kib.append(memory_kib(self.pid)["VmRSS"])

    def end(self):
        self.t1, self.cpu1 = time.monotonic(), stat_cpu_seconds(self.pid)
        self.hwm_kib = memory_kib(self.pid)["VmHWM"]

    def report(self):
        return {"cpu_percent_of_one_core": 100 * (self.cpu1 - self.cpu0) / (self.t1 - self.t0),
                "rss_mean_mib": sum(self.rss_kib) / len(self.rss_kib) / 1024,
                "rss_max_mib": max(self.rss_kib) / 1024, "vmhwm_mib": self.hwm_kib / 1024}


def run(args):
    report = {"machine": machine_description(), "nodes": args.nodes, "gpus_per_node": 8,
              "duration_s": args.duration}
    with tempfile.TemporaryDirectory(prefix="gpumon-fleet-bench-") as tmp:
        sim_port, prom_port = free_port(), free_port()
        sim_argv = [args.gpumon, "simulate", "--nodes", args.nodes, "--gpus", 8, "--interval",
                    f"{SCRAPE_INTERVAL_S}s", "--listen", f"127.0.0.1:{sim_port}"]
        report["simulate_command"] = " ".join(str(a) for a in sim_argv[1:])
        t = time.monotonic()
        with Child(sim_argv, name="gpumon simulate") as sim:
            sim.wait_http(f"http://127.0.0.1:{sim_port}/node/{args.nodes - 1}/metrics",
                          timeout=300)
            report["simulate_startup_s"] = time.monotonic() - t
            report["simulate_rss_after_startup_mib"] = memory_kib(sim.pid)["VmRSS"] / 1024
            print(f"simulator up in {report['simulate_startup_s']:.1f} s", file=sys.stderr)

            config = os.path.join(tmp, "prometheus.yml")
            write_config(config, sim_port, prom_port, args.nodes)
            prom_base = f"http://127.0.0.1:{prom_port}"
            prom_argv = [args.prometheus, f"--config.file={config}",
                         f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                         f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"]
            with Child(prom_argv, name="prometheus") as prom:
                prom.wait_http(prom_base + "/-/ready", timeout=120)
                targets = wait_for_targets(prom_base, args.nodes)
                if targets != args.nodes:
                    raise RuntimeError(f"Prometheus has {targets} targets, want {args.nodes}")
                warmup = 2 * SCRAPE_INTERVAL_S
                print(f"warm-up {warmup} s, then {args.duration - warmup} s steady state",
                      file=sys.stderr)
                time.sleep(warmup)
                usage = [Usage("gpumon simulate", sim.pid), Usage("prometheus", prom.pid)]
                for u in usage:
                    u.begin()
                window_start = time.monotonic()
                end = window_start + args.duration - warmup
                while time.monotonic() < end:
                    for u in usage:
                        u.sample()
                    time.sleep(min(5.0, max(0.0, end - time.monotonic())))
                for u in usage:
                    u.end()
                if not sim.running() or not prom.running():
                    raise RuntimeError("a process exited during the run:\n"
                                       f"{sim.log_tail()}\n{prom.log_tail()}")
                # Whole scrape intervals inside the window, as a range selector.
                window = int(time.monotonic() - window_start) // SCRAPE_INTERVAL_S
                window_s = window * SCRAPE_INTERVAL_S
                rng = f"[{window_s}s]"
                job = f'{{job="{JOB}"}}'
                q = {
                    "targets": f"count(up{job})",
                    "targets_up_now": f"count(up{job} == 1)",
                    "targets_never_down": f"count(min_over_time(up{job}{rng}) == 1)",
                    "scrapes_in_window": f"sum(count_over_time(up{job}{rng}))",
                    "successful_scrapes_in_window": f"sum(sum_over_time(up{job}{rng}))",
                    "min_scrapes_per_target": f"min(count_over_time(up{job}{rng}))",
                    "samples_per_scrape_sum": f"sum(scrape_samples_scraped{job})",
                    "samples_per_target": f"avg(scrape_samples_scraped{job})",
                    "scrape_duration_avg_s":
                        f"avg(avg_over_time(scrape_duration_seconds{job}{rng}))",
                    "scrape_duration_max_s":
                        f"max(max_over_time(scrape_duration_seconds{job}{rng}))",
                    "gpus": "count(gpu_temperature_celsius)",
                    "gpu_series": 'count({__name__=~"gpu_.+"})',
                    "head_series": "prometheus_tsdb_head_series",
                    "ingested_samples_per_s": "rate(prometheus_tsdb_head_samples_appended_total"
                                              f"{rng})",
                }
                # One evaluation time for all, so the counts agree.
                at = time.time()
                results = {k: scalar(prom_base, v, at) for k, v in q.items()}
                report["queries"] = q
                report["results"] = results
                report["window_s"] = window_s
                report["expected_scrapes_per_target"] = window_s / SCRAPE_INTERVAL_S
                report["usage"] = {u.name: u.report() for u in usage}
    return report


def summarize(report):
    r = report["results"]
    u = report["usage"]
    m = report["machine"]
    # Up on every scrape: no target ever reported up == 0, and none missed a
    # scrape (a window of k intervals holds k samples per target, k - 1 when
    # scrape times jitter across its edge).
    expected = report["expected_scrapes_per_target"]
    all_up = (r["targets_never_down"] == report["nodes"]
              and r["min_scrapes_per_target"] >= expected - 1)
    lines = [f"Machine: {m['nproc']} CPUs, {m['cpu_model']}, {m['memory_gib']} GiB; "
             f"load average at start {m['load_average'][0]:.2f}", "",
             f"`gpumon {report['simulate_command']}`, scraped every {SCRAPE_INTERVAL_S} s by "
             f"Prometheus; steady-state window {report['window_s']} s "
             f"(after {2 * SCRAPE_INTERVAL_S} s warm-up)", ""]
    failed = r["scrapes_in_window"] - r["successful_scrapes_in_window"]
    rows = [
        ["simulator start-up (all nodes discovered)", f"{report['simulate_startup_s']:.1f} s"],
        ["targets / up at the end", f"{r['targets']:.0f} / {r['targets_up_now']:.0f}"],
        ["targets up on every scrape of the window", f"{r['targets_never_down']:.0f}"],
        ["scrapes in the window (expected ≈ targets × window / 15 s)",
         f"{r['scrapes_in_window']:.0f} (≈ {report['nodes'] * expected:.0f})"],
        ["failed scrapes in the window", f"{failed:.0f}"],
        ["fewest scrapes of one target in the window", f"{r['min_scrapes_per_target']:.0f} "
                                                       f"(window / 15 s = {expected:.0f})"],
        ["GPUs / GPU series in Prometheus", f"{r['gpus']:.0f} / {r['gpu_series']:.0f}"],
        ["samples per target scrape", f"{r['samples_per_target']:.0f}"],
        ["Prometheus head series (all jobs)", f"{r['head_series']:.0f}"],
        ["samples ingested per second (all jobs)", f"{r['ingested_samples_per_s']:.0f}"],
        ["scrape duration, mean / max", f"{1000 * r['scrape_duration_avg_s']:.1f} ms / "
                                        f"{1000 * r['scrape_duration_max_s']:.1f} ms"],
    ]
    for name in ("gpumon simulate", "prometheus"):
        x = u[name]
        rows.append([f"{name}: CPU", f"{x['cpu_percent_of_one_core']:.1f}% of one core"])
        rows.append([f"{name}: RSS mean / max sampled / VmHWM",
                     f"{x['rss_mean_mib']:.0f} / {x['rss_max_mib']:.0f} / "
                     f"{x['vmhwm_mib']:.0f} MiB"])
    lines.append(markdown_table(["measure", "value"], rows))
    lines.append("")
    lines.append(f"- All {report['nodes']} targets up on every scrape: "
                 f"{'yes' if all_up else 'NO'}")
    report["all_up_every_scrape"] = all_up
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gpumon", help="path to the gpumon binary")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--duration", type=int, default=180,
                        help="seconds from Prometheus start to the end (default 180)")
    parser.add_argument("--prometheus", default=shutil.which("prometheus") or
                        "/usr/bin/prometheus")
    parser.add_argument("--json", help="write all measurements to this file")
    args = parser.parse_args()
    if args.duration < 4 * SCRAPE_INTERVAL_S:
        parser.error(f"--duration must be at least {4 * SCRAPE_INTERVAL_S} s")
    if not os.access(args.prometheus, os.X_OK):
        parser.error(f"prometheus not found at {args.prometheus}")
    report = run(args)
    print(summarize(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
