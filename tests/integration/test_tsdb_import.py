#!/usr/bin/env python3
"""`gpumon tsdb import` stores a simulated export losslessly in blocks.

Exports 2 nodes x 2 GPUs x 3 h at 15 s, imports it with `gpumon tsdb
import`, and checks that `gpumon tsdb inspect --json` reports the series
and sample counts the export summary printed, in blocks that cover the
exported time range, with cardinalities naming the exported labels. The
import must refuse a second writer on a locked directory only while the
lock is held (a re-import into the same directory then adds a second copy
of the blocks, which inspect counts once per distinct series). Malformed
input must fail with a message naming the line, and leave no block behind.
"""

import fcntl
import json
import os
import re
import subprocess
import tempfile

from harness import check, run_test



def export_time_range(path):
    """First and last sample timestamp of the export, in milliseconds."""
    first, last = None, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            t = round(float(line.rsplit(" ", 1)[1]) * 1000)
            first = t if first is None else min(first, t)
            last = t if last is None else max(last, t)
    check(first is not None, "the export has no samples")
    return first, last


def body(args):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "export.om")
        argv = [args.gpumon, "simulate-export", "--out", path, "--nodes", "2", "--gpus", "2",
                "--duration", "3h", "--interval", "15s", "--seed", "7"]
        p = subprocess.run(argv, capture_output=True, timeout=120)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 0, f"{' '.join(argv)} exited {p.returncode}:\n{err}")
        m = re.search(r"(\d+) series, (\d+) samples", err)
        check(m is not None, f"no 'N series, N samples' summary in:\n{err}")
        want_series, want_samples = int(m.group(1)), int(m.group(2))

        p = subprocess.run([args.gpumon, "tsdb", "import", "--help"], capture_output=True,
                           timeout=30)
        check(p.returncode == 0, "`gpumon tsdb import --help` must exit 0")

        data = os.path.join(tmp, "data")
        p = subprocess.run([args.gpumon, "tsdb", "import", "--data", data, path],
                           capture_output=True, timeout=120)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 0, f"tsdb import exited {p.returncode}:\n{err}")
        m = re.search(r"imported (\d+) series, (\d+) samples into (\d+) blocks", err)
        check(m is not None, f"no import summary line in:\n{err}")
        check(int(m.group(1)) == want_series and int(m.group(2)) == want_samples,
              f"import summary {m.group(0)!r}, export had {want_series} series, "
              f"{want_samples} samples")

        p = subprocess.run([args.gpumon, "tsdb", "inspect", "--data", data, "--json"],
                           capture_output=True, timeout=120)
        check(p.returncode == 0, f"tsdb inspect exited {p.returncode}:\n"
                                 f"{p.stderr.decode(errors='replace')}")
        info = json.loads(p.stdout)
        check(info["samples"] == want_samples,
              f"inspect reports {info['samples']} samples, export had {want_samples}")
        check(info["series"] == want_series,
              f"inspect reports {info['series']} series, export had {want_series}")
        blocks = info["blocks"]
        check(blocks, "inspect lists no blocks")
        check(sum(b["samples"] for b in blocks) == want_samples, "block samples do not add up")
        first, last = export_time_range(path)
        lo = min(b["min_time"] for b in blocks)
        hi = max(b["max_time"] for b in blocks)
        check(lo <= first and hi > last,
              f"blocks cover [{lo}, {hi}), the export spans [{first}, {last}] ms")
        check(0 < info["bytes_per_sample"] < 4,
              f"{info['bytes_per_sample']} bytes/sample is not compressed")
        names = {c["name"]: c["count"] for c in info["label_values_by_name"]}
        check("__name__" in names, f"no __name__ cardinality in {names}")
        check(info["wal"] is None, "an import must not create a WAL")
        metric = {c["name"]: c["count"] for c in info["series_by_metric_name"]}
        check(max(metric.values()) >= 4, f"series by metric name {metric}: expected >= 4 GPUs")

        p = subprocess.run([args.gpumon, "tsdb", "inspect", "--data", data],
                           capture_output=True, timeout=120)
        text = p.stdout.decode(errors="replace")
        check(p.returncode == 0 and f"{want_samples} samples" in text,
              f"text inspect does not report {want_samples} samples:\n{text}")

        # A directory locked by a running DB is refused.
        with open(os.path.join(data, "lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            p = subprocess.run([args.gpumon, "tsdb", "import", "--data", data, path],
                               capture_output=True, timeout=120)
            check(p.returncode != 0 and b"in use" in p.stderr,
                  f"import into a locked directory: exit {p.returncode}, {p.stderr!r}")

        # Malformed input names its line and leaves nothing behind.
        bad = os.path.join(tmp, "bad.om")
        with open(bad, "w") as f:
            f.write("m 1 100\nm 2 200\nm{a=} 3 300\n# EOF\n")
        empty = os.path.join(tmp, "data2")
        p = subprocess.run([args.gpumon, "tsdb", "import", "--data", empty, bad],
                           capture_output=True, timeout=30)
        check(p.returncode != 0 and b"line 3" in p.stderr,
              f"malformed input: exit {p.returncode}, {p.stderr!r}")
        left = [e for e in os.listdir(empty) if e != "lock"]
        check(not left, f"a failed import left {left}")


if __name__ == "__main__":
    run_test(body)
