#!/usr/bin/env python3
"""gpumon's PromQL answers equal a real Prometheus's on the same data.

A deterministic GPU-shaped OpenMetrics file (a few nodes x GPUs: gauges,
counters with a reset, an info metric, a classic histogram, a series that
ends early and one that starts late) is loaded into Prometheus 2.42 with
`promtool tsdb create-blocks-from openmetrics` and into gpumon with `gpumon
tsdb import`. Both servers run on loopback and answer the same set of
queries through /api/v1/query (at several times) and /api/v1/query_range;
every answer must agree: status, errorType on errors, resultType, the set of
series label sets, timestamps, and values within 1e-9 relative (NaN equals
NaN). Every mismatch is printed with the query, the time and both answers.

Prometheus 2.42 is the reference available as a Debian package; gpumon
follows Prometheus 3.x. The data and queries steer clear of everything the
two versions answer differently:
- Range selectors and the lookback window are left-closed in 2.x and
  left-open in 3.x. Samples lie on whole seconds = 3 (mod 15); every query
  time (instant times, range starts, `@` times) ends in .5 s, so t - range
  and t - lookback never hit a sample. Subquery steps are whole minutes, so
  their aligned inner evaluation times are whole seconds = 0 (mod 15)
  (ranges and offsets inside subqueries are whole minutes): an inner window
  never starts on a sample, and an outer window (t - range, .5 s) never
  starts on an inner evaluation time.
- rate()/increase() moved the "do not extrapolate below zero" clamp after
  the "series starts inside the window" check in 3.x; the two orders differ
  only for a counter that starts inside the window with a first value of
  about one average increment. Every counter starts at the data's start
  with a value of many increments (the late series is a gauge), and the XID
  counter's reset is mid-series, with no gap: no window meets that case.
- holt_winters (renamed double_exponential_smoothing in 3.x and behind a
  feature flag), sort_by_label/sort_by_label_desc, limitk/limit_ratio,
  mad_over_time, first_over_time, ts_of_*_over_time, info(), duration
  arithmetic, numbers as durations and quoted UTF-8 names do not exist in
  2.42, and native-histogram functions need data neither loads: none used.
- `le` values are written already normalized (3.x normalizes "1" to "1.0"
  at ingestion; 2.42 keeps the text), so le selectors mean the same.
- Regex `.` matches newlines in 3.x only: no label value has a newline.
- Values are unique floats, so topk/bottomk and sort() never face ties (whose
  order is an implementation detail). The order of series is compared for
  sort()/sort_desc() instant queries only; elsewhere it is unspecified.
- Sums and averages use Kahan summation in 3.x and plain summation in 2.42:
  hence the 1e-9 relative tolerance, plus 1e-12 absolute for results that
  are a cancellation to about zero (e.g. deriv of a flat counter).
"""

import json
import math
import os
import random
import subprocess
import tempfile
import time
import urllib.parse

from harness import (TestFailure, check, http_get, need_tool, run_test, start_on_free_port)

T0 = 1_700_000_000  # first sample at T0 + 3
STEP = 15
STEPS = 960  # 4 h
NODES = 3
GPUS = 4
GONE = ("node-2", "3")  # this GPU's series end at GONE_STEP
GONE_STEP = 640
LATE = ("node-3", "0")  # a temperature series that starts at LATE_STEP
LATE_STEP = 480
RESET = ("node-1", "2")  # this GPU's XID counter resets at RESET_STEP
RESET_STEP = 500
BUCKETS = ["0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "+Inf"]

# Instant query times: 1 h in; 2.5 h in; after GONE ended (beyond its
# lookback); just past the last sample (ranges partly empty).
LAST_SAMPLE = T0 + 3 + STEP * (STEPS - 1)
INSTANT_TIMES = [T0 + 3600.5, T0 + 9000.5, T0 + 10000.5, LAST_SAMPLE + 150.5]
# Range queries (start, end, step in s): most of the data and past its end;
# a step that does not divide the data's interval, across GONE's end.
RANGES = [(T0 + 1800.5, LAST_SAMPLE + 420.5, 60), (T0 + 5000.5, T0 + 9900.5, 97)]
AT = T0 + 5400.5  # for `@` in queries

REL_TOL = 1e-9
ABS_TOL = 1e-12


def fmt(v):
    return repr(float(v)) if math.isfinite(v) else ("NaN" if math.isnan(v) else
                                                     ("+Inf" if v > 0 else "-Inf"))


def labels_text(labels):
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}"


def generate(path):
    """Writes the OpenMetrics input; families in order, within a family
    time-major (both importers accept interleaved series)."""
    rnd = random.Random(20240601)
    gpus = [(f"node-{n}", str(g)) for n in range(NODES) for g in range(GPUS)]

    def gpu_labels(node, gpu):
        model = "H100" if node == "node-2" else "H200"
        return (("job", "gpumon"), ("instance", f"{node}:9400"), ("hostname", node), ("gpu", gpu),
                ("model", model))

    def steps_of(key):
        if key == GONE:
            return range(GONE_STEP)
        return range(STEPS)

    families = []  # (name, type, [(sample name, labels, {step: value})])

    temp, mem_temp, power = [], [], []
    for key in gpus + [LATE]:
        phase = rnd.uniform(0, 6.28)
        base = rnd.uniform(40, 55)
        steps = range(LATE_STEP, STEPS) if key == LATE else steps_of(key)
        t_vals, m_vals, p_vals = {}, {}, {}
        for k in steps:
            t = base + 12 * math.sin(k / 40 + phase) + rnd.uniform(-1.5, 1.5)
            t_vals[k] = t
            m_vals[k] = t + 8 + rnd.uniform(0, 3)
            p_vals[k] = 150 + 9 * (t - 35) + rnd.uniform(-20, 20)
        temp.append(("gpu_temperature_celsius", gpu_labels(*key), t_vals))
        if key != LATE:
            mem_temp.append(("gpu_memory_temperature_celsius", gpu_labels(*key), m_vals))
            power.append(("gpu_power_usage_watts", gpu_labels(*key), p_vals))
    families.append(("gpu_temperature_celsius", "gauge", temp))
    families.append(("gpu_memory_temperature_celsius", "gauge", mem_temp))
    families.append(("gpu_power_usage_watts", "gauge", power))

    energy, xid, info = [], [], []
    power_by_key = {(dict(s[1])["hostname"], dict(s[1])["gpu"]): s[2] for s in power}
    for key in gpus:
        e = rnd.uniform(1e8, 5e8)
        e_vals = {}
        for k in steps_of(key):
            e += power_by_key[key][k] * STEP
            e_vals[k] = e
        energy.append(("gpu_energy_joules_total", gpu_labels(*key), e_vals))
        x = float(rnd.randint(20, 60))
        x_vals = {}
        for k in steps_of(key):
            if key == RESET and k == RESET_STEP:
                x = 0.0
            elif rnd.random() < 0.03:
                x += rnd.randint(1, 3)
            x_vals[k] = x
        xid.append(("gpu_xid_errors_total", gpu_labels(*key), x_vals))
        node, gpu = key
        uuid = f"GPU-{node[-1]}{gpu}-{(int(node[-1]) * 7 + int(gpu)) * 2654435761 % 2**32:08x}"
        info.append(("gpu_info", gpu_labels(*key) + (("uuid", uuid),
                                                     ("driver_version", "550.54.15")),
                     {k: 1.0 for k in range(STEPS)}))
    families.append(("gpu_energy_joules", "counter", energy))
    families.append(("gpu_xid_errors", "counter", xid))
    families.append(("gpu_info", "gauge", info))

    # Training step time, a classic histogram per node.
    hist = []
    for n in range(NODES):
        node = f"node-{n}"
        base_labels = (("job", "train"), ("instance", f"{node}:8000"), ("hostname", node))
        # Counters start large (see the docstring on rate() extrapolation).
        counts = [float(rnd.randint(500, 2000)) for _ in BUCKETS]
        counts = [sum(counts[:i + 1]) for i in range(len(counts))]
        total = counts[-1] * 0.4
        bucket_vals = [{} for _ in BUCKETS]
        sum_vals, count_vals = {}, {}
        bounds = [float(b) for b in BUCKETS]
        slow = 1.0 + 0.5 * n
        for k in range(STEPS):
            for _ in range(rnd.randint(15, 30)):
                x = rnd.lognormvariate(math.log(0.2 * slow), 0.6 + 0.2 * math.sin(k / 90))
                total += x
                for i, b in enumerate(bounds):
                    if x <= b:
                        counts[i] += 1
            for i in range(len(BUCKETS)):
                bucket_vals[i][k] = counts[i]
            sum_vals[k] = total
            count_vals[k] = counts[-1]
        for i, le in enumerate(BUCKETS):
            hist.append(("step_time_seconds_bucket", base_labels + (("le", le),), bucket_vals[i]))
        hist.append(("step_time_seconds_sum", base_labels, sum_vals))
        hist.append(("step_time_seconds_count", base_labels, count_vals))
    families.append(("step_time_seconds", "histogram", hist))

    samples = 0
    with open(path, "w", encoding="utf-8") as f:
        for name, typ, series in families:
            f.write(f"# TYPE {name} {typ}\n")
            heads = [(f"{s}{labels_text(lbls)}", vals) for s, lbls, vals in series]
            for k in range(STEPS):
                ts = T0 + 3 + STEP * k
                for head, vals in heads:
                    if k in vals:
                        f.write(f"{head} {fmt(vals[k])} {ts}\n")
                        samples += 1
        f.write("# EOF\n")
    return samples


# ------------------------------------------------------------------ queries

# (query, where): where is "both" (instant at every INSTANT_TIMES and range),
# "instant" (instant only: range vectors, strings) or "range". A query
# marked "may_be_empty" may return no series from Prometheus; every other
# one must return data at least once, so that the comparison means something.
Q = [
    # Selectors and matchers.
    ("gpu_temperature_celsius", "both"),
    ('gpu_temperature_celsius{hostname="node-1"}', "both"),
    ('gpu_temperature_celsius{hostname!="node-1", gpu=~"[02]"}', "both"),
    ('gpu_temperature_celsius{model!~"H1.*"}', "both"),
    ('{__name__=~"gpu_(power_usage_watts|temperature_celsius)", gpu="1"}', "both"),
    ('{__name__="gpu_info", uuid=~"GPU-1.*"}', "both"),
    ("gpu_power_usage_watts offset 30m", "both"),
    (f"gpu_power_usage_watts @ {AT}", "both"),
    ("gpu_temperature_celsius @ start()", "range"),
    ("gpu_temperature_celsius @ end() offset 10m", "range"),
    ('gpu_temperature_celsius{hostname="node-0"}[2m]', "instant"),
    ('gpu_energy_joules_total{gpu="1"}[1m] offset 10m', "instant"),
    ('"a string"', "instant"),
    ("1 + 2 * 3 - 4 / 8 % 3 ^ 2", "both"),
    # Counters and gauges over ranges.
    ("rate(gpu_energy_joules_total[5m])", "both"),
    ("irate(gpu_energy_joules_total[5m])", "both"),
    ("increase(gpu_xid_errors_total[1h])", "both"),
    ("rate(gpu_xid_errors_total[30m])", "both"),
    ("resets(gpu_xid_errors_total[2h])", "both"),
    ("changes(gpu_xid_errors_total[1h])", "both"),
    ("delta(gpu_temperature_celsius[10m])", "both"),
    ("idelta(gpu_power_usage_watts[5m])", "both"),
    ("deriv(gpu_temperature_celsius[15m])", "both"),
    ("predict_linear(gpu_memory_temperature_celsius[30m], 3600)", "both"),
    ("avg_over_time(gpu_power_usage_watts[10m])", "both"),
    ("max_over_time(gpu_temperature_celsius[20m]) - min_over_time(gpu_temperature_celsius[20m])",
     "both"),
    ("sum_over_time(gpu_power_usage_watts[3m])", "both"),
    ("count_over_time(gpu_temperature_celsius[7m])", "both"),
    ("quantile_over_time(0.9, gpu_temperature_celsius[30m])", "both"),
    ("stddev_over_time(gpu_power_usage_watts[30m])", "both"),
    ("stdvar_over_time(gpu_memory_temperature_celsius[30m])", "both"),
    ("last_over_time(gpu_temperature_celsius[10m])", "both"),
    ('present_over_time(gpu_temperature_celsius{hostname=~"node-[23]"}[10m])', "both"),
    ('absent_over_time(gpu_temperature_celsius{hostname="node-2",gpu="3"}[10m])',
     "both", "may_be_empty"),
    ('absent(nonexistent_metric{job="gpumon",hostname="x"})', "both"),
    ('absent(gpu_temperature_celsius{hostname="node-0"})', "both", "may_be_empty"),
    # Aggregations.
    ("sum by (hostname) (gpu_power_usage_watts)", "both"),
    ("avg without (gpu, instance) (gpu_temperature_celsius)", "both"),
    ("max by (model) (gpu_temperature_celsius)", "both"),
    ("min(gpu_memory_temperature_celsius)", "both"),
    ("count by (hostname) (gpu_temperature_celsius > 50)", "both"),
    ("stddev by (hostname) (gpu_power_usage_watts)", "both"),
    ("stdvar(gpu_power_usage_watts)", "both"),
    ("topk(3, gpu_temperature_celsius)", "both"),
    ("bottomk by (hostname) (1, gpu_power_usage_watts)", "both"),
    ("quantile by (hostname) (0.75, gpu_temperature_celsius)", "both"),
    ('count_values("celsius", round(gpu_temperature_celsius))', "both"),
    ("group by (hostname, model) (gpu_temperature_celsius)", "both"),
    ("sum(rate(gpu_energy_joules_total[5m])) by (hostname)", "both"),
    ("avg by (hostname) (rate(gpu_energy_joules_total[5m]))", "both"),
    ("sort_desc(sum by (hostname) (gpu_power_usage_watts))", "both"),
    ("sort(rate(gpu_energy_joules_total[10m]))", "both"),
    # Binary operators and vector matching.
    ("gpu_power_usage_watts * on(hostname, gpu) group_left(uuid, driver_version) gpu_info",
     "both"),
    ("gpu_memory_temperature_celsius - gpu_temperature_celsius", "both"),
    ("gpu_power_usage_watts / on(hostname) group_left sum by (hostname) (gpu_power_usage_watts)",
     "both"),
    ("sum by (hostname) (gpu_power_usage_watts) / ignoring(model) group_right "
     "max by (hostname, model) (gpu_power_usage_watts)", "both"),
    ("gpu_temperature_celsius > bool 55", "both"),
    ("gpu_temperature_celsius > 55 and gpu_power_usage_watts > 300", "both"),
    ('gpu_temperature_celsius{hostname="node-0"} or gpu_temperature_celsius{gpu="0"}', "both"),
    ('gpu_temperature_celsius unless on(hostname) gpu_power_usage_watts{hostname="node-1"}',
     "both"),
    ("2 * gpu_power_usage_watts + 10 < 4000", "both"),
    ("gpu_power_usage_watts % 7 != 3", "both"),
    ("gpu_temperature_celsius ^ 0.5 atan2 gpu_memory_temperature_celsius", "both"),
    ("-gpu_power_usage_watts <= bool -300", "both"),
    ("scalar(sum(gpu_power_usage_watts)) / count(gpu_power_usage_watts)", "both"),
    ("time() - timestamp(gpu_temperature_celsius)", "both"),
    ("vector(time()) > 0", "both"),
    ('scalar(gpu_power_usage_watts{hostname="node-0", gpu="0"}) * 2', "both"),
    # Classic histograms.
    ("histogram_quantile(0.9, sum by (le) (rate(step_time_seconds_bucket[5m])))", "both"),
    ("histogram_quantile(0.5, rate(step_time_seconds_bucket[10m]))", "both"),
    ("histogram_quantile(0.99, sum by (le, hostname) (increase(step_time_seconds_bucket[1h])))",
     "both"),
    ("rate(step_time_seconds_sum[5m]) / rate(step_time_seconds_count[5m])", "both"),
    ('step_time_seconds_bucket{le="1.0"} / ignoring(le) step_time_seconds_count', "both"),
    # Label functions.
    ('label_replace(gpu_temperature_celsius, "host", "$1", "instance", "(.*):.*")', "both"),
    ('label_replace(gpu_power_usage_watts, "gpu", "g$1", "gpu", "([0-9]+)")', "both"),
    ('label_join(gpu_power_usage_watts, "id", "/", "hostname", "gpu")', "both"),
    # Math functions.
    ("abs(deriv(gpu_power_usage_watts[10m]))", "both"),
    ("ceil(gpu_temperature_celsius) - floor(gpu_temperature_celsius)", "both"),
    ("round(gpu_power_usage_watts, 5)", "both"),
    ("round(gpu_temperature_celsius)", "both"),
    ("clamp(gpu_temperature_celsius, 45, 60)", "both"),
    ("clamp_min(gpu_temperature_celsius, 50) + clamp_max(gpu_temperature_celsius, 50)", "both"),
    ("exp(gpu_temperature_celsius / 100) + ln(gpu_power_usage_watts)", "both"),
    ("log2(gpu_power_usage_watts) * log10(gpu_temperature_celsius)", "both"),
    ("sqrt(-gpu_temperature_celsius)", "both"),  # NaN values
    ("sgn(delta(gpu_temperature_celsius[5m]))", "both"),
    ("sin(rad(gpu_temperature_celsius)) + cos(gpu_temperature_celsius) "
     "+ deg(gpu_power_usage_watts) * pi()", "both"),
    ("tanh(gpu_temperature_celsius / 50) + asinh(gpu_temperature_celsius)", "both"),
    ("vector(1) / 0", "both"),
    # Time functions.
    ("hour(timestamp(gpu_temperature_celsius)) + minute(timestamp(gpu_temperature_celsius))",
     "both"),
    ("day_of_week() + day_of_month() + days_in_month() + month() + year() + day_of_year()",
     "both"),
    # Subqueries (whole-minute steps; see the docstring).
    ("max_over_time(rate(gpu_energy_joules_total[5m])[30m:1m])", "both"),
    ("avg_over_time(gpu_temperature_celsius[1h:5m])", "both"),
    ("min_over_time(sum by (hostname) (gpu_power_usage_watts)[20m:])", "both"),
    ("max_over_time(gpu_temperature_celsius[10m:1m] offset 30m)", "both"),
    ("deriv(avg by (hostname) (gpu_temperature_celsius)[30m:2m])", "both"),
    (f"max_over_time(gpu_temperature_celsius[10m:1m] @ {AT})", "both"),
    (f"sum(rate(gpu_energy_joules_total[5m] @ {AT}))", "both"),
    ("rate(gpu_energy_joules_total[5m] @ end() offset 30m)", "range"),
    # Errors: both must fail the same way.
    ("rate(gpu_power_usage_watts)", "both", "error"),
    ("sum(", "both", "error"),
    ("gpu_temperature_celsius[5m]", "range", "error"),
]

# ------------------------------------------------------------------ comparison


def api(base, path, params):
    url = f"{base}{path}?{urllib.parse.urlencode(params)}"
    r = http_get(url, timeout=30)
    try:
        body = json.loads(r.body)
    except ValueError:
        raise TestFailure(f"{url} answered HTTP {r.status} with non-JSON: {r.body[:300]!r}")
    return body


def num(text):
    return float(text)  # handles "NaN", "+Inf", "-Inf"


def ms(t):
    return round(float(t) * 1000)


def normalize(body):
    """A comparable form of an API answer: ("error", errorType) or
    (resultType, data) with series keyed by their sorted label set."""
    if body.get("status") != "success":
        return ("error", body.get("errorType")), body.get("error")
    data = body["data"]
    rt = data["resultType"]
    res = data["result"]
    if rt in ("scalar", "string"):
        return (rt, (ms(res[0]), res[1] if rt == "string" else num(res[1]))), None
    out = {}
    for s in res:
        key = tuple(sorted(s["metric"].items()))
        if rt == "vector":
            pts = [(ms(s["value"][0]), num(s["value"][1]))]
        else:
            pts = [(ms(t), num(v)) for t, v in s["values"]]
        if key in out:
            return ("duplicate series", key), None
        out[key] = pts
    return (rt, out), None


def close(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return True
    return abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), ABS_TOL)


def diff(want, got):
    """A short description of how got differs from want, or None."""
    if want[0] != got[0]:
        return f"kind {got[0]!r}, want {want[0]!r}"
    kind = want[0]
    if kind == "error":
        return None
    if kind in ("scalar", "string"):
        (tw, vw), (tg, vg) = want[1], got[1]
        if tw != tg or not close(vw, vg):
            return f"{kind} ({tg}, {vg!r}), want ({tw}, {vw!r})"
        return None
    w, g = want[1], got[1]
    missing = [k for k in w if k not in g]
    extra = [k for k in g if k not in w]
    problems = []
    if missing:
        problems.append(f"missing series {[dict(k) for k in missing[:3]]}"
                        f"{' ...' if len(missing) > 3 else ''} ({len(missing)})")
    if extra:
        problems.append(f"unexpected series {[dict(k) for k in extra[:3]]}"
                        f"{' ...' if len(extra) > 3 else ''} ({len(extra)})")
    for k in w:
        if k not in g:
            continue
        pw, pg = w[k], g[k]
        tw, tg = [t for t, _ in pw], [t for t, _ in pg]
        if tw != tg:
            only_w = sorted(set(tw) - set(tg))[:3]
            only_g = sorted(set(tg) - set(tw))[:3]
            problems.append(f"{dict(k)}: timestamps differ ({len(tg)} points, want {len(tw)}; "
                            f"only in want: {only_w}, only in got: {only_g})")
            continue
        for (t, vw), (_, vg) in zip(pw, pg):
            if not close(vw, vg):
                problems.append(f"{dict(k)} at {t / 1000}: {vg!r}, want {vw!r}")
                break
    return "; ".join(problems[:4]) if problems else None


def short(body):
    text = json.dumps(body, sort_keys=True)
    return text if len(text) <= 1500 else text[:1500] + f"... ({len(text)} chars)"


# ------------------------------------------------------------------ servers


def start_prometheus(prometheus, promtool, om, tmp):
    data = os.path.join(tmp, "prom")
    p = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", om, data],
                       capture_output=True, timeout=120)
    check(p.returncode == 0, f"promtool create-blocks-from exited {p.returncode}:\n"
                             f"{p.stderr.decode(errors='replace')[-3000:]}")
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w", encoding="utf-8") as f:
        # evaluation_interval is the default step of subqueries like [20m:].
        f.write("global:\n  scrape_interval: 15s\n  evaluation_interval: 1m\n")
    return start_on_free_port(
        lambda port: [prometheus, f"--config.file={config}", f"--storage.tsdb.path={data}",
                      f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
                      "--storage.tsdb.retention.time=100y"],
        "/-/ready", "prometheus", ready_timeout=60)


def start_gpumon(gpumon, om, tmp):
    data = os.path.join(tmp, "gpumon")
    p = subprocess.run([gpumon, "tsdb", "import", "--data", data, om], capture_output=True,
                       timeout=120)
    check(p.returncode == 0, f"gpumon tsdb import exited {p.returncode}:\n"
                             f"{p.stderr.decode(errors='replace')[-3000:]}")
    return start_on_free_port(
        lambda port: [gpumon, "server", "--data", data, "--retention", "0",
                      "--listen", f"127.0.0.1:{port}"],
        "/api/v1/query?query=1", "gpumon server", ready_timeout=60)


def body(args):
    prometheus = need_tool("prometheus", ["/usr/bin/prometheus"])
    promtool = need_tool("promtool", ["/usr/bin/promtool"])
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        om = os.path.join(tmp, "gpus.om")
        n = generate(om)
        prom, prom_port = start_prometheus(prometheus, promtool, om, tmp)
        with prom:
            gm, gm_port = start_gpumon(args.gpumon, om, tmp)
            with gm:
                bases = (f"http://127.0.0.1:{prom_port}", f"http://127.0.0.1:{gm_port}")
                failures, compared = run_queries(bases)
                for who, proc in (("prometheus", prom), ("gpumon server", gm)):
                    check(proc.running(), f"{who} died during the queries\n{proc.describe()}")
    print(f"{len(Q)} queries, {compared} answers compared on {n} samples "
          f"in {time.monotonic() - started:.1f} s")
    if failures:
        raise TestFailure(f"{len(failures)} of {compared} answers differ from Prometheus "
                          f"(listed above)")


def run_queries(bases):
    failures = []
    compared = 0
    for entry in Q:
        query, where = entry[0], entry[1]
        flags = entry[2:]
        requests = []
        if where in ("both", "instant"):
            requests += [("/api/v1/query", {"query": query, "time": repr(t)}, f"time={t!r}")
                         for t in INSTANT_TIMES]
        if where in ("both", "range"):
            requests += [("/api/v1/query_range",
                          {"query": query, "start": repr(start), "end": repr(end),
                           "step": str(step)}, f"range start={start!r} end={end!r} step={step}")
                         for start, end, step in RANGES]
        non_empty = False
        for path, params, when in requests:
            answers = [api(base, path, params) for base in bases]
            (want, want_err), (got, got_err) = normalize(answers[0]), normalize(answers[1])
            compared += 1
            if "error" in flags:
                check(want[0] == "error",
                      f"{query!r} ({when}): Prometheus did not fail: {short(answers[0])}")
                non_empty = True
            elif want[0] == "error":
                raise TestFailure(f"{query!r} ({when}): Prometheus failed: {want_err}")
            elif want[0] in ("scalar", "string") or want[1]:
                non_empty = True
            problem = diff(want, got)
            if (not problem and path == "/api/v1/query" and query.startswith("sort")
                    and want[0] == "vector"):
                # sort() and sort_desc() order an instant vector; values are unique.
                if list(want[1]) != list(got[1]):
                    problem = f"order {list(got[1])}, want {list(want[1])}"
            if problem:
                failures.append(query)
                print(f"MISMATCH {query}\n  at: {path} {when}\n  difference: {problem}\n"
                      f"  prometheus: {short(answers[0])}\n  gpumon:     {short(answers[1])}\n",
                      flush=True)
        check(non_empty or "may_be_empty" in flags,
              f"{query!r}: Prometheus returned no data at any time; the query or data is wrong")
    return failures, compared


if __name__ == "__main__":
    run_test(body)
