#!/usr/bin/env python3
"""Scores the GPU rule pack against the simulator's ground truth, side by side
with the fixed-threshold rules people run today.

Every run is one `gpumon rules backtest` process (the fake NVML on a virtual
clock -> the agent's collectors -> an in-memory TSDB -> the rule groups on
their own intervals; see docs/rules-tool.md), loaded with every rule file under
test at once, so all detectors see the same simulated history:

  (a) thermal-runaway runs: --runs of them (seeds 1..N), each one node of 8
      H200 running `training`, one GPU chosen by the seed whose cooling starts
      degrading at a seed-chosen time between 15 and 45 minutes in
      (`thermal-runaway:gpu=G:start=S`), for --runaway-duration (3h: long
      enough for the GPU to reach thermal slowdown);
  (b) a normal fleet: --fleet-gpu-days GPU-days of faultless H200 nodes over
      one simulated day, split into processes of at most
      --fleet-nodes-per-process nodes that cycle through `training`,
      `inference` and the simulator's default workload mix.

Rule files: the pack (rules/gpumon-*.rules.yml, the DCGM-named variant left
out) and the baselines (bench/baseline-rules/*.rules.yml); --pack/--baseline
replace them (e.g. --pack rules/gpumon-forecast.rules.yml --pack
rules/gpumon-thermal.rules.yml scores the thermal alerts about 4x faster: they
read nothing the other files record). gpumon and the rule files are copied
into --work first, so a rebuild or an edit during the run cannot mix versions. A detector is a named set of alert names:
  pack: predicted          GpuMemoryTemperatureSlowdownPredicted, GpuTemperatureSlowdownPredicted
  pack: thermal            those plus the pack's other thermal alerts (names with
                           Temperature/Thermal/Cooling/Hotter; info-only alerts left out)
  one per baseline alert   e.g. "HBM > 85 °C for 5m"
plus a row per alert of the pack's thermal set.

Scoring, per detector:
  recall      runaway GPUs on which the detector fired (an episode's firing_at)
              at or after the GPU's degradation_start and before its
              first_thermal_slowdown (ground truth), over the runs whose GPU
              reached thermal slowdown (runs that did not are reported apart)
  lead time   first_thermal_slowdown - first such firing_at, minutes: median and
              5th percentile (linear interpolation) over the detected runs
  false alerts per 1,000 GPU-days
              episodes that fired on a GPU without a fault in the ground truth
              (every fleet GPU, the other GPUs of a runaway run) or on the
              runaway GPU before its degradation_start, per 1,000 GPU-days of
              that healthy exposure. Alerts without a GPU identity (no
              gpu/uuid label) count on fleet nodes and are listed apart in
              runaway runs.
Targets (issue 10): recall >= 95 %, 5th-percentile lead >= 10 min, <= 1 false
alert per 1,000 GPU-days.

usage: rule_pack_score.py [--gpumon build/bin/gpumon] [--runs 100]
                          [--fleet-gpu-days 1000] [--jobs 2] [--work DIR]
                          [--json-out FILE] [--quick] [--pack FILE ...]
                          [--baseline FILE ...]
Prints a markdown table and the command; --json-out writes every number and
every run. Runs are deterministic: the same flags give the same table. The full
run (1,100 simulated GPU-days) takes about 40 minutes on 2 cores with --jobs 2;
--quick about 10 seconds.
"""

import argparse
import concurrent.futures
import glob
import json
import math
import os
import random
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# Keep the source tree free of __pycache__ when importing bench_util.
sys.dont_write_bytecode = True

from bench_util import machine_description, markdown_table  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START = 1700000000  # --start of every backtest (Unix seconds)
GPUS_PER_NODE = 8
PREDICTED = ["GpuMemoryTemperatureSlowdownPredicted", "GpuTemperatureSlowdownPredicted"]
THERMAL_NAME = re.compile(r"Temperature|Thermal|Cooling|Hotter")
WORKLOADS = ["training", "inference", ""]  # "" = the simulator's default mix
FAULTLESS = {"training", "inference"}
# Display names of the baselines' alerts.
BASELINE_NAMES = {
    "BaselineHbmTemperatureAbove85": "baseline: HBM > 85 °C for 5m",
    "BaselineGpuTemperatureAbove80": "baseline: die > 80 °C for 5m (dcgm-exporter)",
    "BaselineGpuTemperatureAbove85": "baseline: die > 85 °C for 1m (dcgm-exporter)",
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpumon", default=os.path.join(REPO, "build", "bin", "gpumon"))
    p.add_argument("--runs", type=int, default=100, help="thermal-runaway runs (seeds 1..N)")
    p.add_argument("--runaway-duration", default="3h")
    p.add_argument("--fleet-gpu-days", type=float, default=1000)
    p.add_argument("--fleet-duration", default="24h")
    p.add_argument("--fleet-nodes-per-process", type=int, default=16)
    p.add_argument("--jobs", type=int, default=2, help="backtest processes at a time")
    p.add_argument("--work", help="directory for the runs' outputs (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the temporary --work directory")
    p.add_argument("--json-out", help="write the results as JSON here")
    p.add_argument("--quick", action="store_true",
                   help="smoke configuration: 4 short runaway runs, 2 small fleet processes")
    p.add_argument("--pack", action="append", help="a pack rule file (repeatable)")
    p.add_argument("--baseline", action="append", help="a baseline rule file (repeatable)")
    args = p.parse_args(argv)
    if args.quick:
        args.runs = min(args.runs, 4)
        args.runaway_duration = "90m"
        args.fleet_duration = "2h"
        args.fleet_gpu_days = min(args.fleet_gpu_days, 2 * 2 * GPUS_PER_NODE * 2 / 24)
        args.fleet_nodes_per_process = min(args.fleet_nodes_per_process, 2)
    if args.pack is None:
        args.pack = sorted(f for f in glob.glob(os.path.join(REPO, "rules", "gpumon-*.rules.yml"))
                           if "dcgm" not in os.path.basename(f))
    if args.baseline is None:
        args.baseline = sorted(glob.glob(os.path.join(REPO, "bench", "baseline-rules",
                                                      "*.rules.yml")))
    return args


def duration_ms(text):
    units = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000, "d": 86400000}
    total, pos = 0, 0
    for m in re.finditer(r"(\d+)(ms|s|m|h|d)", text):
        if m.start() != pos:
            break
        total += int(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        raise ValueError(f"bad duration {text!r}")
    return total


def alerts_in(path):
    """[(alertname, severity)] of a rule file, read line by line (the rule
    files are YAML in the usual layout: `- alert: X` ... `severity: Y`)."""
    out = []
    current = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*-\s+(alert|record):\s*(\S+)", line)
            if m:
                current = [m.group(2), ""] if m.group(1) == "alert" else None
                if current:
                    out.append(current)
                continue
            m = re.match(r"\s+severity:\s*[\"']?(\w+)", line)
            if m and current is not None and not current[1]:
                current[1] = m.group(1)
    return [tuple(a) for a in out]


def detectors(pack_files, baseline_files):
    """[(name, set of alertnames, is_summary)] in table order."""
    severities = {}
    for f in pack_files:
        for name, sev in alerts_in(f):
            severities.setdefault(name, set()).add(sev)
    thermal = [n for n in severities
               if THERMAL_NAME.search(n) and severities[n] != {"info"}]
    thermal = sorted(set(thermal) | set(PREDICTED), key=lambda n: (n not in PREDICTED, n))
    out = [("pack: predicted", set(PREDICTED), True),
           ("pack: thermal", set(thermal), True)]
    for f in baseline_files:
        for name, _ in alerts_in(f):
            out.append((BASELINE_NAMES.get(name, "baseline: " + name), {name}, True))
    for name in thermal:
        out.append(("  " + name, {name}, False))
    return out


def backtest_argv(gpumon, rule_files, out, truth, nodes, duration, seed, scenarios):
    argv = [gpumon, "rules", "backtest", "--nodes", str(nodes), "--gpus", str(GPUS_PER_NODE),
            "--model", "h200", "--duration", duration, "--interval", "15s",
            "--start", str(START), "--seed", str(seed), "--out", out, "--ground-truth", truth]
    for s in scenarios:
        argv += ["--scenario", s]
    for f in rule_files:
        argv += ["--rules", f]
    return argv


def plan(args, work):
    """The backtest processes: runaway runs and fleet chunks."""
    tasks = []
    runaway_ms = duration_ms(args.runaway_duration)
    for seed in range(1, args.runs + 1):
        r = random.Random(f"thermal-runaway-{seed}")
        gpu = r.randrange(GPUS_PER_NODE)
        start_min = r.randint(15, 45)
        if start_min * 60000 >= runaway_ms:
            start_min = max(1, runaway_ms // 120000)
        name = f"runaway-{seed:03d}"
        tasks.append({
            "kind": "runaway", "name": name, "seed": seed, "gpu": gpu, "start_min": start_min,
            "nodes": 1, "duration": args.runaway_duration,
            "scenarios": ["training", f"thermal-runaway:gpu={gpu}:start={start_min}m"],
        })
    fleet_days = duration_ms(args.fleet_duration) / 86400000
    total_nodes = math.ceil(args.fleet_gpu_days / (GPUS_PER_NODE * fleet_days) - 1e-9)
    if total_nodes > 0:
        chunks = math.ceil(total_nodes / args.fleet_nodes_per_process)
        for i in range(chunks):
            nodes = total_nodes // chunks + (1 if i < total_nodes % chunks else 0)
            workload = WORKLOADS[i % len(WORKLOADS)]
            tasks.append({
                "kind": "fleet", "name": f"fleet-{i:02d}", "seed": 1001 + i, "nodes": nodes,
                "duration": args.fleet_duration, "workload": workload or "default mix",
                "scenarios": [workload] if workload else [],
            })
    for t in tasks:
        t["out"] = os.path.join(work, t["name"] + ".jsonl")
        t["truth"] = os.path.join(work, t["name"] + ".truth.json")
        t["gpu_days"] = t["nodes"] * GPUS_PER_NODE * duration_ms(t["duration"]) / 86400000
    return tasks


def snapshot(args, work):
    """Copies gpumon (with the simulator's library beside it) and the rule files
    into work/snapshot, so that a rebuild or an edited rule file during a long
    run cannot mix versions. Rule files get repository-like relative names
    (rules/X, bench/baseline-rules/X): the backtest runs in the snapshot
    directory, and a group's evaluation phase (a hash of its file name and
    group name) is then the same as for a run from the repository root.
    Returns (gpumon, relative rule files, snapshot dir, pack copies, baseline copies)."""
    snap = os.path.join(work, "snapshot")
    shutil.rmtree(snap, ignore_errors=True)
    os.makedirs(os.path.join(snap, "bin"))
    gpumon = os.path.join(snap, "bin", "gpumon")
    shutil.copy2(args.gpumon, gpumon)
    lib = os.path.join(os.path.dirname(os.path.abspath(args.gpumon)), "libgpumon-fake-nvml.so")
    if os.path.exists(lib):
        shutil.copy2(lib, os.path.join(snap, "bin"))
    rel, copies = [], {"pack": [], "baseline": []}
    baseline_folder = os.path.join("bench", "baseline-rules")
    for kind, files, folder in (("pack", args.pack, "rules"),
                                ("baseline", args.baseline, baseline_folder)):
        os.makedirs(os.path.join(snap, folder), exist_ok=True)
        for f in files:
            name = os.path.join(folder, os.path.basename(f))
            if name in rel:
                sys.exit(f"rule_pack_score: two rule files named {os.path.basename(f)}")
            shutil.copy2(f, os.path.join(snap, name))
            rel.append(name)
            copies[kind].append(os.path.join(snap, name))
    return gpumon, rel, snap, copies["pack"], copies["baseline"]


def run_task(gpumon, rule_files, cwd, task):
    argv = backtest_argv(gpumon, rule_files, task["out"], task["truth"], task["nodes"],
                         task["duration"], task["seed"], task["scenarios"])
    t0 = time.monotonic()
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=6 * 3600, cwd=cwd)
    task["wall_s"] = time.monotonic() - t0
    task["stderr"] = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {p.returncode}:\n{task['stderr'][-3000:]}")
    return task


def run_all(args, gpumon, rule_files, cwd, tasks):
    # Longest first, so the last process to finish is a short one.
    order = sorted(tasks, key=lambda t: -t["gpu_days"])
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_task, gpumon, rule_files, cwd, t) for t in order]
        try:
            for f in concurrent.futures.as_completed(futures):
                f.result()
                done += 1
                if sys.stderr.isatty():
                    print(f"\r{done}/{len(tasks)} backtests done", end="", file=sys.stderr)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    if sys.stderr.isatty():
        print(file=sys.stderr)


def load_episodes(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def gpu_key(labels, uuid_to_key):
    """(hostname, gpu index in node) of an alert, or None without a GPU identity."""
    host = labels.get("hostname") or labels.get("Hostname")
    if not host and labels.get("instance"):
        host = labels["instance"].rsplit(":", 1)[0]
    if host and "gpu" in labels:
        return (host, int(labels["gpu"]))
    uuid = labels.get("uuid") or labels.get("UUID")
    if uuid:
        return uuid_to_key.get(uuid, ("uuid", uuid))
    return None


def truth_of(task):
    with open(task["truth"], encoding="utf-8") as f:
        gt = json.load(f)
    node_size = gt.get("node_size") or gt.get("gpus_per_node") or GPUS_PER_NODE
    start_ms = gt.get("start_unix_ms", START * 1000)
    faults = {}  # (host, gpu) -> {"scenario", "events": {name: first t_unix_ms}}
    for s in gt.get("scenarios", []):
        if s.get("name") in FAULTLESS:
            continue
        for g in s.get("gpus", []):
            key = (f"sim-node-{g // node_size:04d}", g % node_size)
            faults.setdefault(key, {"scenario": s.get("name"), "events": {},
                                    "start": start_ms + s.get("start_ms", 0)})
    uuid_to_key = {}
    for e in gt.get("events", []):
        g = e.get("gpu")
        if g is None:
            continue
        key = (f"sim-node-{g // node_size:04d}", g % node_size)
        if e.get("uuid"):
            uuid_to_key[e["uuid"]] = key
        if key in faults:
            t = e.get("t_unix_ms", start_ms + e.get("t_ms", 0))
            faults[key]["events"].setdefault(e.get("event"), t)
    return gt, faults, uuid_to_key


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    pos = p / 100 * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def score(tasks, dets):
    per = {name: {"alertnames": sorted(names), "summary": summary, "runs": 0, "detected": 0,
                  "leads_min": [], "false_alerts": 0, "unattributed": 0, "late": 0}
           for name, names, summary in dets}
    healthy_ms = 0
    runs = []
    no_slowdown = []
    for task in tasks:
        gt, faults, uuid_to_key = truth_of(task)
        episodes = load_episodes(task["out"])
        duration = duration_ms(task["duration"])
        run = None
        if task["kind"] == "runaway":
            key = (f"sim-node-{0:04d}", task["gpu"])
            fault = faults.get(key, {"events": {}, "start": None})
            degr = fault["events"].get("degradation_start", fault["start"])
            slow = fault["events"].get("first_thermal_slowdown")
            run = {"seed": task["seed"], "gpu": task["gpu"], "start_min": task["start_min"],
                   "degradation_start_ms": degr, "first_thermal_slowdown_ms": slow,
                   "first_memory_slowdown_ms": fault["events"].get("first_memory_slowdown"),
                   "detections": {}}
            healthy_ms += (task["nodes"] * GPUS_PER_NODE - len(faults)) * duration
            if degr is not None:
                healthy_ms += degr - START * 1000
            if slow is None:
                no_slowdown.append(task["seed"])
            runs.append(run)
        else:
            healthy_ms += (task["nodes"] * GPUS_PER_NODE - len(faults)) * duration
        for name, names, _ in dets:
            d = per[name]
            first_detect = None
            for e in episodes:
                if e["alertname"] not in names or e.get("firing_at_ms") is None:
                    continue
                fired = e["firing_at_ms"]
                key = gpu_key(e.get("labels", {}), uuid_to_key)
                if key is None:
                    if faults:
                        d["unattributed"] += 1
                    else:
                        d["false_alerts"] += 1
                    continue
                if key not in faults:
                    d["false_alerts"] += 1
                    continue
                fault = faults[key]
                degr = fault["events"].get("degradation_start", fault["start"])
                slow = fault["events"].get("first_thermal_slowdown")
                if degr is not None and fired < degr:
                    d["false_alerts"] += 1
                elif slow is not None and fired < slow:
                    first_detect = fired if first_detect is None else min(first_detect, fired)
                else:
                    d["late"] += 1
            if run is not None:
                slow = run["first_thermal_slowdown_ms"]
                if slow is not None:
                    d["runs"] += 1
                    if first_detect is not None:
                        d["detected"] += 1
                        lead = (slow - first_detect) / 60000
                        d["leads_min"].append(lead)
                        run["detections"][name.strip()] = round(lead, 2)
                    else:
                        run["detections"][name.strip()] = None
    gpu_days = healthy_ms / 86400000
    results = []
    for name, _, summary in dets:
        d = per[name]
        recall = d["detected"] / d["runs"] if d["runs"] else None
        false_rate = d["false_alerts"] / gpu_days * 1000 if gpu_days > 0 else None
        results.append({
            "detector": name.strip(), "alertnames": d["alertnames"], "summary": summary,
            "runs": d["runs"], "detected": d["detected"], "recall": recall,
            "lead_p50_min": percentile(d["leads_min"], 50),
            "lead_p5_min": percentile(d["leads_min"], 5),
            "false_alerts": d["false_alerts"], "false_alerts_per_1000_gpu_days": false_rate,
            "healthy_gpu_days": gpu_days, "unattributed_alerts": d["unattributed"],
            "fired_after_slowdown": d["late"],
            "meets_targets": (recall is not None and recall >= 0.95 and
                              (percentile(d["leads_min"], 5) or 0) >= 10 and
                              false_rate is not None and false_rate <= 1),
        })
    return results, runs, no_slowdown


def fmt(v, spec, suffix=""):
    return "—" if v is None else format(v, spec) + suffix


def table(results):
    rows = []
    for r in results:
        name = r["detector"] if r["summary"] else "  ↳ " + r["detector"]
        rows.append([name, r["runs"], fmt(None if r["recall"] is None else 100 * r["recall"],
                                          ".1f", " %"),
                     fmt(r["lead_p50_min"], ".1f"), fmt(r["lead_p5_min"], ".1f"),
                     f"{fmt(r['false_alerts_per_1000_gpu_days'], '.2f')} ({r['false_alerts']})",
                     f"{r['healthy_gpu_days']:.1f}"])
    return markdown_table(["detector", "runs", "recall", "lead p50 (min)", "lead p5 (min)",
                           "false alerts / 1000 GPU-days (count)", "GPU-days"], rows)


def main():
    args = parse_args()
    command = "python3 bench/rule_pack_score.py " + shlex.join(sys.argv[1:])
    if not os.access(args.gpumon, os.X_OK):
        sys.exit(f"rule_pack_score: {args.gpumon} is not an executable (build gpumon first)")
    missing = [f for f in args.pack + args.baseline if not os.path.exists(f)]
    if missing or not args.pack:
        sys.exit(f"rule_pack_score: rule files missing: {missing or 'no pack files'}")
    temp = args.work is None
    work = tempfile.mkdtemp(prefix="rule-pack-score-") if temp else os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    try:
        gpumon, rule_files, snap, pack_copies, baseline_copies = snapshot(args, work)
        tasks = plan(args, work)
        t0 = time.monotonic()
        run_all(args, gpumon, rule_files, snap, tasks)
        wall = time.monotonic() - t0
        dets = detectors(pack_copies, baseline_copies)
        results, runs, no_slowdown = score(tasks, dets)
    finally:
        if temp and not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    max_rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    sim_days = sum(t["gpu_days"] for t in tasks)
    proc_wall = sum(t["wall_s"] for t in tasks)
    speed = sim_days / proc_wall if proc_wall > 0 else None
    fleet = [t for t in tasks if t["kind"] == "fleet"]
    print("## Rule pack score: thermal runaway vs. a healthy fleet\n")
    print(f"{args.runs} thermal-runaway runs (1 node x {GPUS_PER_NODE} H200, training, "
          f"{args.runaway_duration} each) and {sum(t['gpu_days'] for t in fleet):.0f} GPU-days of "
          f"faultless fleet ({len(fleet)} processes, training / inference / default mix); "
          f"GPU-days = healthy exposure.\n")
    print(table(results))
    print()
    if no_slowdown:
        print(f"Runs whose GPU never reached thermal slowdown (left out of recall): "
              f"seeds {no_slowdown}\n")
    print(f"Simulated {sim_days:.1f} GPU-days in {wall:.0f} s wall with {args.jobs} processes at "
          f"a time ({speed:.2f} GPU-days/s per process; largest backtest process "
          f"{max_rss_mib:.0f} MiB).\n")
    print("Command:\n")
    print(f"    {command}")
    if args.json_out:
        doc = {
            "format": "gpumon-rule-pack-score/1",
            "command": command,
            "config": {"runs": args.runs, "runaway_duration": args.runaway_duration,
                       "fleet_gpu_days": args.fleet_gpu_days,
                       "fleet_duration": args.fleet_duration,
                       "fleet_nodes_per_process": args.fleet_nodes_per_process,
                       "jobs": args.jobs, "quick": args.quick, "start_unix": START,
                       "pack": [os.path.relpath(f, REPO) for f in args.pack],
                       "baselines": [os.path.relpath(f, REPO) for f in args.baseline]},
            "machine": machine_description(),
            "wall_seconds": wall,
            "simulated_gpu_days": sim_days,
            "gpu_days_per_second_per_process": speed,
            "max_backtest_rss_mib": max_rss_mib,
            "detectors": results,
            "runaway_runs": runs,
            "runs_without_slowdown": no_slowdown,
            "fleet": [{"name": t["name"], "seed": t["seed"], "nodes": t["nodes"],
                       "workload": t["workload"], "gpu_days": t["gpu_days"],
                       "wall_s": t["wall_s"]} for t in fleet],
        }
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
