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

`gpumon tsdb dump` must print back every imported sample with the same
float bits (the export, and a file of awkward values: -0, subnormals,
extremes, infinities, NaN, fractional-second timestamps), and honour
--match and --min-time/--max-time.
"""

import fcntl
import json
import math
import os
import re
import struct
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


def parse_sample_line(line):
    """`name{a="b",...} value ts` -> (name, sorted label tuple, value text, ts text)."""
    i = 0
    while i < len(line) and line[i] not in "{ ":
        i += 1
    name = line[:i]
    labels = []
    if i < len(line) and line[i] == "{":
        i += 1
        while line[i] != "}":
            eq = line.index("=", i)
            lname = line[i:eq].strip().lstrip(",").strip()
            j = eq + 2  # past ="
            value = []
            while line[j] != '"':
                if line[j] == "\\":
                    j += 1
                    value.append("\n" if line[j] == "n" else line[j])
                else:
                    value.append(line[j])
                j += 1
            labels.append((lname, "".join(value)))
            i = j + 1
            while line[i] in ", ":
                i += 1
        i += 1
    value, ts = line[i:].split()
    return name, tuple(sorted(labels)), value, ts


def value_bits(text):
    """Float bits of a sample value as gpumon dump or OpenMetrics spells it."""
    if text == "StaleNaN":
        return 0x7ff0000000000002
    if text.startswith("NaN:0x"):
        return int(text[6:], 16)
    return struct.unpack("<Q", struct.pack("<d", float(text)))[0]


def ts_ms(text):
    """Exact milliseconds of a decimal seconds timestamp."""
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("+-").partition(".")
    return sign * (int(whole) * 1000 + int((frac + "000")[:3]))


def read_samples(lines):
    """{(name, labels, ts_ms): value bits} of OpenMetrics-like sample lines."""
    out = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, labels, value, ts = parse_sample_line(line)
        key = (name, labels, ts_ms(ts))
        check(key not in out, f"sample {key} appears twice")
        out[key] = value_bits(value)
    return out


def dump(args, data, *extra):
    p = subprocess.run([args.gpumon, "tsdb", "dump", "--data", data, *extra],
                       capture_output=True, timeout=300)
    check(p.returncode == 0, f"tsdb dump {extra} exited {p.returncode}:\n"
                             f"{p.stderr.decode(errors='replace')}")
    return read_samples(p.stdout.decode().splitlines())


def check_dump(args, tmp):
    """Awkward values and timestamps survive import + dump; filters work."""
    path = os.path.join(tmp, "values.om")
    values = ["-0", "0", "1e-300", "5e-324", "2.2250738585072014e-308", "0.1",
              "1.7976931348623157e+308", "-1.7976931348623157e+308", "+Inf", "-Inf", "NaN",
              "123456789.12345679", "0.30000000000000004", "-42.5", "1e+21", "3"]
    with open(path, "w") as f:
        f.write("# TYPE odd gauge\n")
        for i, v in enumerate(values):
            f.write(f'odd{{k="a\\"b\\\\c",z="1"}} {v} {100 + i}.25\n')
        for i in range(5):
            f.write(f"plain {i * 0.1} {200 + i * 15}\n")
        f.write("# EOF\n")
    data = os.path.join(tmp, "values-data")
    p = subprocess.run([args.gpumon, "tsdb", "import", "--data", data, path],
                       capture_output=True, timeout=60)
    check(p.returncode == 0, f"import of {path}: {p.stderr.decode(errors='replace')}")
    with open(path, encoding="utf-8") as f:
        want = read_samples(f)
    got = dump(args, data)
    check(got == want, "dump differs from the input:\n"
          + "\n".join(f"{k}: want {want.get(k)!r} got {got.get(k)!r}"
                      for k in sorted(set(want) | set(got), key=repr)
                      if want.get(k) != got.get(k)))
    nan = [k for k, v in got.items() if math.isnan(struct.unpack("<d", struct.pack("<Q", v))[0])]
    check(len(nan) == 1, f"expected one NaN sample, got {nan}")
    only = dump(args, data, "--match", "plain")
    check(set(only) == {k for k in want if k[0] == "plain"}, f"--match plain gave {sorted(only)}")
    sel = dump(args, data, "--match", 'odd{z="1"}')
    check(len(sel) == len(values), f'--match odd{{z="1"}} gave {len(sel)} samples')
    check(not dump(args, data, "--match", 'odd{z="2"}'), "a non-matching selector printed samples")
    win = dump(args, data, "--min-time", "215000", "--max-time", "245000")
    check(sorted(k[2] for k in win) == [215000, 230000, 245000],
          f"--min-time/--max-time gave {sorted(k[2] for k in win)}")
    p = subprocess.run([args.gpumon, "tsdb", "dump", "--data", data, "--match", 'odd{z=~"1"}'],
                       capture_output=True, timeout=30)
    check(p.returncode == 2, f"a regex matcher must be refused, exit {p.returncode}")


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

        # Every exported sample reads back with the same bits.
        with open(path, encoding="utf-8") as f:
            want = read_samples(f)
        got = dump(args, data)
        check(len(got) == want_samples, f"dump printed {len(got)} samples, want {want_samples}")
        check(got == want, "dump of the imported export differs from the export")
        check_dump(args, tmp)

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
