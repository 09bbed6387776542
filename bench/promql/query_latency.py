#!/usr/bin/env python3
"""PromQL query latency: a GPU dashboard's queries against gpumon and
Prometheus, on the same data, over the HTTP API.

Steps (one run, one input file):

1. `gpumon simulate-export` writes N nodes x G GPUs x the full GPU metric set
   over a span (default 10 nodes x 8 H200 x 6 h at 15 s). The start is
   aligned to 18 h, so Prometheus's compacted 6 h block and gpumon's 18 h
   import block each hold all of it in one block. A classic histogram of
   training step times per node (`step_time_seconds_bucket/_sum/_count`,
   job="train", 12 buckets, about 20 steps observed per 15 s) is appended to
   the same file.
2. Prometheus: `promtool tsdb create-blocks-from openmetrics
   --max-block-duration=6h` (one block, what compaction ends with), then
   `prometheus` on 127.0.0.1 with a minimal config (no scrapes). gpumon:
   `gpumon tsdb import`, then `gpumon server --data DIR` on 127.0.0.1.
3. The dashboard query set (below) is sent to both servers: first once each,
   to check that both answer with the same series and points (values within
   1e-6 relative); then W warm-up runs each; then R timed runs each, the two
   servers alternating (gpumon first on even runs, Prometheus first on odd
   ones, so neither profits from the other's cache warmth or a quiet moment).
   One HTTP GET per run on a fresh loopback connection, no compression; the
   time is from sending the request to having read the whole body. The CPU
   time each server used during its timed runs is read from /proc
   (per-thread schedstat, nanoseconds).
4. Prints a markdown table: query, gpumon median ms, Prometheus median ms,
   ratio (target: <= 0.5 for every query), plus CPU ms per query and the
   answer size, and the command line.

Range queries cover the last `--window` of the data (default 6 h) at
`--step` (default 60 s), start and end aligned to the step as Grafana does.
Everything runs on loopback; every process started is stopped at the end and
the work directory is removed unless --keep.

usage: query_latency.py [--gpumon PATH] [--nodes 10] [--gpus 8] [--duration 6h]
                        [--interval 15s] [--seed 1] [--window 6h] [--step 60]
                        [--warmup 3] [--runs 20] [--work-dir DIR] [--keep]
                        [--reuse DIR] [--json FILE]
"""

import argparse
import http.client
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import bench_util  # noqa: E402  (bench/bench_util.py)

ALIGN_S = 18 * 3600  # gpumon's import block range; a multiple of Prometheus's 6 h
BUCKETS = ["0.1", "0.2", "0.3", "0.5", "0.75", "1.0", "1.5", "2.0", "3.0", "5.0", "10.0", "+Inf"]

# The dashboard: (name, query, kind). kind "range" runs over the window at
# the step; "instant" at the window's end.
DASHBOARD = [
    ("GPU temperatures (all GPUs)", "gpu_temperature_celsius", "range"),
    ("energy rate by node", "avg by (hostname) (rate(gpu_energy_joules_total[5m]))", "range"),
    ("hottest 5 GPUs", "topk(5, gpu_temperature_celsius)", "instant"),
    ("hottest 5 GPUs over time", "topk(5, gpu_temperature_celsius)", "range"),
    ("step time p90", "histogram_quantile(0.9, sum by (le) (rate(step_time_seconds_bucket[5m])))",
     "range"),
    ("HBM temperature in 1 h", "predict_linear(gpu_memory_temperature_celsius[30m], 3600)",
     "range"),
]


def log(msg):
    print(f"[query_latency] {msg}", file=sys.stderr, flush=True)


def parse_duration_s(text):
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    m = re.fullmatch(r"(\d+)([smhd])", text)
    if not m:
        raise SystemExit(f"bad duration {text!r} (e.g. 6h, 15s)")
    return int(m.group(1)) * units[m.group(2)]


def run(argv, what):
    start = time.monotonic()
    p = subprocess.run([str(a) for a in argv], capture_output=True, timeout=3600)
    wall = time.monotonic() - start
    out = (p.stdout + p.stderr).decode("utf-8", "replace")
    if p.returncode != 0:
        raise RuntimeError(f"{what} exited {p.returncode}: {' '.join(map(str, argv))}\n"
                           f"{out[-3000:]}")
    return wall, out


# ------------------------------------------------------------ the input


def append_histogram(path, nodes, start_s, steps, interval_s, seed):
    """Replaces the file's closing "# EOF" with a step-time histogram per
    node and a new "# EOF"."""
    with open(path, "rb+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 64))
        tail = f.read()
        at = tail.rfind(b"# EOF")
        if at < 0:
            raise RuntimeError(f"{path} does not end with # EOF")
        f.truncate(size - len(tail) + at)
    rnd = random.Random(seed)
    bounds = [float(b) for b in BUCKETS]
    lines = 0
    with open(path, "a", encoding="utf-8") as f:
        f.write("# TYPE step_time_seconds histogram\n")
        for n in range(nodes):
            labels = f'job="train",hostname="sim-node-{n:04d}"'
            series = [[] for _ in range(len(BUCKETS) + 2)]
            median = rnd.uniform(0.4, 0.9)
            # The job has been running for a while: counters start at about a
            # day's worth of steps. (Counters starting near zero inside a rate
            # window are where Prometheus 2.42 and 3.x extrapolate
            # differently, which would spoil the answer check.)
            before = 100_000
            counts = [math.floor(before * 0.5 * (1 + math.erf(math.log(b / median) /
                                                              (0.35 * math.sqrt(2)))))
                      if math.isfinite(b) else before for b in bounds]
            total = before * median * math.exp(0.35 ** 2 / 2)
            for k in range(steps):
                ts = start_s + k * interval_s
                # A slow straggler phase now and then widens the tail.
                sigma = 0.25 + (0.4 if (k // 240 + n) % 5 == 0 else 0.0)
                for _ in range(rnd.randint(15, 25)):
                    x = rnd.lognormvariate(math.log(median), sigma)
                    total += x
                    for i, b in enumerate(bounds):
                        if x <= b:
                            counts[i] += 1
                for i in range(len(BUCKETS)):
                    series[i].append(f"{counts[i]} {ts}")
                series[-2].append(f"{total!r} {ts}")
                series[-1].append(f"{counts[-1]} {ts}")
            heads = [f'step_time_seconds_bucket{{{labels},le="{le}"}} ' for le in BUCKETS]
            heads += [f"step_time_seconds_sum{{{labels}}} ",
                      f"step_time_seconds_count{{{labels}}} "]
            for head, points in zip(heads, series):
                f.write("".join(head + p + "\n" for p in points))
                lines += len(points)
        f.write("# EOF\n")
    return lines


# ----------------------------------------------------------------- HTTP


def get(port, path, params):
    """(seconds, status, body) of one GET on a fresh loopback connection."""
    url = path + "?" + urllib.parse.urlencode(params)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        start = time.perf_counter()
        conn.request("GET", url)
        r = conn.getresponse()
        body = r.read()
        return time.perf_counter() - start, r.status, body
    finally:
        conn.close()


def answer_shape(body):
    """{labels: [(t_ms, value)]} of a query answer."""
    doc = json.loads(body)
    if doc.get("status") != "success":
        raise RuntimeError(f"query failed: {body[:500]!r}")
    out = {}
    for s in doc["data"]["result"]:
        key = tuple(sorted(s["metric"].items()))
        pts = s["values"] if "values" in s else [s["value"]]
        out[key] = [(round(float(t) * 1000), float(v)) for t, v in pts]
    return out


def same_value(x, y):
    return (math.isnan(x) and math.isnan(y)) or x == y or \
        abs(x - y) <= 1e-6 * max(abs(x), abs(y))


def values_by_time(answer):
    """{t_ms: sorted values}: what is left of an answer when series identity
    is ignored."""
    out = {}
    for pts in answer.values():
        for t, v in pts:
            out.setdefault(t, []).append(v)
    return {t: sorted(vs, key=lambda v: (math.isnan(v), v)) for t, vs in out.items()}


def agree(a, b):
    """None if the answers hold the same series and points (values within
    1e-6 relative), else what differs. The simulator reports whole degrees,
    so topk() meets ties, and which of the tied series it keeps is
    unspecified: answers whose values agree at every time are accepted."""
    problem = None
    if set(a) != set(b):
        problem = f"series differ: {len(set(a) - set(b))} only in gpumon, " \
                  f"{len(set(b) - set(a))} only in Prometheus"
    else:
        for k in a:
            if [t for t, _ in a[k]] != [t for t, _ in b[k]]:
                problem = f"timestamps of {dict(k)} differ"
                break
            bad = [(t, x, y) for (t, x), (_, y) in zip(a[k], b[k]) if not same_value(x, y)]
            if bad:
                t, x, y = bad[0]
                return f"{dict(k)} at {t}: gpumon {x!r}, Prometheus {y!r}"
    if problem is None:
        return None
    va, vb = values_by_time(a), values_by_time(b)
    if va.keys() == vb.keys() and all(
            len(va[t]) == len(vb[t]) and all(map(same_value, va[t], vb[t])) for t in va):
        return None  # ties broken differently
    return problem


# ------------------------------------------------------------------ main


def load(args, work, start_s, steps, interval_s):
    """Generates the input and loads it into both stores; returns the import
    times (promtool, gpumon) in seconds."""
    om = os.path.join(work, "gpus.om")
    argv = [args.gpumon, "simulate-export", "--out", om, "--nodes", args.nodes, "--gpus",
            args.gpus, "--model", args.model, "--duration", args.duration, "--interval",
            args.interval, "--seed", args.seed, "--start", start_s]
    log("generating: " + " ".join(map(str, argv)))
    wall, out = run(argv, "simulate-export")
    summary = [ln for ln in out.splitlines() if "wrote" in ln]
    log(f"generated in {wall:.1f} s: {summary[-1] if summary else out.strip()[-200:]}")
    hist_lines = append_histogram(om, args.nodes, start_s, steps, interval_s, args.seed)
    log(f"appended {hist_lines} histogram samples; {os.path.getsize(om) / 1e9:.2f} GB")

    argv = [args.promtool, "tsdb", "create-blocks-from", "openmetrics",
            "--max-block-duration=6h", om, os.path.join(work, "prometheus")]
    log("prometheus: " + " ".join(map(str, argv)))
    prom_import_s, _ = run(argv, "promtool")
    argv = [args.gpumon, "tsdb", "import", "--data", os.path.join(work, "gpumon"), om]
    log("gpumon: " + " ".join(map(str, argv)))
    gm_import_s, _ = run(argv, "gpumon tsdb import")
    log(f"imports: promtool {prom_import_s:.1f} s, gpumon {gm_import_s:.1f} s")
    os.remove(om)  # both stores hold it now; frees the disk
    return prom_import_s, gm_import_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_gpumon = os.path.join(REPO, "build", "bin", "gpumon")
    ap.add_argument("--gpumon", default=default_gpumon)
    ap.add_argument("--prometheus", default=shutil.which("prometheus") or "/usr/bin/prometheus")
    ap.add_argument("--promtool", default=shutil.which("promtool") or "/usr/bin/promtool")
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--model", default="h200")
    ap.add_argument("--duration", default="6h")
    ap.add_argument("--interval", default="15s")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--window", default="6h", help="range of the dashboard's range queries")
    ap.add_argument("--step", type=int, default=60, help="range query step, seconds")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--work-dir", help="where to put the file and the stores (default: $TMPDIR)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--reuse", metavar="DIR",
                    help="skip generating and importing: use the stores a --keep run left "
                         "in DIR (its data parameters apply)")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0:
        raise SystemExit("--runs must be >= 1, --warmup >= 0")

    if args.reuse:
        work = args.reuse
        with open(os.path.join(work, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        for key in ("nodes", "gpus", "model", "duration", "interval", "seed"):
            setattr(args, key, meta["args"][key])
        prom_import_s, gm_import_s = meta["import_s"]["promtool"], meta["import_s"]["gpumon"]
        log(f"reusing the stores in {work} ({args.nodes} nodes x {args.gpus} GPUs)")
    duration_s = parse_duration_s(args.duration)
    interval_s = parse_duration_s(args.interval)
    window_s = parse_duration_s(args.window)
    steps = duration_s // interval_s
    start_s = 1_700_028_000  # a multiple of 18 h: one block in both stores
    assert start_s % ALIGN_S == 0
    if duration_s > 6 * 3600:
        log("note: over 6 h, Prometheus's data spans more than one 6 h block")
    if not args.reuse:
        work = tempfile.mkdtemp(prefix="query_latency.", dir=args.work_dir)
    prom_dir = os.path.join(work, "prometheus")
    gm_dir = os.path.join(work, "gpumon")
    children = []
    try:
        if not args.reuse:
            prom_import_s, gm_import_s = load(args, work, start_s, steps, interval_s)
            with open(os.path.join(work, "meta.json"), "w", encoding="utf-8") as f:
                json.dump({"args": vars(args), "steps": steps,
                           "import_s": {"promtool": prom_import_s, "gpumon": gm_import_s}}, f)

        config = os.path.join(work, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            f.write("global:\n  scrape_interval: 15s\n  evaluation_interval: 1m\n")
        prom_port = bench_util.free_port()
        prom = bench_util.Child(
            [args.prometheus, f"--config.file={config}", f"--storage.tsdb.path={prom_dir}",
             f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn",
             "--storage.tsdb.retention.time=100y"], name="prometheus")
        children.append(prom)
        gm_port = bench_util.free_port()
        # Retention as Prometheus's above: the server also stores its own
        # metrics (now), and the history is years old.
        gm = bench_util.Child([args.gpumon, "server", "--data", gm_dir, "--retention", "100y",
                               "--listen", f"127.0.0.1:{gm_port}"], name="gpumon server")
        children.append(gm)
        prom.wait_http(f"http://127.0.0.1:{prom_port}/-/ready", timeout=300)
        gm.wait_http(f"http://127.0.0.1:{gm_port}/api/v1/query?query=1", timeout=300)

        # Grafana aligns range queries to the step, which puts the windows'
        # left edges on sample times, where Prometheus 2.42 (left-closed
        # ranges) and 3.x/gpumon (left-open) differ. 7 s later they never
        # coincide (for steps and ranges that are multiples of the interval),
        # so the two answers must agree; the cost is the same.
        last_s = start_s + (steps - 1) * interval_s
        end = last_s - last_s % args.step + 7
        begin = end - window_s
        servers = [("gpumon", gm, gm_port), ("prometheus", prom, prom_port)]
        rows = []
        for name, query, kind in DASHBOARD:
            if kind == "range":
                path = "/api/v1/query_range"
                params = {"query": query, "start": begin, "end": end, "step": args.step}
            else:
                path = "/api/v1/query"
                params = {"query": query, "time": end}
            shapes = {}
            for who, _, port in servers:
                _, status, body = get(port, path, params)
                if status != 200:
                    raise RuntimeError(f"{who}: {query}: HTTP {status}: {body[:500]!r}")
                shapes[who] = answer_shape(body)
            difference = agree(shapes["gpumon"], shapes["prometheus"])
            if difference:
                log(f"WARNING: answers differ for {query}: {difference}")
            size = (len(shapes["prometheus"]),
                    sum(len(p) for p in shapes["prometheus"].values()))
            for _ in range(args.warmup):
                for who, _, port in servers:
                    get(port, path, params)
            times = {who: [] for who, _, _ in servers}
            cpu = {who: 0.0 for who, _, _ in servers}
            for i in range(args.runs):
                order = servers if i % 2 == 0 else servers[::-1]
                for who, child, port in order:
                    before = bench_util.CpuSample(child.pid)
                    seconds, status, body = get(port, path, params)
                    cpu[who] += bench_util.cpu_delta(before, bench_util.CpuSample(child.pid))[1]
                    if status != 200:
                        raise RuntimeError(f"{who}: {query}: HTTP {status}")
                    times[who].append(seconds * 1000)
            row = {"name": name, "query": query, "kind": kind, "series": size[0],
                   "points": size[1], "agree": difference is None, "difference": difference}
            for who in times:
                row[who] = {"median_ms": statistics.median(times[who]),
                            "min_ms": min(times[who]), "max_ms": max(times[who]),
                            "cpu_ms_per_query": cpu[who] * 1000 / args.runs,
                            "runs_ms": times[who]}
            row["ratio"] = row["gpumon"]["median_ms"] / row["prometheus"]["median_ms"]
            rows.append(row)
            log(f"{name}: gpumon {row['gpumon']['median_ms']:.2f} ms, Prometheus "
                f"{row['prometheus']['median_ms']:.2f} ms, ratio {row['ratio']:.3f}")

        mem = {who: bench_util.memory_kib(child.pid).get("VmHWM", 0) for who, child, _ in servers}
        print_report(args, rows, steps, interval_s, window_s, mem, prom_import_s, gm_import_s)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"argv": sys.argv[1:], "machine": bench_util.machine_description(),
                           "rows": rows, "peak_rss_kib": mem,
                           "import_s": {"promtool": prom_import_s, "gpumon": gm_import_s}},
                          f, indent=2)
    finally:
        for c in children:
            c.stop()
        if args.keep or args.reuse:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def print_report(args, rows, steps, interval_s, window_s, mem, prom_import_s, gm_import_s):
    machine = bench_util.machine_description()
    print()
    print("Command: `bench/promql/query_latency.py " + " ".join(sys.argv[1:]) + "`")
    print(f"Data: {args.nodes} nodes x {args.gpus} {args.model} GPUs x {args.duration} at "
          f"{args.interval} (`gpumon simulate-export`, seed {args.seed}, {steps} steps) plus a "
          f"{len(BUCKETS)}-bucket step-time histogram per node; one block in each store "
          f"(import: promtool {prom_import_s:.1f} s, gpumon {gm_import_s:.1f} s).")
    print(f"Range queries: last {window_s // 3600} h at step {args.step} s; instant: at the "
          f"end. {args.warmup} warm-up + {args.runs} timed runs per server, alternating.")
    print(f"Machine: {machine['nproc']} x {machine['cpu_model']}, {machine['memory_gib']} GiB, "
          f"load average {', '.join(f'{x:.1f}' for x in machine['load_average'])}.")
    print(f"Server peak RSS after the runs: gpumon {mem['gpumon'] / 1024:.0f} MiB, "
          f"Prometheus {mem['prometheus'] / 1024:.0f} MiB.")
    print()
    header = ["query", "kind", "series / points", "gpumon median ms", "Prometheus median ms",
              "ratio", "gpumon CPU ms/query", "Prometheus CPU ms/query", "same answer"]
    table = []
    for r in rows:
        table.append([f"`{r['query']}`", r["kind"], f"{r['series']} / {r['points']}",
                      f"{r['gpumon']['median_ms']:.2f}", f"{r['prometheus']['median_ms']:.2f}",
                      f"**{r['ratio']:.3f}**" if r["ratio"] <= 0.5 else f"{r['ratio']:.3f}",
                      f"{r['gpumon']['cpu_ms_per_query']:.1f}",
                      f"{r['prometheus']['cpu_ms_per_query']:.1f}",
                      "yes" if r["agree"] else f"no: {r['difference']}"])
    print(bench_util.markdown_table(header, table))
    worst = max(r["ratio"] for r in rows)
    print()
    print(f"Worst ratio {worst:.3f} (target <= 0.5 for every query: "
          f"{'met' if worst <= 0.5 else 'not met'}).")


if __name__ == "__main__":
    main()
