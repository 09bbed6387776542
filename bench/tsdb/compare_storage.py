#!/usr/bin/env python3
"""Storage benchmark: the same GPU-shaped OpenMetrics file imported into
Prometheus' TSDB (promtool), VictoriaMetrics and gpumon's TSDB, side by side.

Steps (one run, one input file):

1. `gpumon simulate-export` writes N nodes x G GPUs x the full GPU metric set
   at one interval over a span of time (the fake NVML on its virtual clock,
   through the agent's real collector path). The start is aligned to a UTC
   day, so 2 h blocks fall on the data's own boundaries. One pass over the
   file counts its samples and series and keeps the values of one GPU's
   series, the reference for the lossless checks.
2. Prometheus: `promtool tsdb create-blocks-from openmetrics`, twice:
   - with --max-block-duration set to the smallest range of Prometheus'
     compaction ladder (2 h x 3^k) whose aligned window holds all the data:
     one block, which is what compaction would end with (compaction merges
     blocks without re-encoding their chunks);
   - as created by default (2 h blocks), for reference.
   Bytes are the block directories: chunks/ (samples) and in total (chunks
   + index + meta.json + tombstones). Values are read back with `promtool
   tsdb dump --match` for the reference GPU and compared bit for bit.
3. VictoriaMetrics (Debian `victoria-metrics`, /usr/bin/victoria-metrics):
   started on 127.0.0.1 with a temporary -storageDataPath, the file POSTed
   to /api/v1/import/prometheus as is (1.79 reads OpenMetrics timestamps in
   seconds; the sample count is verified), then /internal/force_flush,
   /internal/force_merge, wait until no merge is active, stop (SIGINT, which
   flushes), measure data/ (samples) and data/ + indexdb/ (in total). VM
   stores values as decimal mantissa and exponent, so it is not lossless:
   the reference GPU's series are read back through /api/v1/export and
   compared with the file (exact matches, largest relative error).
4. gpumon: `gpumon tsdb import --data DIR FILE`, only when `gpumon tsdb
   import --help` succeeds; otherwise it prints "gpumon: not available yet".
   Bytes are the whole data directory. Then every stored sample is read back
   with `gpumon tsdb dump` (when the binary has it) and checked against
   every sample of the file, float bits and timestamps, as an order-free
   digest of (series, timestamp, value bits) plus the count; the reference
   GPU's series are also compared one by one like the other systems'.

Import wall and CPU time are the importer's own (promtool's, VM's process
from the POST to the end of its merges, gpumon's); peak RSS likewise.
Everything runs on loopback; every process started is stopped at the end and
the work directory is removed unless --keep.

usage: compare_storage.py [--gpumon PATH] [--nodes 5] [--gpus 8] [--duration 6h]
                          [--interval 15s] [--seed 1] [--work-dir DIR] [--keep]
                          [--systems prometheus,prometheus-2h,victoriametrics,gpumon]
                          [--input FILE.om] [--json FILE]
The issue's full size is --nodes 200 (320,000 series; at 6 h, 461 M samples,
~104 GB of text, ~3.7 GB of memory in the generator): plan disk space and
hours. The default (5 nodes x 8 GPUs x 6 h: 8,000 series, 11.5 M samples,
2.6 GB of text) runs in about 3 minutes on 2 cores.
"""

import argparse
import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAY_MS = 86400 * 1000
TWO_HOURS_MS = 2 * 3600 * 1000
# The reference series for the lossless checks: one GPU's (about 200 series).
REF_HOST = "sim-node-0000"
REF_GPU = "0"
ALL_SYSTEMS = ("prometheus", "prometheus-2h", "victoriametrics", "gpumon")


def log(msg):
    print(f"[compare_storage] {msg}", file=sys.stderr, flush=True)


def parse_duration_ms(text):
    units = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000, "d": DAY_MS}
    total, pos = 0, 0
    for m in re.finditer(r"(\d+)(ms|s|m|h|d)", text):
        if m.start() != pos:
            break
        total += int(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if pos != len(text) or total <= 0:
        raise SystemExit(f"bad duration {text!r} (e.g. 6h, 15s, 1h30m)")
    return total


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine_description():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} x {model}"


# ------------------------------------------------------------- processes


def run_measured(argv, stdout_path=None):
    """Runs argv to completion; returns (exit code, wall s, CPU s, peak RSS
    KiB, combined output text)."""
    out = open(stdout_path, "w+b") if stdout_path else tempfile.TemporaryFile()
    with out:
        start = time.monotonic()
        p = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return p.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, text


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_peak_rss_kib(pid):
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def stop_process(p, sig=signal.SIGINT, grace=120):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=30)


def package_version(package):
    """The Debian package's upstream version ("1.79.5"), or "" if unknown."""
    try:
        p = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True,
                           timeout=30)
    except OSError:
        return ""
    m = re.match(r"(?:\d+:)?(\d+(?:\.\d+)*)", p.stdout.decode())
    return m.group(1) if p.returncode == 0 and m else ""


# ----------------------------------------------------------------- HTTP


def http_request(port, method, path, body=None, headers=None, timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, blocksize=1 << 20)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def wait_until(predicate, timeout, what, interval=0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")


# ------------------------------------------------------------ the input


def bits(x):
    return struct.pack("<d", x)


def parse_labels(text):
    """{a="b",c="d"} (Prometheus escaping) -> dict."""
    labels = {}
    for m in re.finditer(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"', text):
        labels[m.group(1)] = re.sub(r"\\(.)", lambda e: "\n" if e.group(1) == "n" else e.group(1),
                                    m.group(2))
    return labels


def series_key(name, labels):
    return (name,) + tuple(sorted((k, v) for k, v in labels.items() if k != "__name__"))


def value_bits(text):
    """Float bits of a sample value as OpenMetrics or `gpumon tsdb dump`
    spells it (the dump names the stale marker and other NaN payloads)."""
    if text == b"StaleNaN":
        return 0x7ff0000000000002
    if text.startswith(b"NaN:0x"):
        return int(text[6:], 16)
    return struct.unpack("<Q", struct.pack("<d", float(text)))[0]


class SampleDigest:
    """Order-free digest of a set of samples: the count and the sum of
    hashes of (series key, timestamp ms, value bits). Two sets with the same
    digest hold the same samples (short of a 64-bit hash collision)."""

    MASK = (1 << 64) - 1

    def __init__(self):
        self.count = 0
        self.total = 0
        self._keys = {}  # series text as written -> normalized key

    def add_line(self, line):
        sp = line.rfind(b" ")
        vs = line.rfind(b" ", 0, sp)
        head = line[:vs]
        key = self._keys.get(head)
        if key is None:
            text = head.decode()
            brace = text.find("{")
            name = text if brace < 0 else text[:brace]
            labels = {} if brace < 0 else parse_labels(text[brace:])
            key = self._keys[head] = series_key(name, labels)
        ts_ms = round(float(line[sp + 1:]) * 1000)
        self.total = (self.total + hash((key, ts_ms, value_bits(line[vs + 1:sp])))) & self.MASK
        self.count += 1

    def __eq__(self, other):
        return (self.count, self.total) == (other.count, other.total)


def scan_input(path):
    """One pass over the OpenMetrics file: samples, series (the file keeps
    each series' samples together), time range, the digest of all samples
    and the reference GPU's values {series key: {ts_ms: value}}."""
    samples = series = 0
    prev = None
    min_ts = max_ts = None
    ref = {}
    digest = SampleDigest()
    host = f'hostname="{REF_HOST}"'.encode()
    gpu = f'{{gpu="{REF_GPU}",'.encode()
    with open(path, "rb", buffering=1 << 22) as f:
        for line in f:
            if line[0] == 35:  # '#'
                continue
            samples += 1
            sp = line.rfind(b" ")
            head = line[:line.rfind(b" ", 0, sp)]
            if head != prev:
                series += 1
                prev = head
            digest.add_line(line.rstrip(b"\n"))
            ts_ms = round(float(line[sp + 1:]) * 1000)
            if min_ts is None or ts_ms < min_ts:
                min_ts = ts_ms
            if max_ts is None or ts_ms > max_ts:
                max_ts = ts_ms
            if host in line and gpu in line:
                brace = head.find(b"{")
                name = head[:brace].decode()
                key = series_key(name, parse_labels(head[brace:].decode()))
                value = float(line[len(head) + 1:sp])
                ref.setdefault(key, {})[ts_ms] = value
    return {"samples": samples, "series": series, "min_ts": min_ts, "max_ts": max_ts, "ref": ref,
            "digest": digest}


def compare_values(ref, got):
    """ref, got: {series key: {ts: value}}. Returns a dict of counts and the
    largest relative error (NaNs equal when their bits are)."""
    compared = exact = missing = 0
    worst = 0.0
    worst_example = None
    for key, points in ref.items():
        have = got.get(key, {})
        for ts, v in points.items():
            if ts not in have:
                missing += 1
                continue
            g = have[ts]
            compared += 1
            if bits(g) == bits(v):
                exact += 1
                continue
            if math.isnan(v) or math.isnan(g) or math.isinf(v) or math.isinf(g):
                err = math.inf
            else:
                err = abs(g - v) / abs(v) if v != 0 else abs(g)
            if err > worst:
                worst = err
                worst_example = f"{key[0]} at {ts}: {v!r} stored as {g!r}"
    return {"compared": compared, "exact": exact, "missing": missing,
            "max_relative_error": worst, "worst": worst_example}


# ----------------------------------------------------------- Prometheus


def prometheus_block_range_ms(min_ts, max_ts):
    """Smallest range of the compaction ladder (2 h x 3^k, as promtool's
    --max-block-duration rounds) whose aligned window holds [min, max]."""
    r = TWO_HOURS_MS
    for _ in range(10):
        if min_ts // r == max_ts // r:
            return r
        r *= 3
    return r // 3


def promtool_dump(promtool, db):
    """The reference GPU's series from `promtool tsdb dump`."""
    match = f'{{hostname="{REF_HOST}",gpu="{REF_GPU}"}}'
    p = subprocess.run([promtool, "tsdb", "dump", f"--match={match}", db], capture_output=True,
                       timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"promtool tsdb dump failed: {p.stderr.decode(errors='replace')}")
    got = {}
    for line in p.stdout.decode().splitlines():
        # {__name__="x", a="b"} VALUE TS (Go's %g: the shortest exact text)
        brace = line.rfind("}")
        labels = parse_labels(line[:brace + 1])
        value, ts = line[brace + 1:].split()
        key = series_key(labels.get("__name__", ""), labels)
        got.setdefault(key, {})[int(ts)] = float(value)
    return got


def run_prometheus(args, input_path, info, work, one_block):
    name = "prometheus" if one_block else "prometheus-2h"
    out = os.path.join(work, name)
    argv = [args.promtool, "tsdb", "create-blocks-from", "openmetrics"]
    prom = ("Prometheus " + package_version("prometheus")).strip()
    label = f"{prom} (promtool), 2 h blocks"
    if one_block:
        r = prometheus_block_range_ms(info["min_ts"], info["max_ts"])
        argv.append(f"--max-block-duration={r // 3600000}h")
        label = f"{prom} (promtool), one {r // 3600000} h block = compacted"
    argv += [input_path, out]
    log(f"{name}: {' '.join(argv)}")
    rc, wall, cpu, rss, text = run_measured(argv)
    if rc != 0:
        raise RuntimeError(f"promtool exited {rc}:\n{text[-3000:]}")
    blocks = [d for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, "meta.json"))]
    samples = series = chunks = 0
    chunk_bytes = total_bytes = 0
    for b in blocks:
        with open(os.path.join(out, b, "meta.json"), encoding="utf-8") as f:
            stats = json.load(f)["stats"]
        samples += stats["numSamples"]
        series = max(series, stats["numSeries"])
        chunks += stats["numChunks"]
        chunk_bytes += dir_bytes(os.path.join(out, b, "chunks"))
        total_bytes += dir_bytes(os.path.join(out, b))
    result = {"system": label, "key": name, "samples": samples, "series": series,
              "blocks": len(blocks), "chunks": chunks, "bytes": total_bytes,
              "sample_bytes": chunk_bytes, "sample_bytes_what": "chunks/",
              "wall_s": wall, "cpu_s": cpu, "peak_rss_kib": rss}
    if one_block:
        # promtool opens the directory as a database, which needs a WAL
        # directory; an empty one (made after measuring) will do.
        os.makedirs(os.path.join(out, "wal"), exist_ok=True)
        result["lossless"] = compare_values(info["ref"], promtool_dump(args.promtool, out))
    return result


# ------------------------------------------------------ VictoriaMetrics


def vm_metrics(port):
    status, body = http_request(port, "GET", "/metrics")
    if status != 200:
        raise RuntimeError(f"VictoriaMetrics /metrics answered {status}")
    values = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.rpartition(" ")
            try:
                values[k] = float(v)
            except ValueError:
                pass
    return values


def vm_sum(metrics, prefix):
    return sum(v for k, v in metrics.items() if k == prefix or k.startswith(prefix + "{"))


def vm_export_ref(port, info):
    match = f'{{hostname="{REF_HOST}",gpu="{REF_GPU}"}}'
    q = urllib.parse.urlencode({"match[]": match, "start": info["min_ts"] // 1000 - 1,
                                "end": info["max_ts"] // 1000 + 1})
    status, body = http_request(port, "GET", "/api/v1/export?" + q, timeout=600)
    if status != 200:
        raise RuntimeError(f"/api/v1/export answered {status}: {body[:500]!r}")
    got = {}
    for line in body.decode().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        labels = row["metric"]
        key = series_key(labels.get("__name__", ""), labels)
        pts = got.setdefault(key, {})
        for v, ts in zip(row["values"], row["timestamps"]):
            pts[int(ts)] = float(v)
    return got


def vm_series_count(port, info):
    q = urllib.parse.urlencode({"match[]": '{__name__!=""}', "start": info["min_ts"] // 1000 - 1,
                                "end": info["max_ts"] // 1000 + 1})
    status, body = http_request(port, "GET", "/api/v1/series?" + q, timeout=600)
    if status != 200:
        raise RuntimeError(f"/api/v1/series answered {status}: {body[:500]!r}")
    return len(json.loads(body)["data"])


def start_victoriametrics(binary, data, vm_log):
    """Starts VictoriaMetrics on a free loopback port (retrying if another
    process takes the port first); returns (process, port)."""
    for _ in range(3):
        port = free_port()
        argv = [binary, f"-storageDataPath={data}", f"-httpListenAddr=127.0.0.1:{port}",
                "-retentionPeriod=100y", "-search.maxSeries=100000000", "-search.disableCache"]
        log(f"victoriametrics: {' '.join(argv)}")
        with open(vm_log, "wb") as logf:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf,
                                    stderr=subprocess.STDOUT)

        def healthy():
            if proc.poll() is not None:
                return True
            try:
                return http_request(port, "GET", "/health", timeout=2)[0] == 200
            except OSError:
                return False
        try:
            wait_until(healthy, 60, "VictoriaMetrics /health")
        except RuntimeError:
            stop_process(proc)
            raise
        if proc.poll() is None:
            return proc, port
        with open(vm_log, "rb") as f:
            tail = f.read()[-2000:].decode(errors="replace")
        if "address already in use" not in tail:
            raise RuntimeError(f"victoria-metrics exited {proc.returncode}:\n{tail}")
    raise RuntimeError("victoria-metrics found no free port")


# Values that need more than VictoriaMetrics' decimal precision, and some
# that do not, for the precision probe.
PRECISION_PROBE = {
    "tenth_plus_fifth": 0.1 + 0.2,
    "third": 1 / 3,
    "pi": math.pi,
    "max_safe_integer": float(2**53 - 1),
    "counter_14_digits": 12345678901234.0,
    "joules_ms": 123456789.123,
    "twelve_digits": 0.123456789012,
    "subnormal": 5e-324,
    "negative_zero": -0.0,
    "max_float": 1.7976931348623157e308,
}


def victoriametrics_precision_probe(binary, work, ts_ms):
    """Imports PRECISION_PROBE into a fresh VictoriaMetrics and reads it back;
    returns {case: (sent, got)} for the values that changed."""
    data = os.path.join(work, "victoriametrics-probe")
    proc, port = start_victoriametrics(binary, data, data + ".log")
    try:
        body = "".join(f'gpumon_bench_precision_probe{{case="{k}"}} {v!r} {ts_ms}\n'
                       for k, v in PRECISION_PROBE.items()).encode()
        status, text = http_request(port, "POST", "/api/v1/import/prometheus", body=body)
        if status not in (200, 204):
            raise RuntimeError(f"probe import answered {status}: {text[:500]!r}")
        http_request(port, "GET", "/internal/force_flush")
        q = urllib.parse.urlencode({"match[]": "gpumon_bench_precision_probe",
                                    "start": ts_ms // 1000 - 1, "end": ts_ms // 1000 + 1})
        got = {}

        def exported():
            status, out = http_request(port, "GET", "/api/v1/export?" + q)
            for line in out.decode().splitlines():
                row = json.loads(line)
                got[row["metric"]["case"]] = float(row["values"][0])
            return status == 200 and len(got) == len(PRECISION_PROBE)
        wait_until(exported, 60, "the precision probe to be searchable")
        return {k: (v, got[k]) for k, v in PRECISION_PROBE.items() if bits(got[k]) != bits(v)}
    finally:
        stop_process(proc)


def run_victoriametrics(args, input_path, info, work):
    data = os.path.join(work, "victoriametrics")
    vm_log = os.path.join(work, "victoriametrics.log")
    proc = None
    try:
        proc, port = start_victoriametrics(args.victoria_metrics, data, vm_log)
        cpu0 = proc_cpu_seconds(proc.pid)
        start = time.monotonic()
        size = os.path.getsize(input_path)
        with open(input_path, "rb") as body:
            status, text = http_request(port, "POST", "/api/v1/import/prometheus", body=body,
                                        headers={"Content-Length": str(size)}, timeout=3600)
        if status not in (200, 204):
            raise RuntimeError(f"import answered {status}: {text[:500]!r}")
        post_s = time.monotonic() - start
        log(f"victoriametrics: POST done in {post_s:.1f} s; flushing and merging")
        inserted = vm_sum(vm_metrics(port), "vm_rows_inserted_total{type=\"prometheus\"}")
        http_request(port, "GET", "/internal/force_flush", timeout=600)
        wait_until(lambda: vm_sum(vm_metrics(port), "vm_rows_added_to_storage_total") >= inserted,
                   600, "all rows added to storage")
        merge_requested = time.monotonic()
        http_request(port, "GET", "/internal/force_merge", timeout=600)

        def stored_rows(m):
            return (vm_sum(m, "vm_rows{type=\"storage/small\"}") +
                    vm_sum(m, "vm_rows{type=\"storage/big\"}"))

        def merged():
            # The forced merge runs in the background; VM logs its end. A
            # version that logs otherwise gets 5 s to show it as active.
            with open(vm_log, "rb") as f:
                logged = re.search(rb"forced merge for partition_prefix=\S* has been "
                                   rb"(successfully finished|failed)", f.read()) is not None
            if not logged and time.monotonic() - merge_requested < 5:
                return False
            m = vm_metrics(port)
            return (vm_sum(m, "vm_active_force_merges") == 0 and vm_sum(m, "vm_active_merges") == 0
                    and stored_rows(m) >= inserted)
        wait_until(merged, 3600, "VictoriaMetrics merges", interval=0.2)
        wall = time.monotonic() - start
        cpu = proc_cpu_seconds(proc.pid) - cpu0
        stored = stored_rows(vm_metrics(port))
        series = vm_series_count(port, info)
        lossless = compare_values(info["ref"], vm_export_ref(port, info))
        rss = proc_peak_rss_kib(proc.pid)
        stop_process(proc)
        version = "VictoriaMetrics " + package_version("victoria-metrics")
        sample_bytes = dir_bytes(os.path.join(data, "data"))
        total = sample_bytes + dir_bytes(os.path.join(data, "indexdb"))
        probe = victoriametrics_precision_probe(args.victoria_metrics, work, info["min_ts"])
        return {"system": f"{version}, force-merged", "key": "victoriametrics",
                "samples": int(stored), "samples_inserted": int(inserted), "series": series,
                "bytes": total, "sample_bytes": sample_bytes, "sample_bytes_what": "data/",
                "wall_s": wall, "post_s": post_s, "cpu_s": cpu, "peak_rss_kib": rss,
                "lossless": lossless,
                "precision_probe": {k: list(v) for k, v in probe.items()}}
    finally:
        if proc is not None:
            stop_process(proc)


# ---------------------------------------------------------------- gpumon


def gpumon_tsdb_available(gpumon):
    """Whether this gpumon has `tsdb import` (its --help succeeds, or `tsdb
    --help` succeeds and lists it)."""
    try:
        p = subprocess.run([gpumon, "tsdb", "import", "--help"], capture_output=True, timeout=30)
        if p.returncode == 0:
            return True
        p = subprocess.run([gpumon, "tsdb", "--help"], capture_output=True, timeout=30)
    except OSError:
        return False
    return p.returncode == 0 and b"import" in p.stdout + p.stderr


def gpumon_dump(gpumon, data, info):
    """Reads every sample back with `gpumon tsdb dump`: the full digest
    check against the file and the reference GPU's values. None when the
    binary has no dump."""
    p = subprocess.run([gpumon, "tsdb", "dump", "--help"], capture_output=True, timeout=30)
    if p.returncode != 0:
        return None
    digest = SampleDigest()
    ref = {}
    host = f'hostname="{REF_HOST}"'.encode()
    gpus = (f'{{gpu="{REF_GPU}"'.encode(), f',gpu="{REF_GPU}"'.encode())
    start = time.monotonic()
    with subprocess.Popen([gpumon, "tsdb", "dump", "--data", data], stdout=subprocess.PIPE,
                          bufsize=1 << 22) as proc:
        for line in proc.stdout:
            line = line.rstrip(b"\n")
            digest.add_line(line)
            if host in line and (gpus[0] in line or gpus[1] in line):
                sp = line.rfind(b" ")
                vs = line.rfind(b" ", 0, sp)
                head = line[:vs].decode()
                brace = head.find("{")
                key = series_key(head[:brace], parse_labels(head[brace:]))
                ts_ms = round(float(line[sp + 1:]) * 1000)
                bits_ = value_bits(line[vs + 1:sp])
                ref.setdefault(key, {})[ts_ms] = struct.unpack("<d", struct.pack("<Q", bits_))[0]
        rc = proc.wait()
    if rc != 0:
        raise RuntimeError(f"gpumon tsdb dump exited {rc}")
    want = info["digest"]
    return {"compared": compare_values(info["ref"], ref), "all_samples": digest.count,
            "all_equal": digest == want, "dump_wall_s": time.monotonic() - start}


def run_gpumon(args, input_path, info, work):
    # ---- gpumon's own TSDB (src/tsdb): runs only once `gpumon tsdb import`
    # exists in the binary under test.
    if not gpumon_tsdb_available(args.gpumon):
        print("gpumon: not available yet", flush=True)
        return None
    data = os.path.join(work, "gpumon")
    argv = [args.gpumon, "tsdb", "import", "--data", data, input_path]
    log(f"gpumon: {' '.join(argv)}")
    rc, wall, cpu, rss, text = run_measured(argv)
    if rc != 0:
        raise RuntimeError(f"gpumon tsdb import exited {rc}:\n{text[-3000:]}")
    result = {"system": "gpumon tsdb", "key": "gpumon", "samples": None, "series": None,
              "bytes": dir_bytes(data), "sample_bytes": None, "sample_bytes_what": "",
              "wall_s": wall, "cpu_s": cpu, "peak_rss_kib": rss}
    p = subprocess.run([args.gpumon, "tsdb", "inspect", "--data", data, "--json"],
                       capture_output=True, timeout=600)
    if p.returncode == 0:
        try:
            inspect = json.loads(p.stdout)
            result["inspect"] = inspect
            for k in ("samples", "series"):
                if isinstance(inspect.get(k), int):
                    result[k] = inspect[k]
        except ValueError:
            pass
    log("gpumon: reading every sample back with `gpumon tsdb dump`")
    dumped = gpumon_dump(args.gpumon, data, info)
    if dumped:
        result["lossless"] = dumped["compared"]
        result["lossless_all"] = {k: dumped[k] for k in ("all_samples", "all_equal",
                                                         "dump_wall_s")}
    return result


# ---------------------------------------------------------------- report


def fmt_int(n):
    return "?" if n is None else f"{n:,}"


def fmt_bytes(n):
    return "?" if n is None else f"{n / 1e6:,.1f} MB"


def markdown(results, info):
    rows = [["system", "samples", "series", "bytes on disk", "bytes/sample",
             "samples only: bytes/sample", "lossless", "import wall", "import CPU",
             "peak RSS"]]
    for r in results:
        per = r["bytes"] / info["samples"] if r["bytes"] else None
        sample_per = (f"{r['sample_bytes'] / info['samples']:.3f} ({r['sample_bytes_what']})"
                      if r.get("sample_bytes") else "")
        lossless = ""
        if "lossless" in r:
            c = r["lossless"]
            lossless = ("yes" if c["exact"] == c["compared"] and not c["missing"] else
                        f"no: {c['compared'] - c['exact']}/{c['compared']} differ, "
                        f"max rel. err {c['max_relative_error']:.1e}")
            if r.get("precision_probe"):
                lossless += (f" (probe: {len(r['precision_probe'])}/{len(PRECISION_PROBE)} "
                             "changed)")
        if "lossless_all" in r:
            a = r["lossless_all"]
            lossless += (f"; all {a['all_samples']:,} samples: "
                         + ("bit-identical" if a["all_equal"] else "DIFFER"))
        rows.append([r["system"], fmt_int(r["samples"]), fmt_int(r["series"]),
                     fmt_bytes(r["bytes"]), "?" if per is None else f"{per:.3f}", sample_per,
                     lossless,
                     f"{r['wall_s']:.1f} s", f"{r['cpu_s']:.1f} s",
                     f"{r['peak_rss_kib'] / 1024:,.0f} MiB"])
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpumon", default=os.path.join(REPO, "build", "bin", "gpumon"))
    ap.add_argument("--promtool", default=shutil.which("promtool") or "/usr/bin/promtool")
    ap.add_argument("--victoria-metrics",
                    default=shutil.which("victoria-metrics") or "/usr/bin/victoria-metrics")
    ap.add_argument("--nodes", type=int, default=5)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--model", default="h200")
    ap.add_argument("--duration", default="6h")
    ap.add_argument("--interval", default="15s")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--input", help="use this OpenMetrics file instead of generating one")
    ap.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    ap.add_argument("--work-dir", help="where to put the file and the stores (default: $TMPDIR)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    args = ap.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    for s in systems:
        if s not in ALL_SYSTEMS:
            raise SystemExit(f"unknown system {s!r}; choose from {', '.join(ALL_SYSTEMS)}")
    for tool, needed in ((args.promtool, {"prometheus", "prometheus-2h"} & set(systems)),
                         (args.victoria_metrics, {"victoriametrics"} & set(systems))):
        if needed and not os.access(tool, os.X_OK):
            raise SystemExit(f"{tool} not found (scripts/install-deps.sh installs it)")

    duration_ms = parse_duration_ms(args.duration)
    interval_ms = parse_duration_ms(args.interval)
    work = tempfile.mkdtemp(prefix="gpumon-tsdb-bench-", dir=args.work_dir)
    log(f"work directory {work}")
    results = []
    try:
        if args.input:
            input_path = os.path.abspath(args.input)
            gen = None
        else:
            if not os.access(args.gpumon, os.X_OK):
                raise SystemExit(f"gpumon not found at {args.gpumon} (build it, or pass --gpumon)")
            steps = duration_ms // interval_ms
            estimate = args.nodes * args.gpus * 200 * steps * 230
            free = shutil.disk_usage(work).free
            if estimate * 2.5 > free:
                raise SystemExit(f"about {estimate / 1e9:.1f} GB of text plus the stores will not "
                                 f"fit in {free / 1e9:.1f} GB free under {work}")
            now_ms = int(time.time() * 1000)
            start_ms = (now_ms - duration_ms) // DAY_MS * DAY_MS
            input_path = os.path.join(work, "gpus.om")
            argv = [args.gpumon, "simulate-export", "--out", input_path, "--nodes", args.nodes,
                    "--gpus", args.gpus, "--model", args.model, "--duration", args.duration,
                    "--interval", args.interval, "--start", start_ms // 1000, "--seed", args.seed]
            log("generating: " + " ".join(str(a) for a in argv))
            rc, wall, cpu, rss, text = run_measured(argv)
            if rc != 0:
                raise RuntimeError(f"simulate-export exited {rc}:\n{text[-3000:]}")
            gen = {"argv": [str(a) for a in argv], "wall_s": wall, "cpu_s": cpu,
                   "peak_rss_kib": rss, "summary": text.strip().splitlines()[-1]}
            log(f"generated in {wall:.1f} s: {gen['summary']}")
        t = time.monotonic()
        info = scan_input(input_path)
        size = os.path.getsize(input_path)
        log(f"input: {info['samples']:,} samples, {info['series']:,} series, {size / 1e9:.2f} GB, "
            f"{(info['max_ts'] - info['min_ts']) / 3600000:.2f} h "
            f"(scanned in {time.monotonic() - t:.1f} s); reference: {len(info['ref'])} series")
        if gen:
            m = re.search(r"(\d+) series, (\d+) samples", gen["summary"])
            if not m or (int(m.group(1)), int(m.group(2))) != (info["series"], info["samples"]):
                raise RuntimeError(f"the file has {info['series']} series, {info['samples']} "
                                   f"samples; gpumon said: {gen['summary']}")

        if "gpumon" in systems:
            r = run_gpumon(args, input_path, info, work)
            if r:
                results.append(r)
        if "prometheus" in systems:
            results.append(run_prometheus(args, input_path, info, work, one_block=True))
        if "prometheus-2h" in systems:
            results.append(run_prometheus(args, input_path, info, work, one_block=False))
        if "victoriametrics" in systems:
            results.append(run_victoriametrics(args, input_path, info, work))

        for r in results:
            if r["samples"] is not None and r["samples"] != info["samples"]:
                log(f"WARNING: {r['system']} holds {r['samples']:,} samples, the file has "
                    f"{info['samples']:,}")
        print()
        print("Command: `bench/tsdb/compare_storage.py " + " ".join(sys.argv[1:]) + "`")
        print(f"Input: {info['samples']:,} samples, {info['series']:,} series, "
              f"{size / 1e9:.2f} GB of OpenMetrics text, "
              f"{(info['max_ts'] - info['min_ts'] + interval_ms) / 3600000:g} h"
              + (f" ({args.nodes} nodes x {args.gpus} {args.model} GPUs every {args.interval}, "
                 f"seed {args.seed})" if gen else f" ({args.input})"))
        print(f"Machine: {machine_description()}")
        print()
        print(markdown(results, info))
        print()
        for r in results:
            c = r.get("lossless")
            if c:
                print(f"- {r['system']}: lossless check on {len(info['ref'])} series of "
                      f"{REF_HOST} GPU {REF_GPU}: {c['exact']:,} of {c['compared']:,} values "
                      f"bit-identical, {c['missing']:,} missing"
                      + (f"; worst: {c['worst']}" if c["worst"] else ""))
            if "lossless_all" in r:
                a = r["lossless_all"]
                print(f"- {r['system']}: every sample read back with `gpumon tsdb dump` "
                      f"({a['dump_wall_s']:.1f} s): {a['all_samples']:,} samples, "
                      + ("identical to the file (timestamps and float bits)" if a["all_equal"]
                         else f"NOT identical to the file's {info['samples']:,}"))
            if "precision_probe" in r:
                changed = r["precision_probe"]
                print(f"- {r['system']}: precision probe: {len(changed)} of "
                      f"{len(PRECISION_PROBE)} values changed"
                      + "".join(f"; {k} {v[0]!r} -> {v[1]!r}" for k, v in changed.items()))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"input": {k: v for k, v in info.items()
                                     if k not in ("ref", "digest")},
                           "input_bytes": size, "generate": gen,
                           "machine": machine_description(), "results": results}, f, indent=2)
    finally:
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
