#!/usr/bin/env python3
"""Simulator scenarios end to end, checked against their ground truth.

1. `gpumon simulate-export --scenario thermal-runaway:... --ground-truth F`
   over an hour: in the exported data the HBM temperature of the degrading
   GPU climbs to its limit while its neighbours stay cool, and its
   sw_thermal_slowdown clock event reason first reads 1 at the time the
   ground truth says (within one interval). The ground truth has the phases
   in order (degradation, memory slowdown, thermal slowdown, hardware
   slowdown, XID), its t_unix_ms on the export's time axis, and the XID
   counter rises at the XID's time. The same flags give the same ground
   truth; another seed another one.
2. A bad scenario fails before anything runs, quoting the item.
3. `gpumon agent --simulate --speed 60 --scenario fall-off-bus:...
   --ground-truth F`: a minute of simulated time passes in about a second,
   the GPU is reported lost, and the periodically rewritten ground truth
   says when, in wall-clock time.
"""

import json
import os
import re
import subprocess
import tempfile
import time

from harness import Agent, check, parse_exposition, run_test, series, wait_until

START = 1700000000  # seconds
INTERVAL = 15
GPU = "2"
SCENARIO = f"thermal-runaway:gpu={GPU}:start=5m:time=20m"
HBM_LIMIT_FALLBACK = 95.0  # H200's memory max operating temperature

_LINE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+) (\S+)$")
_LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def export(gpumon, out, truth, seed, extra=()):
    argv = [gpumon, "simulate-export", "--out", out, "--nodes", "1", "--gpus", "4",
            "--duration", "1h", "--interval", f"{INTERVAL}s", "--start", str(START),
            "--seed", str(seed), "--scenario", SCENARIO, "--scenario", "training",
            "--ground-truth", truth, *extra]
    p = subprocess.run(argv, capture_output=True, timeout=100)
    check(p.returncode == 0,
          f"{' '.join(argv)} exited {p.returncode}:\n{p.stderr.decode(errors='replace')}")
    with open(truth, encoding="utf-8") as f:
        return json.load(f)


def read_series(path, names):
    """{(name, frozenset(labels)): [(t_seconds, value)]} for the given names."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = _LINE_RE.match(line.rstrip("\n"))
            if not m or m.group(1) not in names:
                continue
            labels = dict(_LABEL_RE.findall(m.group(2) or ""))
            key = (m.group(1), frozenset(labels.items()))
            out.setdefault(key, []).append((float(m.group(4)), float(m.group(3))))
    return out


def pick(data, name, **want):
    hits = [pts for (n, labels), pts in data.items()
            if n == name and all((k, v) in labels for k, v in want.items())]
    check(len(hits) == 1, f"expected one {name}{want} series, found {len(hits)}")
    return hits[0]


def export_checks(args, tmp):
    out, truth_path = os.path.join(tmp, "run.om"), os.path.join(tmp, "truth.json")
    truth = export(args.gpumon, out, truth_path, seed=3)
    check(truth.get("format") == "gpumon-ground-truth/1", f"format {truth.get('format')}")
    check([s["text"] for s in truth["scenarios"]] == [SCENARIO, "training"],
          f"scenarios {truth['scenarios']}")
    check(truth["t0_unix_ms"] == START * 1000, f"t0_unix_ms {truth['t0_unix_ms']}")
    for e in truth["events"]:
        check(e["t_unix_ms"] == START * 1000 + e["t_ms"], f"t_unix_ms off the export's axis: {e}")
    first = {}
    for e in truth["events"]:
        if e["gpu"] == int(GPU):
            first.setdefault(e["event"], e)
    order = ["degradation_start", "first_memory_slowdown", "first_thermal_slowdown",
             "first_hw_slowdown", "first_xid"]
    for name in order:
        check(name in first, f"ground truth lacks {name} on GPU {GPU}: {sorted(first)}")
        check(first[name].get("scenario") == "thermal-runaway", f"{name} not attributed: "
              f"{first[name]}")
    times = [first[n]["t_ms"] for n in order]
    check(times == sorted(times) and times[0] < times[2] < times[3] < times[4],
          f"phases out of order: {dict(zip(order, times))}")
    check(first["degradation_start"]["t_ms"] == 5 * 60 * 1000, f"{first['degradation_start']}")
    # time=20m: the HBM reaches its limit some 20 minutes after the start.
    reach = (first["first_memory_slowdown"]["t_ms"] - 5 * 60 * 1000) / 60000
    check(15 <= reach <= 35, f"HBM reached its limit {reach:.1f} min after the start")
    others = {e["gpu"] for e in truth["events"] if e["event"].startswith("first_")} - {int(GPU)}
    check(not others, f"healthy GPUs {others} have slowdown or XID events")

    data = read_series(out, {"gpu_memory_temperature_celsius", "gpu_clock_event_reason_active",
                             "gpu_xid_errors_total",
                             "gpu_memory_max_operating_temperature_celsius"})
    limits = [pts for (n, labels), pts in data.items()
              if n == "gpu_memory_max_operating_temperature_celsius" and ("gpu", GPU) in labels]
    limit = limits[0][0][1] if limits else HBM_LIMIT_FALLBACK
    hbm = pick(data, "gpu_memory_temperature_celsius", gpu=GPU)
    check(max(v for _, v in hbm) >= limit, f"HBM peaked at {max(v for _, v in hbm)}, limit {limit}")
    start_s = START + 5 * 60
    check(all(v < limit - 30 for t, v in hbm if t <= start_s),
          "HBM already hot before the degradation began")
    # It climbs: each 10-minute window's peak beats the previous one until the limit.
    peaks = [max(v for t, v in hbm if start_s + w * 600 <= t < start_s + (w + 1) * 600)
             for w in range(3)]
    check(peaks[0] < peaks[1] < peaks[2], f"HBM did not climb: 10-minute peaks {peaks}")
    for g in ("0", "1", "3"):
        peak = max(v for _, v in pick(data, "gpu_memory_temperature_celsius", gpu=g))
        check(peak < limit - 20, f"healthy GPU {g}'s HBM reached {peak}")

    sw = pick(data, "gpu_clock_event_reason_active", gpu=GPU, reason="sw_thermal_slowdown")
    first_one = next((t for t, v in sw if v == 1), None)
    check(first_one is not None, "sw_thermal_slowdown never became 1")
    truth_s = first["first_thermal_slowdown"]["t_unix_ms"] / 1000
    check(abs(first_one - truth_s) <= INTERVAL,
          f"sw_thermal_slowdown first 1 at {first_one}, ground truth says {truth_s}")
    check(all(v == 0 for t, v in sw if t < truth_s), "sw_thermal_slowdown set before the truth")
    hbm_at = [v for t, v in hbm if truth_s <= t <= truth_s + INTERVAL]
    check(hbm_at and hbm_at[0] >= limit - 1, f"HBM {hbm_at} at the memory slowdown, limit {limit}")

    xid = pick(data, "gpu_xid_errors_total", gpu=GPU, xid="48")
    xid_s = first["first_xid"]["t_unix_ms"] / 1000
    check(xid[0][0] >= xid_s and xid[0][0] - xid_s <= INTERVAL and xid[0][1] == 1,
          f"XID 48 counted from {xid[0]}, ground truth says {xid_s}")

    again = export(args.gpumon, os.path.join(tmp, "again.om"), os.path.join(tmp, "again.json"), 3)
    check(again == truth, "the same flags gave a different ground truth")
    other = export(args.gpumon, os.path.join(tmp, "other.om"), os.path.join(tmp, "other.json"), 4)
    check(other["events"] != truth["events"], "seeds 3 and 4 gave the same ground truth")
    print(f"thermal-runaway: HBM at its limit {reach:.1f} min in, sw_thermal_slowdown at "
          f"{first_one - START:.0f} s (truth {truth_s - START:.1f} s), XID 48 at "
          f"{xid_s - START:.0f} s")


def bad_scenario(args, tmp):
    p = subprocess.run([args.gpumon, "simulate-export", "--out", os.path.join(tmp, "x.om"),
                        "--nodes", "1", "--gpus", "2", "--scenario", "thermal-runaway:gpu=5"],
                       capture_output=True, timeout=30)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 2, f"a bad scenario exited {p.returncode}: {err}")
    check('scenario "thermal-runaway:gpu=5": gpu 5 out of range' in err, f"message: {err}")
    check(not os.path.exists(os.path.join(tmp, "x.om")), "the export ran anyway")


def agent_checks(args, tmp):
    truth_path = os.path.join(tmp, "agent-truth.json")
    before = time.time() * 1000
    with Agent(args.gpumon, ["--simulate", "h200x2", "--speed", "60", "--scenario",
                             "fall-off-bus:gpu=1:start=1m", "--ground-truth", truth_path]) as agent:
        def lost():
            lost1 = series(parse_exposition(agent.metrics().text)[0], "gpu_lost", gpu="1")
            return lost1 and lost1[0].value == 1

        wait_until(lost, timeout=20, what='gpu_lost{gpu="1"} == 1 after one simulated minute')

        def truth_says_lost():
            try:
                with open(truth_path, encoding="utf-8") as f:
                    t = json.load(f)
            except (OSError, ValueError):
                return None
            return next((e for e in t["events"] if e["event"] == "gpu_lost"), None)

        event = wait_until(truth_says_lost, timeout=15, what="gpu_lost in the ground truth")
    after = time.time() * 1000
    check(event["gpu"] == 1 and event["t_ms"] == 60000, f"gpu_lost event {event}")
    # One simulated minute at 60x is one wall-clock second after start.
    check(before + 900 <= event["t_unix_ms"] <= after, f"t_unix_ms {event['t_unix_ms']} not "
          f"about 1 s after the agent started ({before:.0f}..{after:.0f})")
    print("agent at 60x: GPU 1 lost one simulated minute in, ground truth rewritten")


def body(args):
    with tempfile.TemporaryDirectory(prefix="gpumon-scenarios-") as tmp:
        bad_scenario(args, tmp)
        export_checks(args, tmp)
        agent_checks(args, tmp)


if __name__ == "__main__":
    run_test(body)
