#!/usr/bin/env python3
"""HTTP under load: a Grafana-like query mix from thousands of keep-alive
clients against `gpumon server` and a real Prometheus, on the same data,
in the same run.

Steps:
1. Data: `gpumon simulate-export` writes N nodes x G GPUs (the full GPU
   metric set) over --data-duration at 15 s; `promtool tsdb
   create-blocks-from openmetrics` loads it into Prometheus's store and
   `gpumon tsdb import` into gpumon's (the layout of bench/promql).
2. Both servers start on loopback (retention 100y, the data is old;
   Prometheus with --web.max-connections=4096, gpumon's limit, since its
   default of 512 leaves the other connections unaccepted), with
   RLIMIT_NOFILE raised to min(65536, hard limit) for them and for wrk. Each
   panel query is asked of both once: both must return the same number of
   series, or the comparison means nothing (the script says so and stops).
3. The mix: QUERIES requests (seeded), ~70% range queries over 1 h ending at
   a random point of the data, step 15, 30 or 60 s (aligned, as Grafana
   does), ~30% instant queries at a random point; the panels below. They
   are written into mix.lua, which wrk's threads cycle through from
   different offsets: both servers get the same requests.
4. Saturated runs, per server (gpumon first, then Prometheus, one at a
   time; the other is idle): a 5 s warm-up with 50 connections, then `wrk
   -c C -t T -d D --timeout 30s --latency -s mix.lua`: every connection
   sends its next request as soon as it has the answer. This gives the
   throughput. Its latencies are those of a saturated queue (C requests are
   always in flight, so a fair server's mean wait is C / throughput), and
   wrk times only requests that completed: a server that lets some
   connections wait for the whole run looks faster than it is. The report
   gives C / throughput next to the percentiles for that reason.
5. Paced runs: the same C connections as users with think time
   (mix-paced.lua: an exponential wait of mean C / R before each request),
   offering both servers the same load R (default half the lower of the
   two saturated throughputs, --paced-rps), so latency is service time.
   This is the p99 to hold against the target.
   In every run RSS is sampled every 0.5 s and CPU time read from /proc;
   wrk reports req/s, latency percentiles, non-2xx answers (with an example
   body) and socket errors (connect, read, write, timeout); --timeout 30s so
   that slow answers are measured rather than dropped, as wrk's 2 s default
   would.
6. Prints a markdown table (with ratios gpumon / Prometheus and the target
   from the issue: throughput >= Prometheus's at <= half its p99) and
   writes JSON (--json).

usage: http_load.py [--gpumon PATH] [--connections 2000] [--threads 2]
                    [--duration 30s] [--nodes 10] [--data-duration 2h]
                    [--queries 2000] [--seed 1] [--paced-rps R] [--reuse DIR] [--keep]
                    [--json FILE] [--only gpumon|prometheus]
"""

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import bench_util  # noqa: E402  (bench/bench_util.py)

ALIGN_S = 18 * 3600  # one import block in both stores (see bench/promql)
START_S = 1_700_028_000
INTERVAL_S = 15

# Dashboard panels: (name, query). Range panels are 70% of the requests.
RANGE_PANELS = [
    ("temperatures", "gpu_temperature_celsius"),
    ("energy rate by node", "avg by (hostname) (rate(gpu_energy_joules_total[5m]))"),
    ("utilization by node", "max by (hostname) (gpu_utilization_ratio)"),
    ("power by node", "sum by (hostname) (gpu_power_usage_watts)"),
    ("hottest 5", "topk(5, gpu_temperature_celsius)"),
    ("memory used share", "avg by (hostname) (gpu_memory_used_bytes / gpu_memory_total_bytes)"),
    ("NVLink tx by node", "sum by (hostname) (rate(gpu_nvlink_transmit_bytes_total[5m]))"),
]
INSTANT_PANELS = [
    ("GPU count", "count(gpu_temperature_celsius)"),
    ("hottest 5 now", "topk(5, gpu_temperature_celsius)"),
    ("max temperature by node", "max by (hostname) (gpu_temperature_celsius)"),
    ("fleet power", "sum(gpu_power_usage_watts)"),
    ("mean utilization", "avg(gpu_utilization_ratio)"),
]
RANGE_SHARE = 0.7


def log(msg):
    print(f"[http_load] {msg}", file=sys.stderr, flush=True)


def parse_duration_s(text):
    m = re.fullmatch(r"(\d+)([smh])", text)
    if not m:
        raise SystemExit(f"bad duration {text!r} (e.g. 30s, 2h)")
    return int(m.group(1)) * {"s": 1, "m": 60, "h": 3600}[m.group(2)]


def run(argv, what):
    t0 = time.monotonic()
    p = subprocess.run([str(a) for a in argv], capture_output=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{what} exited {p.returncode}:\n"
                           f"{(p.stdout + p.stderr).decode('utf-8', 'replace')[-3000:]}")
    return time.monotonic() - t0


def load(args, work):
    om = os.path.join(work, "gpus.om")
    argv = [args.gpumon, "simulate-export", "--out", om, "--nodes", args.nodes, "--gpus",
            args.gpus, "--duration", args.data_duration, "--interval", f"{INTERVAL_S}s",
            "--seed", args.seed, "--start", START_S]
    log("generating: " + " ".join(map(str, argv)))
    log(f"  {run(argv, 'simulate-export'):.1f} s, {os.path.getsize(om) / 1e9:.2f} GB")
    argv = [args.promtool, "tsdb", "create-blocks-from", "openmetrics",
            "--max-block-duration=6h", om, os.path.join(work, "prometheus")]
    log("prometheus store: " + " ".join(map(str, argv)))
    log(f"  {run(argv, 'promtool'):.1f} s")
    argv = [args.gpumon, "tsdb", "import", "--data", os.path.join(work, "gpumon"), om]
    log("gpumon store: " + " ".join(map(str, argv)))
    log(f"  {run(argv, 'gpumon tsdb import'):.1f} s")
    os.remove(om)


def make_paths(args, data_s):
    """The request mix: a list of URL paths, seeded."""
    rng = random.Random(args.seed)
    end_max = START_S + data_s - INTERVAL_S
    paths = []
    for _ in range(args.queries):
        if rng.random() < RANGE_SHARE:
            _, expr = rng.choice(RANGE_PANELS)
            step = rng.choice((15, 30, 60))
            end = rng.randrange(START_S + 3600, end_max) // step * step
            params = {"query": expr, "start": end - 3600, "end": end, "step": step}
            paths.append("/api/v1/query_range?" + urllib.parse.urlencode(params))
        else:
            _, expr = rng.choice(INSTANT_PANELS)
            params = {"query": expr, "time": rng.randrange(START_S + 600, end_max)}
            paths.append("/api/v1/query?" + urllib.parse.urlencode(params))
    return paths


def write_lua(path, paths, paced=False):
    """mix.lua: each wrk thread walks `paths` from its own offset. paced:
    before each request a connection waits an exponentially distributed
    think time of mean args[1] ms (wrk ... -- MS), so N connections offer
    about N / mean requests per second, as independent users would."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("-- Generated by bench/http_load/http_load.py: the request mix.\n"
                "local paths = {\n")
        for p in paths:
            f.write(f"  {json.dumps(p)},\n")
        f.write("}\n"
                "local threads = {}\n"
                "function setup(thread)\n"
                "  thread:set(\"offset\", #threads * 7919)\n"
                "  table.insert(threads, thread)\n"
                "end\n"
                "local n = 0\n"
                "think_ms = 0\n"
                "function init(args)\n"
                "  n = offset\n"
                "  think_ms = tonumber(args[1]) or 0\n"
                "  math.randomseed(offset + 1)\n"
                "end\n")
        if paced:
            f.write("function delay()\n"
                    "  return math.floor(-think_ms * math.log(1 - math.random()))\n"
                    "end\n")
        f.write(
                "function request()\n"
                "  n = n + 1\n"
                "  return wrk.format(\"GET\", paths[n % #paths + 1])\n"
                "end\n"
                "-- What a non-2xx answer said (the last one of each thread).\n"
                "last_bad = \"\"\n"
                "function response(status, headers, body)\n"
                "  if status > 299 then\n"
                "    last_bad = status .. \" \" .. string.sub(body, 1, 160)\n"
                "  end\n"
                "end\n"
                "function done(summary, latency, requests)\n"
                "  for i, t in ipairs(threads) do\n"
                "    local bad = t:get(\"last_bad\")\n"
                "    if bad ~= \"\" then print(\"non-2xx example: \" .. bad) end\n"
                "  end\n"
                "end\n")


def series_count(port, path):
    status, body = bench_util.http_get(f"http://127.0.0.1:{port}{path}", timeout=60)
    if status != 200:
        raise RuntimeError(f"{path} answered {status}: {body[:300]!r}")
    return len(json.loads(body)["data"]["result"])


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def to_ms(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_wrk(out):
    r = {}
    for pct in ("50", "75", "90", "99"):
        m = re.search(rf"^\s+{pct}%\s+(\S+)", out, re.M)
        r[f"p{pct}_ms"] = to_ms(m.group(1)) if m else None
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+)", out)
    r["requests"] = int(m.group(1))
    r["seconds"] = to_ms(m.group(2) + m.group(3)) / 1e3
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    r["requests_per_s"] = float(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    r["non_2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    r["socket_errors"] = dict(zip(("connect", "read", "write", "timeout"),
                                  map(int, m.groups()))) if m else {
        "connect": 0, "read": 0, "write": 0, "timeout": 0}
    r["ok_per_s"] = (r["requests"] - r["non_2xx"]) / r["seconds"]
    r["non_2xx_examples"] = re.findall(r"^non-2xx example: (.*)$", out, re.M)
    return r


def settle(child, limit_s=30.0):
    """Waits until the server is idle (under 5% of a core over 1 s), so a
    run does not pay for the previous run's queued work."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        c0 = bench_util.stat_cpu_seconds(child.pid)
        time.sleep(1.0)
        if bench_util.stat_cpu_seconds(child.pid) - c0 < 0.05:
            return


def load_run(name, child, port, args, lua, connections, duration_s, quiet=False, think_ms=None):
    """One wrk run against a server; wrk's figures plus RSS and CPU."""
    settle(child)
    argv = [args.wrk, "-c", connections, "-t", args.threads, "-d", f"{duration_s}s",
            "--timeout", "30s", "--latency", "-s", lua, f"http://127.0.0.1:{port}"]
    if think_ms is not None:
        argv += ["--", f"{think_ms:.0f}"]
    if not quiet:
        log(f"{name}: " + " ".join(map(str, argv)))
    rss = []
    stop = threading.Event()

    def sample():
        t0 = time.monotonic()
        last = 0
        while not stop.wait(0.5):
            mem = bench_util.memory_kib(child.pid)
            rss.append(mem.get("VmRSS", 0) * 1024)
            el = time.monotonic() - t0
            if not quiet and el - last >= 5:
                last = el
                log(f"  {name}: {el:4.0f}/{duration_s} s, RSS {rss[-1] / 2**20:.0f} MiB")

    cpu0 = bench_util.stat_cpu_seconds(child.pid)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    p = subprocess.run([str(a) for a in argv], capture_output=True, timeout=duration_s + 120)
    stop.set()
    sampler.join()
    cpu = bench_util.stat_cpu_seconds(child.pid) - cpu0
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        raise RuntimeError(f"wrk exited {p.returncode}: {out}{p.stderr.decode()[-2000:]}")
    r = parse_wrk(out)
    r["cpu_s"] = cpu
    r["rss_max_bytes"] = max(rss) if rss else 0
    r["rss_mean_bytes"] = sum(rss) / len(rss) if rss else 0
    r["vmhwm_bytes"] = bench_util.memory_kib(child.pid).get("VmHWM", 0) * 1024
    r["wrk_output"] = out
    return r


def report(results, args):
    """(markdown table, verdict line)."""
    names = ("gpumon", "prometheus")
    g, p = results.get("gpumon"), results.get("prometheus")

    def row(label, get, fmt, ratio=True):
        vals = [get(results[n]) if n in results else None for n in names]
        cells = ["-" if v is None else fmt(v) for v in vals]
        r = (f"{vals[0] / vals[1]:.2f}" if ratio and None not in vals and vals[1] else "-")
        return [label] + cells + [r]

    num = lambda v: f"{v:,.0f}"  # noqa: E731
    ms = lambda v: f"{v:,.0f}" if v >= 100 else f"{v:.1f}"  # noqa: E731
    mib = lambda v: f"{v / 2**20:,.0f}"  # noqa: E731
    errors = lambda r: "/".join(str(v) for v in r["socket_errors"].values())  # noqa: E731
    paced = lambda key: lambda r: r["paced"][key] if "paced" in r else None  # noqa: E731
    rows = [
        row("**saturated** (no think time): requests / s", lambda r: r["requests_per_s"], num),
        row("2xx answers / s", lambda r: r["ok_per_s"], num),
        row("p50 / p90 latency, ms", lambda r: r["p50_ms"],
            lambda v: v, ratio=False)[:1] + [
            f"{ms(results[n]['p50_ms'])} / {ms(results[n]['p90_ms'])}" if n in results else "-"
            for n in names] + ["-"],
        row("p99 latency, ms", lambda r: r["p99_ms"], ms),
        # A closed loop of C connections keeps C requests in flight, so the
        # mean wait at a fair server is C / throughput. wrk times only the
        # requests that completed: a server that lets some connections wait
        # the whole run shows latencies below this.
        row("mean wait if served fairly (connections / req/s), ms",
            lambda r: args.connections / r["requests_per_s"] * 1e3, num, ratio=False),
        row("non-2xx answers", lambda r: r["non_2xx"], num, ratio=False),
        row("socket errors (connect/read/write/timeout)", errors, str, ratio=False),
        row("CPU used during the run, s", lambda r: r["cpu_s"], lambda v: f"{v:.1f}"),
        row("RSS during load, mean / max MiB", lambda r: r["rss_mean_bytes"], mib,
            ratio=False)[:1] + [
            f"{mib(results[n]['rss_mean_bytes'])} / {mib(results[n]['rss_max_bytes'])}"
            if n in results else "-" for n in names] + [
            f"{g['rss_mean_bytes'] / p['rss_mean_bytes']:.2f}" if g and p else "-"],
        row("**paced** (same offered load): offered / answered req/s",
            paced("offered_per_s"), num, ratio=False)[:1] + [
            f"{num(results[n]['paced']['offered_per_s'])} / "
            f"{num(results[n]['paced']['ok_per_s'])}" if n in results and "paced" in
            results[n] else "-" for n in names] + ["-"],
        row("p50 latency, ms", paced("p50_ms"), ms),
        row("p90 latency, ms", paced("p90_ms"), ms),
        row("p99 latency, ms", paced("p99_ms"), ms),
        row("non-2xx / socket errors", paced("non_2xx"), num, ratio=False)[:1] + [
            f"{results[n]['paced']['non_2xx']} / {errors(results[n]['paced'])}"
            if n in results and "paced" in results[n] else "-" for n in names] + ["-"],
        row("peak RSS of the whole run (VmHWM), MiB",
            lambda r: r["paced"]["vmhwm_bytes"] if "paced" in r else r["vmhwm_bytes"], mib),
    ]
    table = bench_util.markdown_table(["measure", "gpumon", "Prometheus", "gpumon / Prometheus"],
                                      rows)
    verdict = ""
    if g and p:
        rps = g["ok_per_s"] / p["ok_per_s"]
        parts = [f"throughput {'met' if rps >= 1 else 'MISSED'} ({rps:.2f}x)"]
        for label, a, b in (("p99 saturated", g["p99_ms"], p["p99_ms"]),
                            ("p99 paced", g.get("paced", {}).get("p99_ms"),
                             p.get("paced", {}).get("p99_ms"))):
            if a is not None and b:
                parts.append(f"{label} {'met' if a <= b / 2 else 'MISSED'} ({a / b:.2f}x)")
        verdict = ("target (throughput >= Prometheus's at <= half its p99): " +
                   ", ".join(parts))
    return table, verdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpumon", default=os.path.join(REPO, "build", "bin", "gpumon"))
    ap.add_argument("--prometheus", default=shutil.which("prometheus") or "/usr/bin/prometheus")
    ap.add_argument("--promtool", default=shutil.which("promtool") or "/usr/bin/promtool")
    ap.add_argument("--wrk", default=shutil.which("wrk") or "/usr/bin/wrk")
    ap.add_argument("--connections", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duration", default="30s", help="of each timed wrk run")
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--data-duration", default="2h")
    ap.add_argument("--queries", type=int, default=2000, help="distinct requests in the mix")
    ap.add_argument("--paced-rps", type=float,
                    help="offered load of the paced runs (default: half the lower saturation "
                         "throughput of the two servers)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", choices=("gpumon", "prometheus"))
    # Prometheus accepts 512 connections by default and leaves the rest in
    # the listen backlog, unanswered; gpumon's limit is 4096.
    ap.add_argument("--prometheus-max-connections", type=int, default=4096)
    ap.add_argument("--work-dir")
    ap.add_argument("--reuse", metavar="DIR", help="use the stores a --keep run left in DIR")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    duration_s = parse_duration_s(args.duration)
    data_s = parse_duration_s(args.data_duration)
    if data_s < 3600 + 600:
        raise SystemExit("--data-duration must cover more than the 1 h range queries")

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(65536, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    log(f"RLIMIT_NOFILE {nofile} for both servers and wrk")
    if nofile < args.connections + 200:
        raise SystemExit(f"RLIMIT_NOFILE {nofile} is too low for {args.connections} connections")

    work = args.reuse or tempfile.mkdtemp(prefix="http_load.", dir=args.work_dir)
    meta_path = os.path.join(work, "meta.json")
    if args.reuse:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        args.nodes, args.gpus, args.data_duration = meta["nodes"], meta["gpus"], meta["data"]
        data_s = parse_duration_s(args.data_duration)
        log(f"reusing the stores in {work}")
    else:
        load(args, work)
        meta = {"nodes": args.nodes, "gpus": args.gpus, "data": args.data_duration}
        with open(meta_path, "w", encoding="utf-8") as f:
            json.dump(meta, f)
    paths = make_paths(args, data_s)
    lua = os.path.join(work, "mix.lua")
    write_lua(lua, paths)
    paced_lua = os.path.join(work, "mix-paced.lua")
    write_lua(paced_lua, paths, paced=True)
    n_range = sum(1 for p in paths if "query_range" in p)
    log(f"mix: {len(paths)} requests, {n_range / len(paths):.0%} range (1 h, step 15-60 s)")

    children = []
    results = {}
    try:
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            f.write("global:\n  scrape_interval: 15s\n")
        prom_port, gm_port = bench_util.free_port(), bench_util.free_port()
        servers = {}
        if args.only != "prometheus":
            gm = bench_util.Child([args.gpumon, "server", "--data", os.path.join(work, "gpumon"),
                                   "--retention", "100y", "--listen", f"127.0.0.1:{gm_port}"],
                                  name="gpumon server")
            children.append(gm)
            servers["gpumon"] = (gm, gm_port)
        if args.only != "gpumon":
            prom = bench_util.Child(
                [args.prometheus, f"--config.file={config}",
                 f"--storage.tsdb.path={os.path.join(work, 'prometheus')}",
                 f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn",
                 f"--web.max-connections={args.prometheus_max_connections}",
                 "--storage.tsdb.retention.time=100y"], name="prometheus")
            children.append(prom)
            servers["prometheus"] = (prom, prom_port)
        for name, (child, port) in servers.items():
            child.wait_http(f"http://127.0.0.1:{port}/api/v1/query?query=1", timeout=300)
        # The same data, or the comparison is void.
        at = START_S + data_s - 60
        for _, expr in RANGE_PANELS + INSTANT_PANELS:
            path = "/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": at})
            counts = {n: series_count(port, path) for n, (_, port) in servers.items()}
            if len(set(counts.values())) != 1 or 0 in counts.values():
                raise SystemExit(f"{expr}: series per server {counts}: not the same data")
        log(f"both servers hold the same series for every panel ({len(servers)} servers)")
        def show(name, r):
            log(f"{name}: {r['requests_per_s']:,.0f} req/s, p50 {r['p50_ms']} ms, p99 "
                f"{r['p99_ms']} ms, non-2xx {r['non_2xx']}, socket errors {r['socket_errors']}")
            for example in r["non_2xx_examples"]:
                log(f"  {name}: non-2xx example: {example}")

        # Saturation: every connection sends its next request at once.
        for name, (child, port) in servers.items():
            log(f"{name}: warm-up, 50 connections for 5 s")
            load_run(name, child, port, args, lua, 50, 5, quiet=True)
            results[name] = load_run(name, child, port, args, lua, args.connections, duration_s)
            show(name, results[name])
        # Paced: the same connections as users with think time, offering
        # the same load to both, below what either sustains, so latency is
        # service time and not the length of a saturated queue.
        paced_rps = args.paced_rps or 0.5 * min(r["ok_per_s"] for r in results.values())
        think_ms = args.connections / paced_rps * 1e3
        log(f"paced runs: {args.connections} connections offering {paced_rps:.0f} req/s "
            f"(think time mean {think_ms / 1e3:.1f} s)")
        for name, (child, port) in servers.items():
            r = load_run(name + " (paced)", child, port, args, paced_lua, args.connections,
                         duration_s, think_ms=think_ms)
            r["offered_per_s"] = paced_rps
            results[name]["paced"] = r
            show(name + " (paced)", r)
    finally:
        for c in children:
            c.stop()
        if not args.keep and not args.reuse:
            shutil.rmtree(work, ignore_errors=True)

    table, verdict = report(results, args)
    command = "python3 bench/http_load/http_load.py " + " ".join(sys.argv[1:])
    print(f"\nHTTP under load: {args.nodes} nodes x {args.gpus} GPUs x {args.data_duration} at "
          f"{INTERVAL_S} s; {args.connections} keep-alive connections, {args.threads} wrk "
          f"threads, {duration_s} s per server; {len(paths)}-request mix, "
          f"{n_range / len(paths):.0%} range\n")
    print(table)
    if verdict:
        print("\n" + verdict)
    print(f"\ncommand: {command}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": bench_util.machine_description(), "args": vars(args),
                       "results": results, "verdict": verdict, "command": command}, f, indent=2)


if __name__ == "__main__":
    main()
