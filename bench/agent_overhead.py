#!/usr/bin/env python3
"""The agent's own cost, measured on the real binary from the outside.

Starts `gpumon agent --simulate h200x8` (8 simulated H200s, every metric group
at its default interval) on a free loopback port and measures, from /proc:

  idle     CPU while nobody scrapes (collection only): ms per second, and so
           ms per collection cycle of the 1 s groups (slower groups amortized)
  scrapes  CPU per /metrics scrape, for text 0.0.4 and OpenMetrics, plain and
           gzip, in two regimes:
             cold    scrapes spaced --cold-interval apart, so (almost) each one
                     finds a new snapshot and renders it, as a Prometheus
                     scrape every 15 s always does
             cached  back-to-back keep-alive scrapes for --cached-seconds;
                     most find the rendering cached
           per-scrape CPU = (process CPU during the phase - idle rate x phase
           duration) / scrapes; the CPU of the agent's HTTP threads alone
           (every thread that was quiet while idle) is reported beside it
  memory   VmRSS and VmHWM (peak RSS) from /proc/PID/status, after start-up
           and at the end

A scrape is counted as cold when its body differs from the previous body of
the same format and encoding (every new snapshot changes the values).

usage: agent_overhead.py PATH/TO/gpumon [--json FILE] [--idle-seconds N] ...
Prints markdown tables; --json writes every number. Stops the agent on exit.
"""

import argparse
import http.client
import json
import sys
import time

from bench_util import (Child, CpuSample, cpu_delta, free_port, machine_description,
                        markdown_table, memory_kib)

ACCEPT_004 = "text/plain;version=0.0.4"
# Prometheus' own Accept header (2.42): prefers OpenMetrics.
ACCEPT_OPENMETRICS = ("application/openmetrics-text;version=1.0.0,"
                      "application/openmetrics-text;version=0.0.1;q=0.75,"
                      "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
FORMATS = [("text 0.0.4", ACCEPT_004, "text/plain"),
           ("OpenMetrics", ACCEPT_OPENMETRICS, "application/openmetrics-text")]
ENCODINGS = [("plain", "identity"), ("gzip", "gzip")]

SCRAPE_CPU_TARGET_MS = 2.0
RSS_TARGET_MB = 25.0
PROMETHEUS_INTERVAL_S = 15.0


class Scraper:
    """Keep-alive /metrics client that reconnects when the server closes."""

    def __init__(self, port):
        self.port = port
        self.conn = None
        self.last_body = {}

    def get(self, accept, encoding):
        headers = {"Accept": accept, "Accept-Encoding": encoding}
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                self.conn.request("GET", "/metrics", headers=headers)
                r = self.conn.getresponse()
                body = r.read()
                if r.status != 200:
                    raise RuntimeError(f"/metrics answered HTTP {r.status}")
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                return r.getheader("Content-Type", ""), r.getheader("Content-Encoding", ""), body
            except (http.client.HTTPException, ConnectionError, BrokenPipeError):
                self.close()
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def scrape(self, accept, encoding, expect_type):
        """One scrape; returns (bytes, cold?)."""
        ctype, cenc, body = self.get(accept, encoding)
        if not ctype.startswith(expect_type):
            raise RuntimeError(f"asked for {expect_type}, got Content-Type {ctype!r}")
        if (encoding == "gzip") != (cenc == "gzip"):
            raise RuntimeError(f"asked for encoding {encoding}, got {cenc!r}")
        key = (accept, encoding)
        cold = self.last_body.get(key) != body
        self.last_body[key] = body
        return len(body), cold

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def measure_idle(pid, seconds):
    before = CpuSample(pid)
    time.sleep(seconds)
    after = CpuSample(pid)
    wall, cpu = cpu_delta(before, after)
    busy = set()
    if before.threads is not None and after.threads is not None:
        busy = {t for t, ns in after.threads.items() if ns > before.threads.get(t, 0)}
    return {"seconds": wall, "cpu_seconds": cpu, "cpu_ms_per_s": 1000 * cpu / wall,
            "stat_cpu_seconds": after.stat_seconds - before.stat_seconds,
            "busy_threads": sorted(busy)}


def scrape_phase(pid, scraper, fmt, encoding, mode, idle_rate, collector_threads, args):
    """Runs one phase; returns its measurements."""
    _, accept, expect = fmt
    _, enc = encoding
    scraper.close()
    scraper.scrape(accept, enc, expect)  # connect, and set the body to compare with
    n = cold = total_bytes = 0
    before = CpuSample(pid)
    if mode == "cached":
        end = before.time + args.cached_seconds
        while time.monotonic() < end:
            size, is_cold = scraper.scrape(accept, enc, expect)
            n += 1
            cold += is_cold
            total_bytes += size
    else:
        due = before.time
        for _ in range(args.cold_scrapes):
            due += args.cold_interval
            time.sleep(max(0.0, due - time.monotonic()))
            size, is_cold = scraper.scrape(accept, enc, expect)
            n += 1
            cold += is_cold
            total_bytes += size
        # End the phase a full interval after the last scrape, as the idle
        # subtraction assumes whole intervals.
        time.sleep(max(0.0, due + args.cold_interval - time.monotonic()))
    after = CpuSample(pid)
    wall, cpu = cpu_delta(before, after)
    _, http_cpu = cpu_delta(before, after, exclude_tids=collector_threads)
    return {
        "format": fmt[0], "encoding": encoding[0], "mode": mode, "scrapes": n,
        "cold_scrapes": cold, "seconds": wall, "bytes_per_scrape": total_bytes / n,
        "cpu_seconds": cpu,
        "cpu_ms_per_scrape": 1000 * (cpu - idle_rate * wall) / n,
        "http_threads_cpu_ms_per_scrape": 1000 * http_cpu / n,
        "stat_cpu_seconds": after.stat_seconds - before.stat_seconds,
    }


def run(args):
    port = free_port()
    argv = [args.gpumon, "agent", "--simulate", "h200x8", "--listen", f"127.0.0.1:{port}"]
    if args.names:
        argv += ["--names", args.names]
    report = {"machine": machine_description(), "command": " ".join(argv[1:]), "phases": []}
    with Child(argv, name="gpumon agent") as agent:
        agent.wait_http(f"http://127.0.0.1:{port}/metrics", timeout=60)
        time.sleep(args.settle_seconds)
        report["memory_after_start_kib"] = memory_kib(agent.pid)

        print(f"idle {args.idle_seconds:.0f} s ...", file=sys.stderr)
        idle = [measure_idle(agent.pid, args.idle_seconds)]
        idle_rate = idle[0]["cpu_seconds"] / idle[0]["seconds"]
        collector_threads = set(idle[0]["busy_threads"])

        scraper = Scraper(port)
        try:
            for mode in ("cold", "cached"):
                for fmt in FORMATS:
                    for enc in ENCODINGS:
                        print(f"{mode} scrapes, {fmt[0]}, {enc[0]} ...", file=sys.stderr)
                        report["phases"].append(scrape_phase(agent.pid, scraper, fmt, enc, mode,
                                                             idle_rate, collector_threads, args))
        finally:
            scraper.close()

        # A second idle window: the rate subtracted above should not drift.
        print(f"idle {args.idle_seconds:.0f} s ...", file=sys.stderr)
        idle.append(measure_idle(agent.pid, args.idle_seconds))
        report["idle"] = idle
        report["memory_end_kib"] = memory_kib(agent.pid)
        if not agent.running():
            raise RuntimeError(f"the agent exited during the run:\n{agent.log_tail()}")
    return report


def summarize(report):
    idle = report["idle"]
    rate = [i["cpu_ms_per_s"] for i in idle]
    lines = [f"Machine: {report['machine']['nproc']} CPUs, {report['machine']['cpu_model']}, "
             f"{report['machine']['memory_gib']} GiB; load average at start "
             f"{report['machine']['load_average'][0]:.2f}", "",
             f"`gpumon {report['command']}`", ""]
    lines.append(markdown_table(
        ["collection (no scrapes)", "first window", "second window"],
        [["CPU, ms per second (= ms per 1 s collection cycle)", f"{rate[0]:.2f}",
          f"{rate[1]:.2f}"],
         ["CPU, % of one core", f"{rate[0] / 10:.2f}", f"{rate[1] / 10:.2f}"]]))
    lines.append("")
    rows = []
    for p in report["phases"]:
        rows.append([p["mode"], p["format"], p["encoding"], p["scrapes"],
                     f"{p['cold_scrapes']}", f"{p['bytes_per_scrape'] / 1024:.1f}",
                     f"{p['cpu_ms_per_scrape']:.3f}", f"{p['http_threads_cpu_ms_per_scrape']:.3f}"])
    lines.append(markdown_table(
        ["scrapes", "format", "encoding", "count", "cold", "KiB per scrape",
         "CPU ms per scrape (process − idle)", "CPU ms per scrape (HTTP threads)"], rows))
    lines.append("")
    start, end = report["memory_after_start_kib"], report["memory_end_kib"]
    lines.append(markdown_table(
        ["memory", "after start-up", "at the end"],
        [["VmRSS, MiB", f"{start['VmRSS'] / 1024:.1f}", f"{end['VmRSS'] / 1024:.1f}"],
         ["VmHWM (peak RSS), MiB", f"{start['VmHWM'] / 1024:.1f}", f"{end['VmHWM'] / 1024:.1f}"]]))
    lines.append("")
    cold = {(p["format"], p["encoding"]): p for p in report["phases"] if p["mode"] == "cold"}
    prom = cold[("OpenMetrics", "gzip")]
    worst = max(p["cpu_ms_per_scrape"] for p in cold.values())
    mean_idle = sum(rate) / len(rate)
    per_second = mean_idle + prom["cpu_ms_per_scrape"] / PROMETHEUS_INTERVAL_S
    peak_mib = end["VmHWM"] / 1024
    lines.append(
        f"- CPU per cold scrape, worst format/encoding: {worst:.3f} ms "
        f"(target < {SCRAPE_CPU_TARGET_MS} ms: {'met' if worst < SCRAPE_CPU_TARGET_MS else 'MISSED'})")
    lines.append(
        f"- Peak RSS: {peak_mib:.1f} MiB "
        f"(target < {RSS_TARGET_MB} MB: {'met' if peak_mib * 1.048576 < RSS_TARGET_MB else 'MISSED'})")
    lines.append(
        f"- With Prometheus scraping every {PROMETHEUS_INTERVAL_S:.0f} s (OpenMetrics, gzip): "
        f"{per_second:.2f} ms CPU per second = {per_second / 10:.2f}% of one core")
    report["summary"] = {"worst_cold_scrape_cpu_ms": worst, "peak_rss_mib": peak_mib,
                         "idle_cpu_ms_per_s": mean_idle,
                         "cpu_percent_at_15s_scrapes": per_second / 10}
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gpumon", help="path to the gpumon binary")
    parser.add_argument("--json", help="write all measurements to this file")
    parser.add_argument("--names", help="naming scheme passed to the agent (default: native)")
    parser.add_argument("--settle-seconds", type=float, default=5)
    parser.add_argument("--idle-seconds", type=float, default=30,
                        help="each idle window; 30 s runs every 30 s group once")
    parser.add_argument("--cold-scrapes", type=int, default=60)
    parser.add_argument("--cold-interval", type=float, default=0.5)
    parser.add_argument("--cached-seconds", type=float, default=10)
    args = parser.parse_args()
    report = run(args)
    print(summarize(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
