#!/usr/bin/env python3
"""The agent's own cost, measured on the real binary from the outside.

Starts `gpumon agent --simulate h200x8` (8 simulated H200s, every metric group
at its default interval) on a free loopback port and measures from /proc:

  idle       CPU while nobody scrapes (collection only), in ms per second,
             i.e. per cycle of the 1 s groups with the slower groups
             amortized; per thread, with wake-ups per second
  cold       CPU per /metrics scrape that finds a new snapshot and renders
             it, as every Prometheus scrape 15 s apart does: scrapes spaced
             --cold-interval apart, each on a new connection that the server
             closes after the response (so no keep-alive wait is counted);
             text 0.0.4 and OpenMetrics, plain and gzip
  cached     back-to-back keep-alive scrapes for --cached-seconds; most find
             the rendering of the current snapshot cached
  keep-alive CPU per second spent by the server while an idle keep-alive
             connection stays open after a scrape
  prometheus a real Prometheus (when installed) scrapes the agent every 15 s
             for --prometheus-seconds: CPU per scrape as deployed, and the
             agent's total CPU
  memory     VmRSS and VmHWM (peak RSS) from /proc/PID/status, after start-up
             and at the end

CPU per scrape is reported two ways: the CPU of the agent's HTTP threads
(every thread that stayed quiet while idle: the listener and the workers)
divided by the scrapes, and the whole process's CPU minus the idle rate times
the phase's duration, divided by the scrapes. A scrape counts as cold when its
body differs from the previous body of the same format and encoding (each new
snapshot changes the values).

usage: agent_overhead.py PATH/TO/gpumon [--json FILE] [--idle-seconds N] ...
Prints markdown tables; --json writes every number. Stops what it starts.
"""

import argparse
import http.client
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.parse

# Keep the source tree free of __pycache__ when importing bench_util.
sys.dont_write_bytecode = True

from bench_util import (  # noqa: E402
    Child, CpuSample, cpu_delta, free_port, http_get, machine_description, markdown_table,
    memory_kib, thread_wakeups)

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
PROMETHEUS_INTERVAL_S = 15


class Scraper:
    """A /metrics client: keep-alive, or a new connection per scrape."""

    def __init__(self, port, keep_alive):
        self.port = port
        self.keep_alive = keep_alive
        self.conn = None
        self.last_body = {}

    def _get(self, headers):
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                self.conn.request("GET", "/metrics", headers=headers)
                r = self.conn.getresponse()
                body = r.read()
                if r.status != 200:
                    raise RuntimeError(f"/metrics answered HTTP {r.status}")
                if not self.keep_alive or r.getheader("Connection", "").lower() == "close":
                    self.close()
                return r.getheader("Content-Type", ""), r.getheader("Content-Encoding", ""), body
            except (http.client.HTTPException, ConnectionError):
                # The server closed a kept-alive connection: retry once.
                self.close()
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def scrape(self, accept, encoding, expect_type):
        """One scrape; returns (bytes, cold?)."""
        headers = {"Accept": accept, "Accept-Encoding": encoding}
        if not self.keep_alive:
            headers["Connection"] = "close"
        ctype, cenc, body = self._get(headers)
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


class Meter:
    """CPU of a phase: whole process, and the HTTP threads alone."""

    def __init__(self, pid, idle_rate, collector_threads):
        self.pid, self.idle_rate, self.collector_threads = pid, idle_rate, collector_threads

    def start(self):
        self.before = CpuSample(self.pid)
        return self.before.time

    def stop(self, scrapes):
        after = CpuSample(self.pid)
        wall, cpu = cpu_delta(self.before, after)
        _, http_cpu = cpu_delta(self.before, after, exclude_tids=self.collector_threads)
        n = max(scrapes, 1)
        return {"seconds": wall, "scrapes": scrapes, "cpu_seconds": cpu,
                "http_threads_cpu_seconds": http_cpu,
                "stat_cpu_seconds": after.stat_seconds - self.before.stat_seconds,
                "cpu_ms_per_scrape": 1000 * (cpu - self.idle_rate * wall) / n,
                "http_threads_cpu_ms_per_scrape": 1000 * http_cpu / n}


def measure_idle(pid, seconds):
    before, wake0 = CpuSample(pid), thread_wakeups(pid)
    time.sleep(seconds)
    after, wake1 = CpuSample(pid), thread_wakeups(pid)
    wall, cpu = cpu_delta(before, after)
    threads = []
    if before.threads is not None and after.threads is not None:
        for tid in sorted(after.threads):
            threads.append({
                "tid": tid,
                "cpu_ms_per_s": (after.threads[tid] - before.threads.get(tid, 0)) / 1e6 / wall,
                "wakeups_per_s": (wake1.get(tid, 0) - wake0.get(tid, 0)) / wall})
    return {"seconds": wall, "cpu_seconds": cpu, "cpu_ms_per_s": 1000 * cpu / wall,
            "stat_cpu_seconds": after.stat_seconds - before.stat_seconds, "threads": threads}


def cold_phase(meter, port, fmt, enc, args):
    _, accept, expect = fmt
    scraper = Scraper(port, keep_alive=False)
    scraper.scrape(accept, enc[1], expect)  # the body to compare the first one with
    cold = total_bytes = 0
    due = meter.start()
    for _ in range(args.cold_scrapes):
        due += args.cold_interval
        time.sleep(max(0.0, due - time.monotonic()))
        size, is_cold = scraper.scrape(accept, enc[1], expect)
        cold += is_cold
        total_bytes += size
    # Whole intervals, as the idle subtraction assumes.
    time.sleep(max(0.0, due + args.cold_interval - time.monotonic()))
    result = meter.stop(args.cold_scrapes)
    result.update(mode="cold, new connection", format=fmt[0], encoding=enc[0],
                  cold_scrapes=cold, bytes_per_scrape=total_bytes / args.cold_scrapes)
    return result


def cached_phase(meter, port, fmt, enc, args):
    _, accept, expect = fmt
    scraper = Scraper(port, keep_alive=True)
    scraper.scrape(accept, enc[1], expect)
    n = cold = total_bytes = 0
    end = meter.start() + args.cached_seconds
    while time.monotonic() < end:
        size, is_cold = scraper.scrape(accept, enc[1], expect)
        n += 1
        cold += is_cold
        total_bytes += size
    result = meter.stop(n)
    scraper.close()
    result.update(mode="back-to-back, keep-alive", format=fmt[0], encoding=enc[0],
                  cold_scrapes=cold, bytes_per_scrape=total_bytes / n)
    return result


def keep_alive_phase(meter, port, rounds=3, hold=4.0):
    """HTTP-thread CPU per second while an idle keep-alive connection is open
    (held for less than the server's keep-alive timeout)."""
    per_s = []
    for _ in range(rounds):
        scraper = Scraper(port, keep_alive=True)
        scraper.scrape(ACCEPT_OPENMETRICS, "gzip", "application/openmetrics-text")
        meter.start()
        time.sleep(hold)
        r = meter.stop(1)
        scraper.close()
        per_s.append(1000 * r["http_threads_cpu_seconds"] / r["seconds"])
    return {"held_seconds": hold, "rounds": rounds,
            "http_threads_cpu_ms_per_s": sum(per_s) / len(per_s), "samples": per_s}


def prometheus_phase(meter, port, args, tmp):
    prometheus = args.prometheus or shutil.which("prometheus")
    if not prometheus or not os.access(prometheus, os.X_OK):
        print("prometheus not found: skipping the Prometheus phase", file=sys.stderr)
        return None
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w", encoding="utf-8") as f:
        f.write(f"""global:
  scrape_interval: {PROMETHEUS_INTERVAL_S}s
  scrape_timeout: 10s
scrape_configs:
  - job_name: agent
    static_configs:
      - targets: ['127.0.0.1:{port}']
""")
    prom_port = free_port()
    base = f"http://127.0.0.1:{prom_port}"
    argv = [prometheus, f"--config.file={config}",
            f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
            f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"]
    with Child(argv, name="prometheus") as prom:
        prom.wait_http(base + "/-/ready", timeout=120)
        # Start the window after the first scrape, in the steady state.
        deadline = time.monotonic() + 2 * PROMETHEUS_INTERVAL_S
        while time.monotonic() < deadline:
            status, body = http_get(f"{base}/api/v1/query?query=up", timeout=30)
            if status == 200 and json.loads(body)["data"]["result"]:
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"Prometheus did not scrape the agent:\n{prom.log_tail()}")
        meter.start()
        time.sleep(args.prometheus_seconds)
        result = meter.stop(1)
        time.sleep(2)  # let a scrape in flight at the end be recorded
        at = time.time()
        window = int(result["seconds"]) + 2

        def scalar(promql):
            url = f"{base}/api/v1/query?" + urllib.parse.urlencode(
                {"query": promql, "time": f"{at:.3f}"})
            status, body = http_get(url, timeout=30)
            result = json.loads(body)["data"]["result"] if status == 200 else []
            return float(result[0]["value"][1]) if result else float("nan")

        observed = scalar(f"sum(count_over_time(up[{window}s]))")
        up = scalar(f"sum(sum_over_time(up[{window}s]))")
        duration = scalar(f"avg(avg_over_time(scrape_duration_seconds[{window}s]))")
        samples = scalar("sum(scrape_samples_scraped)")
    # In steady state Prometheus scrapes once per interval, so the window
    # holds seconds / interval scrapes; the count Prometheus recorded (edges
    # of the window can add or drop one) is reported as a check.
    n = result["seconds"] / PROMETHEUS_INTERVAL_S
    result.update(
        mode=f"Prometheus every {PROMETHEUS_INTERVAL_S} s", scrapes=n,
        scrapes_recorded=observed, successful_scrapes=up, scrape_duration_avg_s=duration,
        samples_per_scrape=samples,
        cpu_ms_per_scrape=1000 * (result["cpu_seconds"] - meter.idle_rate * result["seconds"]) / n,
        http_threads_cpu_ms_per_scrape=1000 * result["http_threads_cpu_seconds"] / n,
        cpu_percent_of_one_core=100 * result["cpu_seconds"] / result["seconds"])
    return result


def run(args):
    port = free_port()
    argv = [args.gpumon, "agent", "--simulate", "h200x8", "--listen", f"127.0.0.1:{port}"]
    if args.names:
        argv += ["--names", args.names]
    report = {"machine": machine_description(), "command": " ".join(argv[1:]),
              "settings": vars(args), "phases": []}
    with Child(argv, name="gpumon agent") as agent, \
            tempfile.TemporaryDirectory(prefix="gpumon-agent-bench-") as tmp:
        agent.wait_http(f"http://127.0.0.1:{port}/metrics", timeout=60)
        time.sleep(args.settle_seconds)
        report["memory_after_start_kib"] = memory_kib(agent.pid)

        print(f"idle {args.idle_seconds:.0f} s ...", file=sys.stderr)
        idle = [measure_idle(agent.pid, args.idle_seconds)]
        idle_rate = idle[0]["cpu_seconds"] / idle[0]["seconds"]
        # The threads that ran with nobody scraping do the collection; all
        # others serve HTTP.
        collector_threads = {t["tid"] for t in idle[0]["threads"] if t["cpu_ms_per_s"] > 0}
        report["collector_threads"] = sorted(collector_threads)
        meter = Meter(agent.pid, idle_rate, collector_threads)

        for phase in (cold_phase, cached_phase):
            for fmt in FORMATS:
                for enc in ENCODINGS:
                    print(f"{phase.__name__}: {fmt[0]}, {enc[0]} ...", file=sys.stderr)
                    report["phases"].append(phase(meter, port, fmt, enc, args))
        print("idle keep-alive connection ...", file=sys.stderr)
        report["keep_alive"] = keep_alive_phase(meter, port)
        if args.prometheus_seconds > 0:
            print(f"Prometheus scraping for {args.prometheus_seconds} s ...", file=sys.stderr)
            report["prometheus"] = prometheus_phase(meter, port, args, tmp)

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
    m = report["machine"]
    lines = [f"Machine: {m['nproc']} CPUs, {m['cpu_model']}, {m['memory_gib']} GiB; "
             f"load average at start {m['load_average'][0]:.2f}", "",
             f"`gpumon {report['command']}`", ""]
    rows = [["whole process, ms per second (= per 1 s collection cycle)", f"{rate[0]:.2f}",
             f"{rate[1]:.2f}"],
            ["whole process, % of one core", f"{rate[0] / 10:.2f}", f"{rate[1] / 10:.2f}"]]
    for t in idle[0]["threads"]:
        if t["cpu_ms_per_s"] > 0:
            rows.append([f"thread {t['tid']}: ms per second, wake-ups per second",
                         f"{t['cpu_ms_per_s']:.2f}, {t['wakeups_per_s']:.0f}", ""])
    lines.append(markdown_table(["idle (collection only)", "first window", "last window"], rows))
    lines.append("")
    rows = []
    for p in report["phases"]:
        rows.append([p["mode"], p["format"], p["encoding"], p["scrapes"], p["cold_scrapes"],
                     f"{p['bytes_per_scrape'] / 1024:.1f}",
                     f"{p['http_threads_cpu_ms_per_scrape']:.3f}",
                     f"{p['cpu_ms_per_scrape']:.3f}"])
    lines.append(markdown_table(
        ["scrapes", "format", "encoding", "count", "cold", "KiB per scrape",
         "CPU ms per scrape (HTTP threads)", "CPU ms per scrape (process − idle)"], rows))
    lines.append("")
    ka = report["keep_alive"]
    lines.append(f"Idle keep-alive connection: the HTTP threads use "
                 f"{ka['http_threads_cpu_ms_per_s']:.2f} ms CPU per second while it stays open "
                 f"(mean of {ka['rounds']} × {ka['held_seconds']:.0f} s).")
    lines.append("")
    prom = report.get("prometheus")
    if prom:
        lines.append(markdown_table(
            [f"Prometheus every {PROMETHEUS_INTERVAL_S} s ({prom['seconds']:.0f} s)", "value"],
            [["scrapes: window / 15 s (recorded by Prometheus, successful)",
              f"{prom['scrapes']:.1f} ({prom['scrapes_recorded']:.0f}, "
              f"{prom['successful_scrapes']:.0f})"],
             ["samples per scrape", f"{prom['samples_per_scrape']:.0f}"],
             ["scrape duration, mean", f"{1000 * prom['scrape_duration_avg_s']:.1f} ms"],
             ["CPU per scrape (HTTP threads)", f"{prom['http_threads_cpu_ms_per_scrape']:.2f} ms"],
             ["CPU per scrape (process − idle)", f"{prom['cpu_ms_per_scrape']:.2f} ms"],
             ["agent CPU, whole process", f"{prom['cpu_percent_of_one_core']:.2f}% of one core"]]))
        lines.append("")
    start, end = report["memory_after_start_kib"], report["memory_end_kib"]
    lines.append(markdown_table(
        ["memory", "after start-up", "at the end"],
        [["VmRSS, MiB", f"{start['VmRSS'] / 1024:.1f}", f"{end['VmRSS'] / 1024:.1f}"],
         ["VmHWM (peak RSS), MiB", f"{start['VmHWM'] / 1024:.1f}", f"{end['VmHWM'] / 1024:.1f}"]]))
    lines.append("")
    cold = [p for p in report["phases"] if p["mode"].startswith("cold")]
    worst = max(cold, key=lambda p: p["http_threads_cpu_ms_per_scrape"])
    worst_ms = worst["http_threads_cpu_ms_per_scrape"]
    peak_mb = end["VmHWM"] * 1024 / 1e6
    lines.append(f"- CPU per cold scrape, worst case ({worst['format']}, {worst['encoding']}): "
                 f"{worst_ms:.2f} ms (target < {SCRAPE_CPU_TARGET_MS} ms: "
                 f"{'met' if worst_ms < SCRAPE_CPU_TARGET_MS else 'MISSED'})")
    if prom:
        ms = prom["http_threads_cpu_ms_per_scrape"]
        lines.append(f"- CPU per scrape under Prometheus, keep-alive wait included: {ms:.2f} ms "
                     f"(target < {SCRAPE_CPU_TARGET_MS} ms: "
                     f"{'met' if ms < SCRAPE_CPU_TARGET_MS else 'MISSED'})")
    lines.append(f"- Peak RSS: {peak_mb:.1f} MB = {end['VmHWM'] / 1024:.1f} MiB (target < "
                 f"{RSS_TARGET_MB:.0f} MB: {'met' if peak_mb < RSS_TARGET_MB else 'MISSED'})")
    report["summary"] = {"idle_cpu_ms_per_s": sum(rate) / len(rate),
                         "worst_cold_scrape_cpu_ms": worst_ms, "peak_rss_mb": peak_mb,
                         "prometheus_scrape_cpu_ms":
                             prom["http_threads_cpu_ms_per_scrape"] if prom else None}
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gpumon", help="path to the gpumon binary")
    parser.add_argument("--json", help="write all measurements to this file")
    parser.add_argument("--names", help="naming scheme passed to the agent (default: native)")
    parser.add_argument("--settle-seconds", type=float, default=5)
    parser.add_argument("--idle-seconds", type=float, default=30,
                        help="each idle window; 30 s runs every 30 s group once")
    parser.add_argument("--cold-scrapes", type=int, default=40)
    parser.add_argument("--cold-interval", type=float, default=0.5)
    parser.add_argument("--cached-seconds", type=float, default=10)
    parser.add_argument("--prometheus-seconds", type=int, default=120,
                        help="0 leaves the Prometheus phase out")
    parser.add_argument("--prometheus", help="path to prometheus (default: from PATH)")
    args = parser.parse_args()
    report = run(args)
    print(summarize(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
