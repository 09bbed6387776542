#!/usr/bin/env python3
"""The Python client's cost per recorded training step, on one core.

Runs a training loop whose step bodies are empty, so everything measured is
the client's own work, with the full training API per step:
mon.data_loader() around the batches, mon.step(samples=, tokens=) with the
forward / backward / optimizer sections, step.loss(), step.metric(), and
FLOPs per token + a peak so model FLOPs and MFU are computed. Each step is
timed with perf_counter_ns; the same loop without the client is the
baseline that is subtracted.

Scenarios:
  baseline   the bare loop (iteration + three empty `with` blocks)
  full       the full API, no delivery
  push       the full API while the push thread sends the registry every
             --push-interval s (default 0.1 s, 50x the default 5 s) to a
             local Pushgateway-compatible receiver (a child process): the
             mean shows the thread's share, which the median hides
  tensor     as full with the loss a 0-d torch tensor (when torch imports)

Pinned to one core with os.sched_setaffinity (--cpu; the receiver child is
not pinned). Reports median, p99 and mean per step in microseconds, and the
client's cost (median minus the baseline's median) as a share of a 100 ms
step. usage: client_overhead.py [--steps N] [--rounds R] [--cpu C] [--json F]
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))

RECEIVER = r"""
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_PUT(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(202); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_baseline(steps):
    times = []
    null = contextlib.nullcontext()
    it = iter(range(steps))
    clock = time.perf_counter_ns
    for _ in range(steps):
        t0 = clock()
        next(it)
        with null:
            pass
        with null:
            pass
        with null:
            pass
        times.append(clock() - t0)
    return times


def run_client(mon, steps, loss_value):
    times = []
    it = iter(mon.data_loader(range(steps)))
    clock = time.perf_counter_ns
    for i in range(steps):
        t0 = clock()
        next(it)
        with mon.step(samples=8, tokens=4096) as step:
            with step.section("forward"):
                pass
            with step.section("backward"):
                pass
            with step.section("optimizer"):
                pass
            step.loss(loss_value)
            step.metric("accuracy", 0.5)
        times.append(clock() - t0)
    return times


def summarize(times_ns):
    us = [t / 1000 for t in times_ns]
    return {"median_us": statistics.median(us), "p99_us": percentile(us, 0.99),
            "mean_us": statistics.fmean(us), "steps": len(us)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100_000, help="steps per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=None, help="core to pin to")
    parser.add_argument("--push-interval", type=float, default=0.1)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()

    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    import gpumon

    def monitor(**kw):
        return gpumon.TrainingMonitor(job="bench", rank=0, local_rank=0, node="bench",
                                      flops_per_token=6 * 124e6, peak_flops=989.5e12, **kw)

    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE,
                                text=True)
    try:
        port = int(receiver.stdout.readline())
        scenarios = {"baseline": [], "full": [], "push": []}
        torch = None
        try:
            import torch  # noqa: F401
            scenarios["tensor"] = []
        except ImportError:
            pass
        pushes = 0
        for _ in range(args.rounds):
            scenarios["baseline"] += run_baseline(args.steps)
            mon = monitor()
            scenarios["full"] += run_client(mon, args.steps, 0.5)
            mon.close()
            mon = monitor(push_url=f"http://127.0.0.1:{port}", push_interval=args.push_interval)
            scenarios["push"] += run_client(mon, args.steps, 0.5)
            mon.close()
            pushes += mon.registry.get_sample_value(
                "gpumon_client_pushes_total",
                {"job": "bench", "rank": "0", "local_rank": "0", "node": "bench"})
            if torch is not None:
                mon = monitor()
                scenarios["tensor"] += run_client(mon, args.steps, torch.tensor(0.5))
                mon.close()
    finally:
        receiver.kill()
        receiver.wait()

    results = {name: summarize(times) for name, times in scenarios.items()}
    base = results["baseline"]["median_us"]
    print(f"# gpumon client overhead per step (python {sys.version.split()[0]}, "
          f"core {cpu}, {args.rounds} x {args.steps} steps; pushes during 'push': {pushes:.0f})")
    print()
    print("| scenario | median µs | p99 µs | mean µs | client cost µs (median − baseline) "
          "| % of a 100 ms step |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, r in results.items():
        cost = r["median_us"] - base if name != "baseline" else 0.0
        mean_cost = r["mean_us"] - results["baseline"]["mean_us"] if name != "baseline" else 0.0
        r["cost_us"] = cost
        r["mean_cost_us"] = mean_cost
        share = "" if name == "baseline" else f"{cost / 100_000 * 100:.4f} %"
        print(f"| {name} | {r['median_us']:.2f} | {r['p99_us']:.2f} | {r['mean_us']:.2f} | "
              f"{'' if name == 'baseline' else f'{cost:.2f}'} | {share} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu, "python": sys.version, "results": results,
                       "pushes": pushes}, f, indent=2)


if __name__ == "__main__":
    main()
