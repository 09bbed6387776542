#!/usr/bin/env python3
"""Runs `gpumon promqltest` over Prometheus's PromQL test scripts.

Exit codes: 0 pass, 77 when the scripts folder is absent (a fresh clone has
no ../shared), anything else on failure.
"""
import argparse
import glob
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--min-pass-rate", default="0.97")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "*.test")))
    if not files:
        print(f"conformance scripts not found in {args.dir}: skipping")
        return 77
    cmd = [args.gpumon, "promqltest", "--min-pass-rate", args.min_pass_rate] + files
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(proc.stdout)
    lines = proc.stdout.strip().splitlines()
    # The summary line must be last, whatever the outcome.
    if not lines or not lines[-1].endswith("skipped"):
        print("missing summary line")
        return 1
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
