#!/usr/bin/env python3
"""The agent's CPU cost of push ingest, measured on the real binary.

Starts `gpumon agent --simulate h200x8` on a free loopback port, then:

  idle    the agent's CPU with no pushes and no scrapes (the GPU collection),
          as a rate, subtracted from the phases below
  push    --jobs jobs each PUT --series series (40 gauges and a histogram of
          8 buckets, values changing each push) to
          /metrics/job/bench/node/bench/rank/<i> every --interval seconds,
          each push on a new connection as prometheus_client's
          push_to_gateway does; CPU per pushed sample and per push
  scrape  the same pushes continue while /metrics is scraped every
          --scrape-interval seconds; each scrape finds new pushes, so it
          renders the GPU series plus every pushed series; CPU per scrape
          is the extra CPU over the push phase's rate, per scrape

CPU is the agent process's utime+stime from /proc/<pid>/stat (via
bench_util's per-thread schedstat when available). The pushing client runs in
this process and is not counted. Simulated GPUs: the figures are the agent's
own cost, not NVML's.

usage: agent_push.py PATH/TO/gpumon [--jobs 100] [--series 50] [--seconds 20]
                     [--json FILE]
Prints a markdown table; --json writes every number. Stops what it starts.
"""

import argparse
import http.client
import json
import sys
import threading
import time

sys.dont_write_bytecode = True

from bench_util import (  # noqa: E402
    Child, CpuSample, cpu_delta, free_port, http_get, machine_description, markdown_table)


def body_for(rank, seq, series):
    gauges = series - 10  # the histogram below is 10 series
    lines = ["# TYPE bench_metric gauge"]
    for m in range(gauges):
        lines.append(f'bench_metric{{metric="m{m}"}} {seq * 0.5 + m}')
    lines.append("# TYPE bench_step_seconds histogram")
    total = 0
    for i, le in enumerate(("0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "+Inf")):
        total = seq * (i + 1)
        lines.append(f'bench_step_seconds_bucket{{le="{le}"}} {total}')
    lines.append(f"bench_step_seconds_sum {seq * 0.1 + rank}")
    lines.append(f"bench_step_seconds_count {total}")
    return ("\n".join(lines) + "\n").encode()


class Pushers:
    """jobs pushers, each on its own schedule, run by a few threads."""

    def __init__(self, port, jobs, series, interval, threads=8):
        self.port = port
        self.jobs = jobs
        self.series = series
        self.interval = interval
        self.pushes = 0
        self.errors = 0
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(t, threads), daemon=True)
                        for t in range(threads)]

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.stop_event.set()
        for t in self.threads:
            t.join()

    def counts(self):
        with self.lock:
            return self.pushes, self.errors

    def _run(self, tid, nthreads):
        ranks = list(range(tid, self.jobs, nthreads))
        seq = 0
        start = time.monotonic()
        while not self.stop_event.is_set():
            seq += 1
            for k, rank in enumerate(ranks):
                # Spread the pushes over the interval.
                due = start + (seq - 1) * self.interval + self.interval * k / max(1, len(ranks))
                delay = due - time.monotonic()
                if delay > 0 and self.stop_event.wait(delay):
                    return
                ok = self._push(rank, seq)
                with self.lock:
                    self.pushes += ok
                    self.errors += not ok

    def _push(self, rank, seq):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("PUT", f"/metrics/job/bench/node/bench/rank/{rank}",
                         body=body_for(rank, seq, self.series),
                         headers={"Content-Type": "text/plain; version=0.0.4",
                                  "Connection": "close"})
            r = conn.getresponse()
            r.read()
            return r.status == 200
        except OSError:
            return False
        finally:
            conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gpumon")
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--series", type=int, default=50)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--scrape-interval", type=float, default=1.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.series < 11:
        ap.error("--series must be at least 11 (a histogram is 10)")

    port = free_port()
    with Child([args.gpumon, "agent", "--simulate", "h200x8", "--listen",
                f"127.0.0.1:{port}"], name="gpumon agent") as agent:
        deadline = time.monotonic() + 30
        while True:
            try:
                if http_get(f"http://127.0.0.1:{port}/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or not agent.running():
                sys.exit("agent did not start")
            time.sleep(0.1)
        time.sleep(2)  # past start-up work

        a = CpuSample(agent.pid)
        time.sleep(args.idle_seconds)
        b = CpuSample(agent.pid)
        idle_wall, idle_cpu = cpu_delta(a, b)
        idle_rate = idle_cpu / idle_wall

        pushers = Pushers(port, args.jobs, args.series, args.interval)
        pushers.start()
        time.sleep(args.interval * 2)  # every group exists; steady state
        p0, e0 = pushers.counts()
        a = CpuSample(agent.pid)
        time.sleep(args.seconds)
        b = CpuSample(agent.pid)
        p1, e1 = pushers.counts()
        push_wall, push_cpu = cpu_delta(a, b)
        pushes = p1 - p0
        push_extra = push_cpu - idle_rate * push_wall

        scrapes = 0
        body_bytes = 0
        scraped_samples = 0
        a = CpuSample(agent.pid)
        p2, _ = pushers.counts()
        end = time.monotonic() + args.seconds
        next_scrape = time.monotonic()
        while time.monotonic() < end:
            _, body = http_get(f"http://127.0.0.1:{port}/metrics",
                               headers={"Accept": "text/plain;version=0.0.4"})
            scrapes += 1
            body_bytes = len(body)
            scraped_samples = sum(1 for line in body.split(b"\n")
                                  if line and not line.startswith(b"#"))
            next_scrape += args.scrape_interval
            time.sleep(max(0.0, next_scrape - time.monotonic()))
        b = CpuSample(agent.pid)
        p3, e3 = pushers.counts()
        pushers.stop()
        scrape_wall, scrape_cpu = cpu_delta(a, b)
        # The pushes during this phase cost what they cost in the push phase.
        scrape_extra = scrape_cpu - (idle_rate * scrape_wall +
                                     (push_extra / max(1, pushes)) * (p3 - p2))

    samples_pushed = pushes * args.series
    result = {
        "machine": machine_description(),
        "jobs": args.jobs,
        "series_per_job": args.series,
        "interval_s": args.interval,
        "idle_cpu_ms_per_s": idle_rate * 1e3,
        "push_phase_s": push_wall,
        "pushes": pushes,
        "push_errors": e1 - e0,
        "pushes_per_s": pushes / push_wall,
        "cpu_us_per_push": push_extra / max(1, pushes) * 1e6,
        "cpu_us_per_sample": push_extra / max(1, samples_pushed) * 1e6,
        "push_cpu_percent_of_core": push_extra / push_wall * 100,
        "scrapes": scrapes,
        "scrape_body_bytes": body_bytes,
        "scrape_samples": scraped_samples,
        "cpu_ms_per_scrape": scrape_extra / max(1, scrapes) * 1e3,
        "scrape_phase_push_errors": e3 - e1,
    }
    print(f"machine: {result['machine']}\n")
    print(markdown_table(
        ["measure", "value"],
        [["jobs x series, interval", f"{args.jobs} x {args.series}, {args.interval:g} s"],
         ["agent idle CPU (h200x8 collection)", f"{result['idle_cpu_ms_per_s']:.2f} ms/s"],
         ["pushes/s accepted (errors)", f"{result['pushes_per_s']:.1f} ({result['push_errors']})"],
         ["CPU per push", f"{result['cpu_us_per_push']:.0f} µs"],
         ["CPU per pushed sample", f"{result['cpu_us_per_sample']:.2f} µs"],
         ["push ingest CPU", f"{result['push_cpu_percent_of_core']:.1f} % of a core"],
         ["/metrics size (samples, bytes)", f"{scraped_samples}, {body_bytes}"],
         ["CPU per /metrics scrape (text 0.0.4)", f"{result['cpu_ms_per_scrape']:.2f} ms"]]))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
