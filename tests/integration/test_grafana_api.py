#!/usr/bin/env python3
"""`gpumon server` answers the requests Grafana's Prometheus data source makes.

Writes a small OpenMetrics history (GPU temperature and utilisation of 2
nodes x 2 GPUs, 30 minutes at 15 s), imports it with `gpumon tsdb import`,
starts `gpumon server --data` on a free loopback port and replays Grafana's
requests: the health check (POST /api/v1/query `1+1` at time=now), build
info, label names and values over the dashboard range, series, a range
query with a step, an aggregation, metadata. Expected answers are computed
here from the input. A gzip-accepting request must get gzip that decodes to
the same JSON, and Prometheus's bad_data errors must come back as HTTP 400.
"""

import gzip
import json
import os
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from harness import check, run_test, start_on_free_port

BASE = 1700000000  # first sample, Unix seconds
STEP = 15
SAMPLES = 121  # 30 minutes
NODES = ["node-a", "node-b"]
GPUS = ["0", "1"]

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def temp(node, gpu, i):
    return 40 + 3 * NODES.index(node) + int(gpu) + (i % 10) * 0.5


def util(node, gpu, i):
    return float((i * 7 + 13 * int(gpu) + 29 * NODES.index(node)) % 101)


def write_input(path):
    """Returns {series labels (frozenset of items): {t_seconds: value}}."""
    data = {}
    lines = []
    for name, fn, help_text in (("gpu_temperature_celsius", temp, "GPU temperature."),
                                ("gpu_utilization_percent", util, "GPU utilisation.")):
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} gauge")
        for node in NODES:
            for gpu in GPUS:
                labels = {"__name__": name, "node": node, "gpu": gpu}
                key = frozenset(labels.items())
                data[key] = {}
                for i in range(SAMPLES):
                    t = BASE + i * STEP
                    v = fn(node, gpu, i)
                    data[key][t] = v
                    lines.append(f'{name}{{gpu="{gpu}",node="{node}"}} {v} {t}')
    lines.append("# EOF")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return data


def request(base, path, params=None, post=False, headers=None):
    """Returns (status, headers, raw body)."""
    query = urllib.parse.urlencode(params or [], doseq=True)
    url = base + path
    body = None
    hdrs = dict(headers or {})
    if post:
        body = query.encode()
        hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    elif query:
        url += "?" + query
    check(url.startswith("http://127.0.0.1:"), f"refusing non-loopback URL {url}")
    req = urllib.request.Request(url, data=body, headers=hdrs, method="POST" if post else "GET")
    try:
        with _OPENER.open(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def api(base, path, params=None, post=False):
    status, headers, body = request(base, path, params, post)
    check(status == 200, f"{path} {params}: HTTP {status}: {body[:500]!r}")
    check(headers.get("Content-Type", "").startswith("application/json"),
          f"{path}: Content-Type {headers.get('Content-Type')}")
    doc = json.loads(body)
    check(doc.get("status") == "success", f"{path}: {doc}")
    check("data" in doc, f"{path}: no data in {doc}")
    return doc["data"]


def body(args):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "history.om")
        data = write_input(src)
        datadir = os.path.join(tmp, "data")
        p = subprocess.run([args.gpumon, "tsdb", "import", "--data", datadir, src],
                           capture_output=True, timeout=120)
        check(p.returncode == 0, f"tsdb import exited {p.returncode}: {p.stderr.decode()}")

        proc, port = start_on_free_port(
            lambda port: [args.gpumon, "server", "--listen", f"127.0.0.1:{port}",
                          "--data", datadir, "--retention", "0"],
            "/-/ready", "gpumon server")
        base = f"http://127.0.0.1:{port}"
        try:
            exercise(base, data)
        except BaseException:
            print(proc.describe())
            raise
        finally:
            rc = proc.stop()
        check(rc == 0, f"server exited {rc} on SIGTERM\n{proc.describe()}")


def exercise(base, data):
    start, end = BASE, BASE + (SAMPLES - 1) * STEP
    rng = {"start": str(start), "end": str(end)}

    # Health check: POST 1+1 at time=now.
    now = round(time.time(), 3)
    d = api(base, "/api/v1/query", {"query": "1+1", "time": f"{now:.3f}"}, post=True)
    check(d["resultType"] == "scalar", f"1+1: {d}")
    check(abs(d["result"][0] - now) < 0.0015 and d["result"][1] == "2", f"1+1: {d}")

    info = api(base, "/api/v1/status/buildinfo")
    check(isinstance(info.get("version"), str) and info["version"][0].isdigit(),
          f"buildinfo: {info}")

    want_names = sorted({k for key in data for k, _ in key})
    names = api(base, "/api/v1/labels", rng)
    check(names == want_names, f"labels {names}, want {want_names}")

    sel = '{node="node-b"}'
    want = sorted({dict(key)["__name__"] for key in data if dict(key)["node"] == "node-b"})
    got = api(base, "/api/v1/label/__name__/values", {**rng, "match[]": sel})
    check(got == want, f"__name__ values for {sel}: {got}, want {want}")
    got = api(base, "/api/v1/label/gpu/values", rng)
    check(got == GPUS, f"gpu values {got}")

    series = api(base, "/api/v1/series", {**rng, "match[]": "gpu_temperature_celsius"})
    want = sorted((dict(k) for k in data if dict(k)["__name__"] == "gpu_temperature_celsius"),
                  key=lambda m: sorted(m.items()))
    got = sorted(series, key=lambda m: sorted(m.items()))
    check(got == want, f"series {got}, want {want}")
    # Grafana's POST form of the same request, two match[].
    series2 = api(base, "/api/v1/series",
                  [("match[]", "gpu_temperature_celsius"), ("match[]", 'gpu_utilization_percent{gpu="1"}'),
                   ("start", str(start)), ("end", str(end))], post=True)
    check(len(series2) == len(want) + len(NODES), f"series with two match[]: {series2}")

    # Range query with a step: one point per step from the sample at that time.
    q = 'gpu_utilization_percent{node="node-a",gpu="1"}'
    r_start, r_end, r_step = BASE + 60, BASE + 900, 60
    d = api(base, "/api/v1/query_range",
            {"query": q, "start": str(r_start), "end": str(r_end), "step": f"{r_step}s"})
    check(d["resultType"] == "matrix" and len(d["result"]) == 1, f"range: {d}")
    key = frozenset({"__name__": "gpu_utilization_percent", "node": "node-a", "gpu": "1"}.items())
    check(d["result"][0]["metric"] == dict(key), f"range metric {d['result'][0]['metric']}")
    want_points = [[t, data[key][t]] for t in range(r_start, r_end + 1, r_step)]
    got_points = [[p[0], float(p[1])] for p in d["result"][0]["values"]]
    check(got_points == want_points, f"range points {got_points}, want {want_points}")
    # Step as float seconds.
    d2 = api(base, "/api/v1/query_range",
             {"query": q, "start": str(r_start), "end": str(r_end), "step": "60"})
    check(d2 == d, "step=60 and step=60s differ")

    # Instant aggregation at a sample time.
    t = BASE + 300
    d = api(base, "/api/v1/query", {"query": "sum(gpu_temperature_celsius)", "time": str(t)})
    want_sum = sum(v[t] for k, v in data.items() if dict(k)["__name__"] == "gpu_temperature_celsius")
    check(d["resultType"] == "vector" and len(d["result"]) == 1, f"sum: {d}")
    check(abs(float(d["result"][0]["value"][1]) - want_sum) < 1e-9,
          f"sum {d['result'][0]['value']}, want {want_sum}")
    check(d["result"][0]["value"][0] == t, f"sum timestamp {d['result'][0]['value']}")

    meta = api(base, "/api/v1/metadata")
    check(isinstance(meta, dict), f"metadata: {meta}")
    for name, entries in meta.items():
        check(all({"type", "help", "unit"} <= set(e) for e in entries), f"metadata {name}")

    # gzip: same JSON once decoded.
    params = {"query": "gpu_temperature_celsius", "start": str(start), "end": str(end),
              "step": "15"}
    status, headers, plain = request(base, "/api/v1/query_range", params)
    check(status == 200 and not headers.get("Content-Encoding"), "plain range query")
    status, headers, packed = request(base, "/api/v1/query_range", params,
                                      headers={"Accept-Encoding": "gzip"})
    check(status == 200 and headers.get("Content-Encoding") == "gzip",
          f"gzip: HTTP {status}, Content-Encoding {headers.get('Content-Encoding')}")
    check(len(packed) < len(plain), "gzip body is not smaller")
    check(json.loads(gzip.decompress(packed)) == json.loads(plain), "gzip decodes differently")

    # Errors: Prometheus's bad_data with HTTP 400.
    status, _, raw = request(base, "/api/v1/query_range",
                             {"query": "up", "start": "10", "end": "20", "step": "0"})
    doc = json.loads(raw)
    check(status == 400 and doc["status"] == "error" and doc["errorType"] == "bad_data",
          f"step=0: HTTP {status} {doc}")
    status, _, raw = request(base, "/api/v1/query", {"query": "sum(", "time": str(t)})
    doc = json.loads(raw)
    check(status == 400 and doc["error"].startswith('invalid parameter "query"'),
          f"parse error: HTTP {status} {doc}")


if __name__ == "__main__":
    run_test(body)
