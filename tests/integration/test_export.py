#!/usr/bin/env python3
"""`gpumon simulate-export` writes simulated history promtool can import.

Exports 2 nodes x 2 GPUs x 10 min at 15 s and checks the file: each family
declared once with all its samples right after, every series' timestamps on
the 15 s grid in ascending order, counters monotonic, everything labelled
simulated, no agent self-metrics. The energy counter must grow by what the
GPUs draw over 10 simulated minutes although the export takes well under a
second of real time, which shows the fake NVML's virtual clock drives the
data. Two exports with the same seed must be byte-identical (and one with
another seed must differ). Finally `promtool tsdb create-blocks-from
openmetrics` must import it with the same sample and series counts.
"""

import glob
import json
import os
import re
import subprocess
import tempfile

from harness import check, need_tool, run_test

START = 1700000000  # seconds
INTERVAL = 15
STEPS = 40  # 10 min at 15 s
NODES = 2
GPUS = 2

_LINE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+) (\S+)$")


def export(gpumon, path, seed, extra=()):
    argv = [gpumon, "simulate-export", "--out", path, "--nodes", str(NODES), "--gpus", str(GPUS),
            "--duration", "10m", "--interval", f"{INTERVAL}s", "--seed", str(seed), *extra]
    p = subprocess.run(argv, capture_output=True, timeout=60)
    check(p.returncode == 0,
          f"{' '.join(argv)} exited {p.returncode}:\n{p.stderr.decode(errors='replace')}")
    return p.stderr.decode(errors="replace")


def parse(path):
    """Returns (families in order: list of (name, type)), series: dict
    (family, sample name, labels text) -> list of (timestamp, value))."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    check(text.endswith("# EOF\n"), "the file does not end with '# EOF'")
    check(text.count("# EOF") == 1, "'# EOF' appears more than once")
    families = []
    seen = set()
    series = {}
    current = None
    for line in text[:-len("# EOF\n")].splitlines():
        if line.startswith("#"):
            parts = line.split(" ", 3)
            check(len(parts) >= 4 and parts[1] in ("HELP", "TYPE", "UNIT"),
                  f"unexpected comment line {line!r}")
            if parts[1] == "TYPE":
                check(parts[2] not in seen, f"family {parts[2]} is declared twice")
                seen.add(parts[2])
                current = (parts[2], parts[3])
                families.append(current)
            continue
        m = _LINE_RE.match(line)
        check(m is not None, f"cannot parse sample line {line!r}")
        check(current is not None, f"sample before any # TYPE: {line!r}")
        name, labels, value, ts = m.group(1), m.group(2) or "", m.group(3), m.group(4)
        family, ftype = current
        allowed = {family, family + "_total"} if ftype == "counter" else {family}
        if ftype == "info":
            allowed = {family + "_info"}
        check(name in allowed, f"sample {name} is not part of the family {family} it follows")
        series.setdefault((family, name, labels), []).append((float(ts), float(value)))
    return families, series


def body(args):
    with tempfile.TemporaryDirectory(prefix="gpumon-export-") as tmp:
        a = os.path.join(tmp, "a.om")
        b = os.path.join(tmp, "b.om")
        c = os.path.join(tmp, "c.om")
        summary = export(args.gpumon, a, 7, ["--start", str(START)])
        export(args.gpumon, b, 7, ["--start", str(START)])
        export(args.gpumon, c, 8, ["--start", str(START)])
        with open(a, "rb") as fa, open(b, "rb") as fb, open(c, "rb") as fc:
            da, db, dc = fa.read(), fb.read(), fc.read()
        check(da == db, "two exports with the same seed differ")
        check(da != dc, "exports with seeds 7 and 8 are identical")

        families, series = parse(a)
        names = [f for f, _ in families]
        check(all(f.startswith("gpu") for f in names),
              f"non-GPU families in the export: {[f for f in names if not f.startswith('gpu')]}")
        for must in ("gpu_temperature_celsius", "gpu_energy_joules", "gpu_utilization_ratio"):
            check(must in names, f"family {must} missing; got {names}")
        types = dict(families)
        samples = 0
        for (family, name, labels), points in series.items():
            samples += len(points)
            check('simulated="true"' in labels, f"{name}{labels} lacks simulated=\"true\"")
            times = [t for t, _ in points]
            check(times == [START + INTERVAL * i for i in range(STEPS)],
                  f"{name}{labels}: timestamps {times[:3]}... are not the 15 s grid from {START}")
            if types[family] == "counter":
                values = [v for _, v in points]
                check(all(x <= y for x, y in zip(values, values[1:])),
                      f"counter {name}{labels} decreases: {values}")
        temps = [k for k in series if k[1] == "gpu_temperature_celsius"]
        check(len(temps) == NODES * GPUS,
              f"expected {NODES * GPUS} gpu_temperature_celsius series, got {len(temps)}")
        hosts = {re.search(r'hostname="([^"]*)"', k[2]).group(1) for k in temps}
        check(hosts == {"sim-node-0000", "sim-node-0001"}, f"hostnames {sorted(hosts)}")
        m = re.search(r"(\d+) series, (\d+) samples", summary)
        check(m is not None and int(m.group(1)) == len(series) and int(m.group(2)) == samples,
              f"summary {summary.strip()!r} disagrees with the file: {len(series)} series, "
              f"{samples} samples")

        # 10 simulated minutes of energy: at least idle power, at most the
        # power limit, over the span (H200: 77.7 W idle, 700 W limit).
        span = INTERVAL * (STEPS - 1)
        for key in (k for k in series if k[1] == "gpu_energy_joules_total"):
            values = [v for _, v in series[key]]
            gained = values[-1] - values[0]
            check(60 * span <= gained <= 700 * span,
                  f"{key[2]}: energy grew {gained:.0f} J over {span} simulated s; the virtual "
                  "clock does not drive the data")

        # Without --start the data ends about now, on the interval grid.
        d = os.path.join(tmp, "d.om")
        export(args.gpumon, d, 7)
        _, recent = parse(d)
        first = min(points[0][0] for points in recent.values())
        check(first % INTERVAL == 0, f"default start {first} is not a multiple of {INTERVAL} s")
        now = os.stat(d).st_mtime
        check(now - 700 <= first <= now - 590, f"default start {first} is not ~10 min before now")

        promtool = need_tool("promtool")
        out = os.path.join(tmp, "blocks")
        p = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", a, out],
                           capture_output=True, timeout=120)
        check(p.returncode == 0, f"promtool rejected the export (exit {p.returncode}):\n"
              f"{(p.stdout + p.stderr).decode(errors='replace')}")
        metas = glob.glob(os.path.join(out, "*", "meta.json"))
        check(metas, f"promtool created no blocks in {out}")
        imported = 0
        for meta in metas:
            with open(meta, encoding="utf-8") as f:
                stats = json.load(f)["stats"]
            imported += stats["numSamples"]
            if len(metas) == 1:
                check(stats["numSeries"] == len(series),
                      f"promtool imported {stats['numSeries']} series, the file has {len(series)}")
        check(imported == samples, f"promtool imported {imported} samples, the file has {samples}")
        print(f"{len(families)} families, {len(series)} series, {samples} samples; "
              f"promtool made {len(metas)} block(s)")


if __name__ == "__main__":
    run_test(body)
