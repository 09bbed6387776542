#!/usr/bin/env python3
"""`gpumon rules backtest` evaluates rule files over simulated history and
records every alert episode at the times the rules dictate.

1. A tiny rule file over 1 node x 2 GPUs x 30 simulated minutes (15 s
   collection, 15 s group interval): an alert that is true from the start
   with `for: 1m` must go pending at the group's first evaluation and fire
   exactly one minute later on both GPUs, with the agent's labels
   (simulated="true", hostname, the scrape's job/instance) and expanded
   annotations, still active at the end; an impossible alert must not
   appear; alerts switched off by time() must resolve at the first
   evaluation after their cut-off (one after firing, one while still
   pending). The same flags must give byte-identical output, with and
   without the builder's fast path.
2. Over 3 simulated hours a rule counting 40 minutes of samples must fire
   once and stay firing: the hourly eviction of old samples must never take
   what a rule still reads.
3. With scenarios: --ground-truth writes the simulator's ground truth with
   Unix-ms times (start + t_ms) and each event's host name and GPU index in
   its node.
4. `bench/rule_pack_score.py --quick` runs and reports every detector.
Parts 3 and 4 need the simulator's scenario support: without it the test
skips after part 2.
"""

import json
import os
import subprocess
import sys
import tempfile

from harness import Skip, check, run_test

START = 1700000000
GROUP_MS = 15000

TINY = """groups:
  - name: tiny
    interval: 15s
    rules:
      - alert: AlwaysHot
        expr: gpu_temperature_celsius > 0
        for: 1m
        labels:
          severity: info
        annotations:
          summary: "GPU {{{{ $labels.gpu }}}} at {{{{ $value }}}}"
      - alert: NeverFires
        expr: gpu_temperature_celsius > 1000
        for: 1m
      - alert: ResolvesAt10m
        expr: count(gpu_temperature_celsius) > 0 and on() vector(time()) < {resolve}
        for: 1m
      - alert: PendingUntil100s
        expr: count(gpu_temperature_celsius) > 0 and on() vector(time()) < {pending_end}
        for: 10m
""".format(resolve=START + 600, pending_end=START + 100)

WINDOW = """groups:
  - name: window
    interval: 1m
    rules:
      - alert: FortyMinutesOfSamples
        expr: count_over_time(gpu_temperature_celsius[40m]) >= 160
"""


def backtest(gpumon, args, expect_ok=True):
    argv = [gpumon, "rules", "backtest", "--start", str(START), *args]
    p = subprocess.run(argv, capture_output=True, timeout=300)
    err = p.stderr.decode(errors="replace")
    if expect_ok:
        check(p.returncode == 0, f"{' '.join(argv)} exited {p.returncode}:\n{err}")
    return p.returncode, err


def episodes(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def check_tiny(gpumon, tmp):
    rules = os.path.join(tmp, "tiny.yml")
    with open(rules, "w", encoding="utf-8") as f:
        f.write(TINY)
    out = os.path.join(tmp, "tiny.jsonl")
    common = ["--rules", rules, "--nodes", "1", "--gpus", "2", "--duration", "30m",
              "--interval", "15s"]
    _, err = backtest(gpumon, [*common, "--out", out])
    check("2 GPUs" in err and "episodes" in err, f"no summary on stderr:\n{err}")
    eps = episodes(out)
    by = {}
    for e in eps:
        for key in ("alertname", "labels", "severity", "pending_at_ms", "firing_at_ms",
                    "resolved_at_ms", "annotations"):
            check(key in e, f"episode without {key}: {e}")
        by.setdefault(e["alertname"], []).append(e)
    check("NeverFires" not in by, f"an impossible alert was recorded: {by.get('NeverFires')}")

    hot = by.get("AlwaysHot", [])
    check(len(hot) == 2, f"want one AlwaysHot episode per GPU, got {hot}")
    first_eval = hot[0]["pending_at_ms"]
    check(START * 1000 <= first_eval < START * 1000 + GROUP_MS,
          f"first evaluation {first_eval} is not within one group interval of the start")
    check(sorted(e["labels"]["gpu"] for e in hot) == ["0", "1"], f"GPUs: {hot}")
    for e in hot:
        labels = e["labels"]
        check(e["pending_at_ms"] == first_eval, f"pending_at differs: {e}")
        check(e["firing_at_ms"] == first_eval + 60000,
              f"`for: 1m` must fire exactly one minute after pending: {e}")
        check(e["resolved_at_ms"] is None, f"still true at the end, must not resolve: {e}")
        check(e["severity"] == "info" and labels.get("severity") == "info", f"severity: {e}")
        check(labels.get("alertname") == "AlwaysHot", f"alertname label: {labels}")
        check(labels.get("simulated") == "true", f"simulated label missing: {labels}")
        check(labels.get("hostname") == "sim-node-0000", f"hostname: {labels}")
        check(labels.get("instance") == "sim-node-0000:9400" and labels.get("job") == "gpu",
              f"scrape labels: {labels}")
        check(labels.get("uuid", "").startswith("GPU-"), f"uuid: {labels}")
        summary = e["annotations"].get("summary", "")
        check(summary.startswith(f"GPU {labels['gpu']} at ") and summary.split()[-1].isdigit(),
              f"annotation not expanded at first firing: {e['annotations']}")

    res = by.get("ResolvesAt10m", [])
    check(len(res) == 1, f"want one ResolvesAt10m episode, got {res}")
    r = res[0]
    check(r["pending_at_ms"] == first_eval and r["firing_at_ms"] == first_eval + 60000,
          f"ResolvesAt10m pending/firing: {r}")
    cut = (START + 600) * 1000
    check(r["resolved_at_ms"] is not None and cut <= r["resolved_at_ms"] < cut + GROUP_MS and
          (r["resolved_at_ms"] - first_eval) % GROUP_MS == 0,
          f"must resolve at the first evaluation at or after {cut}: {r}")

    pend = by.get("PendingUntil100s", [])
    check(len(pend) == 1, f"want one PendingUntil100s episode, got {pend}")
    p = pend[0]
    cut = (START + 100) * 1000
    check(p["firing_at_ms"] is None and p["annotations"] == {},
          f"an alert dropped while pending must have no firing time: {p}")
    check(p["resolved_at_ms"] is not None and cut <= p["resolved_at_ms"] < cut + GROUP_MS,
          f"pending episode must end at the first evaluation at or after {cut}: {p}")

    with open(out, "rb") as f:
        first = f.read()
    again = os.path.join(tmp, "again.jsonl")
    backtest(gpumon, [*common, "--out", again])
    with open(again, "rb") as f:
        check(f.read() == first, "two runs with the same flags differ")
    full = os.path.join(tmp, "full.jsonl")
    _, err = backtest(gpumon, [*common, "--out", full, "--full-builds"])
    with open(full, "rb") as f:
        check(f.read() == first, "--full-builds changed the output")
    check(" 0 fast" in err, f"--full-builds still took the fast path:\n{err}")


def check_eviction(gpumon, tmp):
    rules = os.path.join(tmp, "window.yml")
    with open(rules, "w", encoding="utf-8") as f:
        f.write(WINDOW)
    out = os.path.join(tmp, "window.jsonl")
    backtest(gpumon, ["--rules", rules, "--nodes", "1", "--gpus", "2", "--duration", "3h",
                      "--out", out])
    eps = episodes(out)
    check(len(eps) == 2, f"want one episode per GPU over 3 h (no gaps), got {len(eps)}: {eps}")
    for e in eps:
        check(e["resolved_at_ms"] is None,
              f"the 40-minute window lost samples (evicted too early?): {e}")
        offset = e["firing_at_ms"] - START * 1000
        check(39 * 60000 <= offset <= 41 * 60000,
              f"fires when 40 minutes of samples exist, not at +{offset / 60000:.1f} min: {e}")


def check_ground_truth(gpumon, tmp):
    rules = os.path.join(tmp, "tiny.yml")
    truth = os.path.join(tmp, "truth.json")
    rc, err = backtest(gpumon, ["--rules", rules, "--nodes", "2", "--gpus", "2",
                                "--duration", "30m", "--scenario", "training",
                                "--scenario", "thermal-runaway:gpu=3:start=5m",
                                "--out", os.path.join(tmp, "gt.jsonl"), "--ground-truth", truth],
                       expect_ok=False)
    if rc != 0 and "no scenario support" in err:
        return False
    check(rc == 0, f"backtest with scenarios exited {rc}:\n{err}")
    with open(truth, encoding="utf-8") as f:
        gt = json.load(f)
    check(gt.get("format") == "gpumon-ground-truth/1", f"format: {gt.get('format')}")
    check(gt.get("start_unix_ms") == START * 1000, f"start_unix_ms: {gt.get('start_unix_ms')}")
    names = [s.get("name") for s in gt.get("scenarios", [])]
    check("thermal-runaway" in names, f"scenarios: {names}")
    events = gt.get("events", [])
    check(any(e.get("event") == "degradation_start" for e in events), f"events: {events}")
    for e in events:
        if "t_ms" in e:
            check(e.get("t_unix_ms") == START * 1000 + e["t_ms"], f"t_unix_ms wrong: {e}")
        if e.get("gpu") == 3:
            check(e.get("hostname") == "sim-node-0001" and e.get("node_gpu") == 1,
                  f"fleet GPU 3 is GPU 1 of the second node: {e}")
    degr = [e for e in events if e.get("event") == "degradation_start"]
    check(degr and degr[0]["t_unix_ms"] == START * 1000 + 300000,
          f"degradation must start at start=5m: {degr}")
    return True


def check_bench(args, tmp):
    script = os.path.join(args.source_dir, "bench", "rule_pack_score.py")
    work = os.path.join(tmp, "bench")
    out_json = os.path.join(tmp, "score.json")
    argv = [sys.executable, "-B", script, "--quick", "--gpumon", args.gpumon, "--work", work,
            "--json-out", out_json]
    p = subprocess.run(argv, capture_output=True, timeout=600)
    text = p.stdout.decode(errors="replace")
    check(p.returncode == 0,
          f"{' '.join(argv)} exited {p.returncode}:\n{text}\n{p.stderr.decode(errors='replace')}")
    check("| detector | runs | recall |" in text and "Command:" in text,
          f"no table or command in the output:\n{text}")
    with open(out_json, encoding="utf-8") as f:
        doc = json.load(f)
    check(doc.get("format") == "gpumon-rule-pack-score/1", f"format: {doc.get('format')}")
    dets = {d["detector"]: d for d in doc["detectors"]}
    for name in ("pack: predicted", "pack: thermal", "baseline: HBM > 85 °C for 5m",
                 "baseline: die > 80 °C for 5m (dcgm-exporter)"):
        check(name in dets, f"detector {name!r} missing: {sorted(dets)}")
    runs = doc["runaway_runs"]
    check(len(runs) == 4, f"--quick runs 4 thermal-runaway runs, got {len(runs)}")
    for d in dets.values():
        for key in ("runs", "detected", "recall", "lead_p50_min", "lead_p5_min", "false_alerts",
                    "false_alerts_per_1000_gpu_days", "healthy_gpu_days"):
            check(key in d, f"{d['detector']}: no {key}")
        check(d["runs"] == 4 - len(doc["runs_without_slowdown"]), f"runs of {d}")
        check(d["recall"] is None or 0 <= d["recall"] <= 1, f"recall of {d}")
        check(d["healthy_gpu_days"] > 0, f"healthy exposure of {d}")
        if d["detected"]:
            check(d["lead_p5_min"] <= d["lead_p50_min"], f"p5 above median: {d}")
    for r in runs:
        check(r["degradation_start_ms"] == START * 1000 + r["start_min"] * 60000,
              f"the runaway must start when asked: {r}")
        if r["first_thermal_slowdown_ms"] is not None:
            check(r["first_thermal_slowdown_ms"] > r["degradation_start_ms"],
                  f"slowdown before the degradation began: {r}")
    check(doc["simulated_gpu_days"] > 0 and doc["fleet"], f"fleet: {doc.get('fleet')}")


def body(args):
    with tempfile.TemporaryDirectory(prefix="gpumon-backtest-") as tmp:
        check_tiny(args.gpumon, tmp)
        check_eviction(args.gpumon, tmp)
        if not check_ground_truth(args.gpumon, tmp):
            raise Skip("the simulator has no scenario support (gpumonSimGroundTruth)")
        check_bench(args, tmp)


if __name__ == "__main__":
    run_test(body)
