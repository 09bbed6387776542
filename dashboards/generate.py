#!/usr/bin/env python3
"""Writes gpumon's Grafana dashboards from their source (dashboards/src/).

    python3 dashboards/generate.py [--gpumon build/bin/gpumon] [--check]

For each audience (executive, operations, capacity, training) the source
builds a dashboard with gpumon's native metric names into native/<name>.json.
The dcgm-exporter variant, dcgm/<name>.json, is the same source built with
the dcgm variant's uid, title and tags, then rewritten by `gpumon dashboards
convert --names dcgm --rules 'rules/*.rules.yml'`, which translates every
query through the metric catalog (as `gpumon rules convert` does for
rules/dcgm/). Both are checked with `gpumon dashboards check` (every query
parses). The same files are also written under
deploy/grafana/provisioning/dashboards/gpumon/, where Grafana's file provider
(deploy/grafana/provisioning/dashboards/gpumon.yml) loads them, so that
folder works on its own. --check writes nothing and exits 1 when a committed
file differs from what would be generated (tests/dashboards runs it).

Standard library only (Debian's python3).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from src import capacity, executive, operations, training  # noqa: E402
from src.common import Variant  # noqa: E402

SOURCES = {"executive": executive, "operations": operations, "capacity": capacity,
           "training": training}


def dump(doc):
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def generate(gpumon, repo, out_dir):
    """Writes native/*.json and dcgm/*.json under out_dir; returns the
    conversion notes (queries left out of the dcgm variant)."""
    notes = []
    rules = os.path.join(repo, "rules", "*.rules.yml")
    for scheme in ("native", "dcgm"):
        os.makedirs(os.path.join(out_dir, scheme), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, module in SOURCES.items():
            native = os.path.join(out_dir, "native", f"{name}.json")
            with open(native, "w", encoding="utf-8") as f:
                f.write(dump(module.build(Variant("native"))))
            # The dcgm variant: the same source with dcgm metadata, converted.
            src = os.path.join(tmp, f"{name}.json")
            with open(src, "w", encoding="utf-8") as f:
                f.write(dump(module.build(Variant("dcgm"))))
            converted = os.path.join(tmp, f"{name}.dcgm.json")
            rc, log = run([gpumon, "dashboards", "convert", "--names", "dcgm", "--rules", rules,
                           src, converted])
            if rc != 0:
                raise SystemExit(f"gpumon dashboards convert {name} exited {rc}:\n{log}")
            notes += [line.replace(src, f"dcgm/{name}.json") for line in log.splitlines()]
            with open(converted, encoding="utf-8") as f:
                doc = json.load(f)
            with open(os.path.join(out_dir, "dcgm", f"{name}.json"), "w",
                      encoding="utf-8") as f:
                f.write(dump(doc))
    files = [os.path.join(out_dir, s, f"{n}.json") for s in ("native", "dcgm") for n in SOURCES]
    rc, log = run([gpumon, "dashboards", "check", *files])
    if rc != 0:
        raise SystemExit(f"gpumon dashboards check failed:\n{log}")
    return notes


def write_or_compare(generated, target, repo, check_only):
    """Copies `generated` to `target` unless equal (or, check_only, just
    compares); returns target's path relative to repo when they differed."""
    with open(generated, encoding="utf-8") as f:
        text = f.read()
    old = None
    if os.path.exists(target):
        with open(target, encoding="utf-8") as f:
            old = f.read()
    if old == text:
        return None
    if not check_only:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    return os.path.relpath(target, repo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    repo = os.path.dirname(HERE)
    ap.add_argument("--gpumon", default=os.path.join(repo, "build", "bin", "gpumon"))
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a committed file differs from the generated one")
    args = ap.parse_args()
    targets = [HERE, os.path.join(repo, "deploy", "grafana", "provisioning", "dashboards",
                                  "gpumon")]
    with tempfile.TemporaryDirectory() as out:
        notes = generate(args.gpumon, repo, out)
        stale = []
        for folder in targets:
            for scheme in ("native", "dcgm"):
                for name in SOURCES:
                    shown = write_or_compare(os.path.join(out, scheme, f"{name}.json"),
                                             os.path.join(folder, scheme, f"{name}.json"),
                                             repo, args.check)
                    if shown and args.check:
                        stale.append(shown)
                    elif shown:
                        print(f"wrote {shown}")
    if args.check:
        if stale:
            print("out of date (run python3 dashboards/generate.py): " + ", ".join(stale),
                  file=sys.stderr)
            return 1
        print(f"{2 * len(SOURCES)} dashboards up to date (in {len(targets)} places)")
        return 0
    for n in notes:
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
