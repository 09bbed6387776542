#!/usr/bin/env python3
"""The rule pack predicts a GPU's thermal slowdown, end to end, on gpumon and
on a real Prometheus.

Setup, all on loopback:
- `gpumon simulate`: one node of 8 H200s, every GPU training, GPU 3's cooling
  degrading (thermal-runaway), SPEED times faster than real time, writing
  its ground truth (when the HBM reached its limit, when the first thermal
  slowdown began) to a file;
- a webhook receiver (an HTTP server in this script recording every
  notification with the time it arrived) behind a real Alertmanager;
- `gpumon server` and a real Prometheus, each scraping the simulated node
  every second with the whole rule pack (rules/*.rules.yml) and notifying the
  same Alertmanager; external_labels {replica: gpumon|prometheus} tell their
  alerts apart.

Time compression. The node runs SPEED times faster than real time while the
servers evaluate rules in real time, so the rule files are loaded as scaled
copies (rule_time_scale.py) in which every PromQL duration of every `expr`
(range selectors, subquery ranges and steps, offsets), every `for` and the
groups' `interval` are divided by SPEED. Number literals that carry time
are scaled too, each named in SCALE_CONSTANTS below:
- seconds (divided by SPEED): the forecast alerts' "less than 1800 s left"
  and the 180 s of their "rose over the last 3 minutes" check, and the `* 60`
  that turns the PCIe replay rate into replays a minute;
- rates per second (multiplied by SPEED): the NVLink error rate bound
  (100 a second) and, because the clock-event counters count simulated
  seconds, the bounds on the throttled fraction (the clamp at 1 and the 0.1
  of GpuClocksThrottled).
The forecast rules are "strict": each of their number literals must be
classified, so a literal added to them later cannot be left unscaled
unnoticed. Every scaled copy passes `promtool check rules`, and the
durations and `for` values both servers report for the loaded rules
(/api/v1/rules, parsed by each engine) are checked against the scaler's
output. Annotations are not scaled: a "how long is left" in them reads in
compressed (real) seconds.

Both servers start before the simulator and have tried to scrape it once,
so each sees the node from its first sample (Prometheus applies new targets
only every 5 s; a counter increment one server saw and the other did not
would make their increase() differ).

Expects:
1. GpuMemoryTemperatureSlowdownPredicted for GPU 3 of the simulated node
   reaches the webhook from gpumon, with a runbook_url pointing at
   docs/runbooks/GpuMemoryTemperatureSlowdownPredicted.md (which exists),
   before the slowdown begins: at least MIN_LEAD_SIM_S simulated seconds
   before the ground truth's first thermal (or memory) slowdown, and before
   the first sample in which gpumon itself saw a thermal slowdown clock
   event reason active on GPU 3. Prometheus's copy reaches it too.
2. No slowdown-predicted alert for the healthy GPUs, on either server.
3. Prometheus fires the same alerts: the (alertname, severity, gpu,
   hostname) that went firing (ALERTS{alertstate="firing"}) on each server
   are the same, allowing for alerts that first fired within TOLERANCE_S of
   the end on one server only, and the first firing times of each agree
   within TOLERANCE_S.
A timeline (when each alert fired on each server and reached the webhook,
when the slowdown began) is printed on every run.
"""

import glob
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from harness import (Process, Skip, TestFailure, check, free_port, http_get, need_tool,
                     run_test, start_on_free_port)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rule_time_scale as rts  # noqa: E402

SPEED = 30
GPU = "3"
HOSTNAME = "sim-node-0000"
# The runaway starts once the windows of the forecast rules hold history
# (10 simulated minutes) and brings the HBM to its limit 15 minutes later.
SCENARIOS = [f"thermal-runaway:gpu={GPU}:start=10m:time=15m", "training"]
PREDICTED = "GpuMemoryTemperatureSlowdownPredicted"
PREDICTED_ALERTS = (PREDICTED, "GpuTemperatureSlowdownPredicted")
SLOWDOWN_REASONS = ("sw_thermal_slowdown", "hw_thermal_slowdown")
# The least warning that counts as a prediction, in simulated seconds.
MIN_LEAD_SIM_S = 120
# Real seconds to keep running once the slowdown began, so the alerts about
# it (for: 1-2 simulated minutes) fire on both servers.
AFTER_SLOWDOWN_S = 15
# Real seconds allowed between the two servers for the same alert. Compressed
# 30 times, the pack's windows hold only a handful of 1 s samples, and
# Prometheus 2.42 keeps the sample on a window's left edge where gpumon (as
# Prometheus 3) does not: a borderline condition (the die forecast's "still
# rising") can then flip a few evaluations apart. 15 s is 7.5 simulated minutes
# at 30x and about 30 s in real time at 1x; the headline alert agrees far closer.
TOLERANCE_S = 15
# Upper bound on the whole run (from the simulator's start).
RUN_DEADLINE_S = 150

_FORECAST_ALERT = {"seconds": ["1800", "180"], "plain": ["0.7", "0.5", "1.15"], "strict": True}
SCALE_CONSTANTS = {
    PREDICTED: _FORECAST_ALERT,
    "GpuTemperatureSlowdownPredicted": _FORECAST_ALERT,
    "gpu:memory_temperature:seconds_to_slowdown": {"plain": ["0"], "strict": True},
    "gpu:temperature:seconds_to_slowdown": {"plain": ["0"], "strict": True},
    "gpu:memory_temperature:rise_rate": {"strict": True},
    "gpu:temperature:rise_rate": {"strict": True},
    "GpuPcieReplayRateHigh": {"seconds": ["60"]},
    "gpu:throttled:ratio_rate10m": {"per_second": ["1"]},
    "GpuClocksThrottled": {"per_second": ["0.1"]},
    "GpuNvlinkErrorRateHigh": {"per_second": ["100"]},
}


# --------------------------------------------- the scaler's self-check

_SAMPLES = [
    # (expr, factor, seconds, per-second, expected)
    ("rate(x[5m])", 60, (), (), "rate(x[5s])"),
    ("max_over_time(gpu_memory_temperature_celsius[20m] offset 10m)", 60, (), (),
     "max_over_time(gpu_memory_temperature_celsius[20s] offset 10s)"),
    ("avg_over_time(deriv(t[10m])[30m:1m])", 60, (), (), "avg_over_time(deriv(t[10s])[30s:1s])"),
    ("max_over_time(t[1h:])", 120, (), (), "max_over_time(t[30s:])"),
    ("rate(x[1h30m] offset -2m)", 60, (), (), "rate(x[90s] offset -2s)"),
    ("rate(x[90s])", 60, (), (), "rate(x[1500ms])"),
    ('x{reason="sw[5m]", a=~"1m|offset 5m"}[10m]', 10, (), (),
     'x{reason="sw[5m]", a=~"1m|offset 5m"}[60s]'),
    ("predict_linear(t[20m], 3600) > on(gpu) limit", 60, (), (),
     "predict_linear(t[20s], 60) > on(gpu) limit"),
    ("predict_linear(t[20m], 30 * 60)", 60, ("60",), (), "predict_linear(t[20s], 30 * 1)"),
    ("predict_linear(t[20m] , 1800 ) / 60", 60, (), (), "predict_linear(t[20s] , 30 ) / 60"),
    ("sum by (offset) (x) # a comment [5m]\n / 1800", 60, ("1800",), (),
     "sum by (offset) (x) # a comment [5m]\n / 30"),
    ("deriv(t[15m]) * 60 > 0.5 and seconds < 1800", 30, ("60", "1800"), (),
     "deriv(t[30s]) * 2 > 0.5 and seconds < 60"),
    ("clamp_max(rate(x[10m]), 1) > 0.1", 30, (), ("1", "0.1"), "clamp_max(rate(x[20s]), 30) > 3"),
    ("gpu:a:b[5m:30s] offset 1m", 30, (), (), "gpu:a:b[10s:1s] offset 2s"),
    ("foo_5m + `raw [5m]` + 'q\\'[5m]'", 60, (), (), "foo_5m + `raw [5m]` + 'q\\'[5m]'"),
]

_SAMPLE_FILE = """groups:
  - name: g  # comment
    interval: 1m
    rules:
      - alert: A
        expr: rate(x[5m]) > 0
        for: 10m
        labels:
          severity: warning
        annotations:
          summary: 'for: 5m [5m] offset 5m'
          description: |
            expr: rate(y[5m])
            for: 1h
      - record: "r:x:rate5m"
        expr: |
          sum by (gpu) (
            rate(x[5m])  # per second
          )
      - alert: B
        expr: >-
          (predict_linear(t[30m], 1800)
          >= l) and max_over_time(y[10m:1m] offset 1h)
        keep_firing_for: 2m
        for: '1m'
      - alert: C
        expr: "x{a=\\"b\\"}
          [2m]"
      - alert: D
        expr: t
          > 1800
  - name: flow
    rules:
      - {record: "f:x", expr: vector(1), labels: {xid: "46", a: b}}
      - {alert: F, expr: 'rate(x{a="1,2"}[5m]) > 0', for: 5m, labels: {severity: info}}
"""

_SAMPLE_SCALED = [
    ("A", "alert", "rate(x[10s]) > 0", "20s"),
    ("r:x:rate5m", "record", "sum by (gpu) (\n  rate(x[10s])  # per second\n)", None),
    ("B", "alert", "(predict_linear(t[60s], 60) >= l) and max_over_time(y[20s:2s] offset 120s)",
     "2s"),
    ("C", "alert", 'x{a="b"} [4s]', None),
    ("D", "alert", "t > 60", None),
    ("f:x", "record", "vector(1)", None),
    ("F", "alert", 'rate(x{a="1,2"}[10s]) > 0', "10s"),
]


def check_scaler():
    """The scaler on sample expressions and a sample rule file; raises
    AssertionError naming the case."""
    for expr, factor, secs, per, want in _SAMPLES:
        got = rts.scale_expr(expr, factor, secs, per)
        assert got == want, f"rts.scale_expr({expr!r}, {factor}) = {got!r}, want {want!r}"
    for bad in ("x @ 1609746000", "rate(x[5m:1x])", "rate(x[5 m])", "x[0.5m]",
                "predict_linear(t[5m], 30 * 60)", "rate(x[5m]"):
        try:
            rts.scale_expr(bad, 2)
        except rts.ScaleError:
            continue
        raise AssertionError(f"scale_expr accepted {bad!r}")
    try:
        rts.scale_expr("x > 60", 2, ("1800",))
        raise AssertionError("a missing seconds constant was accepted")
    except rts.ScaleError:
        pass
    for d, ms in (("1h30m", 5400000), ("250ms", 250), ("2d", 172800000), ("1y", 31536000000)):
        assert rts.parse_duration_ms(d) == ms, d
    original = rts.rule_summary(_SAMPLE_FILE)
    assert [r[:2] for r in original] == [r[:2] for r in _SAMPLE_SCALED], original
    assert original[2][2] == ("(predict_linear(t[30m], 1800) >= l) and "
                              "max_over_time(y[10m:1m] offset 1h)"), original
    assert original[3][2] == 'x{a="b"} [2m]', original
    report = []
    scaled_text = rts.scale_rule_text(_SAMPLE_FILE, 30, {"D": {"seconds": ["1800"]}}, report)
    scaled = rts.rule_summary(scaled_text)
    assert len(scaled) == len(_SAMPLE_SCALED), scaled
    for got, want in zip(scaled, _SAMPLE_SCALED):
        assert got[:2] == want[:2] and got[2].strip() == want[2], (got, want)
        assert want[3] is None or got[3] == want[3], (got, want)
    assert "    interval: 2s" in scaled_text, scaled_text
    assert "summary: 'for: 5m [5m] offset 5m'" in scaled_text, scaled_text
    assert "expr: rate(y[5m])" in scaled_text and "for: 1h" in scaled_text, scaled_text
    assert "keep_firing_for: 4s" in scaled_text, scaled_text
    assert '{record: "f:x", expr: vector(1), labels: {xid: "46", a: b}}' in scaled_text
    try:
        rts.scale_rule_text(_SAMPLE_FILE, 30, {"D": {"seconds": ["900"]}})
        raise AssertionError("a constant absent from the file was accepted")
    except rts.ScaleError:
        pass
    try:
        rts.scale_rule_text(_SAMPLE_FILE, 30, {"D": {"seconds": ["1800"], "strict": True},
                                           "A": {"strict": True}})
        raise AssertionError("an unclassified literal in a strict rule was accepted")
    except rts.ScaleError as e:
        assert "['0']" in str(e), e
    rts.scale_rule_text(_SAMPLE_FILE, 30, {"A": {"plain": ["0"], "strict": True},
                                       "B": {"strict": True}})
    assert rts.expr_durations_ms("rate(x[5m:30s] offset 1h) + y[1s500ms]") == [
        300000, 30000, 3600000, 1500]
    # Factor 1 changes no rule's meaning.
    same = rts.rule_summary(rts.scale_rule_text(_SAMPLE_FILE, 1))
    for a, b in zip(original, same):
        assert a[:2] == b[:2] and " ".join(a[2].split()) == " ".join(b[2].split()), (a, b)


# ------------------------------------------------------------- helpers


def api(base, path, timeout=10.0):
    r = http_get(base + path, timeout=timeout)
    check(r.status == 200, f"GET {base}{path} answered {r.status}: {r.body[:300]!r}")
    body = json.loads(r.text)
    check(body.get("status") == "success", f"GET {base}{path}: {body}")
    return body["data"]


def query(base, expr, at=None):
    path = "/api/v1/query?query=" + urllib.parse.quote(expr)
    if at is not None:
        path += f"&time={at:.3f}"
    return api(base, path)["result"]


class Webhook:
    """Records Alertmanager's webhook notifications with their arrival time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.received = []  # (unix time, status, alert)
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                now = time.time()
                doc = json.loads(body)
                with hook.lock:
                    for a in doc.get("alerts", []):
                        hook.received.append((now, a.get("status"), a))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def first(self, replica, alertname, **labels):
        """(arrival time, alert) of the first firing notification matching."""
        with self.lock:
            for t, status, a in self.received:
                lab = a.get("labels", {})
                if (status == "firing" and lab.get("replica") == replica and
                        lab.get("alertname") == alertname and
                        all(lab.get(k) == v for k, v in labels.items())):
                    return t, a
        return None

    def snapshot(self):
        with self.lock:
            return list(self.received)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def simulate_flags(gpumon):
    """The flags `gpumon simulate --help` mentions."""
    out = subprocess.run([gpumon, "simulate", "--help"], capture_output=True, text=True,
                         timeout=30)
    return set(re.findall(r"--[a-z][a-z-]*", out.stdout + out.stderr))


def alert_key(labels):
    return (labels.get("alertname", ""), labels.get("severity", ""), labels.get("gpu", ""),
            labels.get("hostname", ""))


def key_text(k):
    name, severity, gpu, host = k
    return f"{name}[{severity}]{{gpu={gpu or '-'},hostname={host or '-'}}}"


def first_firing(base, since):
    """alert key -> time of the first ALERTS{alertstate="firing"} sample
    since `since` (raw samples, from the server's own storage)."""
    window = int(time.time() - since) + 5
    out = {}
    for s in query(base, f'ALERTS{{alertstate="firing"}}[{window}s]'):
        t = min(float(v[0]) for v in s["values"])
        if t < since:
            continue
        k = alert_key(s["metric"])
        out[k] = min(t, out.get(k, t))
    return out


def first_slowdown_seen(base, since):
    """Time of the first scraped sample with a thermal slowdown reason active
    on GPU 3, or None."""
    window = int(time.time() - since) + 5
    reasons = "|".join(SLOWDOWN_REASONS)
    first = None
    for s in query(base, f'gpu_clock_event_reason_active{{gpu="{GPU}",'
                         f'hostname="{HOSTNAME}",reason=~"{reasons}"}}[{window}s]'):
        for t, v in s["values"]:
            if float(v) == 1 and (first is None or float(t) < first):
                first = float(t)
    return first


def read_ground_truth(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    check(str(doc.get("format", "")).startswith("gpumon-ground-truth/"),
          f"ground truth format: {doc.get('format')!r}")
    events = {}
    for e in doc.get("events", []):
        check("t_unix_ms" in e, f"ground-truth event without t_unix_ms: {e}")
        k = (str(e.get("gpu")), e.get("event"))
        events[k] = min(float(e["t_unix_ms"]) / 1000.0, events.get(k, float("inf")))
    return doc, events


# ------------------------------------------------------------ the rules


def scaled_rules(args, tmp, promtool):
    sources = sorted(glob.glob(os.path.join(args.source_dir, "rules", "*.rules.yml")))
    forecast = os.path.join(args.source_dir, "rules", "gpumon-forecast.rules.yml")
    if forecast not in sources:
        raise Skip("the rule pack's forecast rules (rules/gpumon-forecast.rules.yml) are absent")
    with open(forecast, encoding="utf-8") as f:
        if f"alert: {PREDICTED}" not in f.read():
            raise Skip(f"rules/gpumon-forecast.rules.yml has no {PREDICTED} alert yet")
    out_dir = os.path.join(tmp, "rules")
    os.makedirs(out_dir)
    try:
        written, report = rts.scale_rule_files(sources, out_dir, SPEED,
                                                            SCALE_CONSTANTS)
    except rts.ScaleError as e:
        raise TestFailure(f"cannot time-scale the rule pack: {e}") from None
    counts = {}
    for src, dst in zip(sources, written):
        r = subprocess.run([promtool, "check", "rules", dst], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, f"promtool check rules fails on the scaled copy of {src}:\n"
              f"{r.stdout}{r.stderr}")
        m = re.search(r"SUCCESS: (\d+) rules found", r.stdout)
        with open(src, encoding="utf-8") as f:
            mine = len(rts.rule_summary(f.read()))
        check(m is not None and int(m.group(1)) == mine,
              f"{dst}: promtool found {m and m.group(1)} rules, the scaler {mine}")
        counts[os.path.basename(dst)] = mine
    with open(os.path.join(tmp, "scale-report.txt"), "w") as f:
        f.write("\n".join(report) + "\n")
    return written, counts


def expected_rules(paths):
    """(group-independent) rule name -> list of (for seconds, durations ms)
    as the scaler wrote them."""
    out = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for name, kind, expr, for_ in rts.rule_summary(f.read()):
                for_s = rts.parse_duration_ms(for_) / 1000.0 if for_ else 0.0
                durations = sorted(rts.expr_durations_ms(expr))
                out.setdefault(name, []).append((for_s, durations))
    return out


def check_loaded_rules(base, who, expected):
    """The server loaded every rule with the durations the scaler wrote, and
    none of them failed to evaluate."""
    groups = api(base, "/api/v1/rules")["groups"]
    loaded = {}
    errors = []
    for g in groups:
        for r in g["rules"]:
            for_s = float(r.get("duration", 0) or 0)
            durations = sorted(rts.expr_durations_ms(r["query"]))
            loaded.setdefault(r["name"], []).append((for_s, durations))
            if r.get("health") == "err" or r.get("lastError"):
                errors.append(f"{r['name']}: {r.get('lastError')}")
    want = {k: sorted(v) for k, v in expected.items()}
    got = {k: sorted(v) for k, v in loaded.items()}
    diff = [f"{k}: scaled {want.get(k)} loaded {got.get(k)}"
            for k in sorted(set(want) | set(got)) if want.get(k) != got.get(k)]
    check(not diff, f"{who} loaded rules that differ from the scaled files "
          f"((for s, durations ms) per rule):\n" + "\n".join(diff[:20]))
    check(not errors, f"{who} failed to evaluate rules:\n" + "\n".join(errors[:20]))


# ----------------------------------------------------------- processes


def write_config(path, replica, sim_port, am_port, rule_paths):
    with open(path, "w", encoding="utf-8") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "  evaluation_interval: 1s\n"
                f"  external_labels:\n    replica: {replica}\n"
                "rule_files:\n" + "".join(f"  - {p}\n" for p in rule_paths) +
                "alerting:\n  alertmanagers:\n    - static_configs:\n"
                f"        - targets: ['127.0.0.1:{am_port}']\n"
                "scrape_configs:\n  - job_name: gpu\n    metrics_path: /node/0/metrics\n"
                "    static_configs:\n"
                f"      - targets: ['127.0.0.1:{sim_port}']\n")


def wait_scraped(base, who, sim_port, timeout=30.0):
    """Waits until the server has tried to scrape the simulated node once
    (it is not up yet, so the try fails)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = api(base, "/api/v1/targets")["activeTargets"]
        for t in last:
            if f":{sim_port}/" in t.get("scrapeUrl", "") and t.get("health") in ("down", "up"):
                return
        time.sleep(0.2)
    raise TestFailure(f"{who} did not try to scrape 127.0.0.1:{sim_port} within "
                      f"{timeout:.0f} s: {last}")


def start_alertmanager(alertmanager, tmp, hook_port):
    config = os.path.join(tmp, "alertmanager.yml")
    with open(config, "w", encoding="utf-8") as f:
        # Every label set its own group, sent at once.
        f.write("route:\n  receiver: hook\n  group_by: ['...']\n"
                "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                "receivers:\n  - name: hook\n    webhook_configs:\n"
                f"      - url: http://127.0.0.1:{hook_port}/hook\n"
                "        send_resolved: true\n")
    return start_on_free_port(
        lambda p: [alertmanager, f"--config.file={config}",
                   f"--storage.path={os.path.join(tmp, 'am')}",
                   f"--web.listen-address=127.0.0.1:{p}", "--cluster.listen-address="],
        "/-/ready", "alertmanager", ready_timeout=60)


# ------------------------------------------------------------- timeline


class Timeline:
    def __init__(self, t0):
        self.t0 = t0  # the simulator's start (Unix seconds)
        self.rows = []

    def add(self, t, what):
        if t is not None:
            self.rows.append((t, what))

    def text(self):
        lines = []
        for t, what in sorted(self.rows):
            sim_min = (t - self.t0) * SPEED / 60.0
            lines.append(f"  +{t - self.t0:6.1f} s (sim {sim_min:5.1f} min)  {what}")
        return "\n".join(lines)


def sim_origin(truth_doc, fallback):
    """The simulated clock's origin (Unix seconds), as the simulator measured it."""
    return float(truth_doc["t0_unix_ms"]) / 1000.0 if "t0_unix_ms" in truth_doc else fallback


def make_timeline(t0, truth, fired, slowdowns, hook):
    timeline = Timeline(t0)
    for (gpu, event), t in truth.items():
        timeline.add(t, f"ground truth: GPU {gpu} {event}")
    for who, t in slowdowns.items():
        timeline.add(t, f"{who}'s data: thermal slowdown reason active on GPU {GPU}")
    for who, f in fired.items():
        for k, t in f.items():
            timeline.add(t, f"{who}: {key_text(k)} firing")
    seen = set()
    for t, status, a in hook.snapshot():
        k = (a["labels"].get("replica"), alert_key(a["labels"]), status)
        if k not in seen:
            seen.add(k)
            timeline.add(t, f"webhook: {k[0]} {key_text(k[1])} {status}")
    return timeline


def salvage_timeline(t0, bases, truth_path, hook):
    """What can still be read after a failure, for the report."""
    truth, fired, slowdowns = {}, {}, {}
    try:
        if truth_path and os.path.exists(truth_path):
            doc, truth = read_ground_truth(truth_path)
            t0 = sim_origin(doc, t0)
    except (OSError, ValueError, TestFailure):
        pass
    for who, base in bases.items():
        try:
            fired[who] = first_firing(base, t0)
            slowdowns[who] = first_slowdown_seen(base, t0)
        except (OSError, ValueError, KeyError, TestFailure):
            pass
    return make_timeline(t0, truth, fired, slowdowns, hook)


# ------------------------------------------------------------------ body


def body(args):
    try:
        check_scaler()
    except AssertionError as e:
        raise TestFailure(f"rule_time_scale self-check: {e}") from None
    prometheus = need_tool("prometheus", ["/usr/bin/prometheus"])
    promtool = need_tool("promtool", ["/usr/bin/promtool"])
    alertmanager = need_tool("prometheus-alertmanager", ["/usr/bin/prometheus-alertmanager"])
    missing = {"--scenario", "--speed", "--ground-truth"} - simulate_flags(args.gpumon)
    if missing:
        raise Skip(f"`gpumon simulate` lacks {', '.join(sorted(missing))} (fault scenarios "
                   "not built yet)")

    started = time.time()
    hook = Webhook()
    procs = {}
    timeline = t0 = None
    bases = {}
    truth_path = None
    with tempfile.TemporaryDirectory(prefix="gpumon-e2e-") as tmp:
        try:
            rule_paths, counts = scaled_rules(args, tmp, promtool)
            expected = expected_rules(rule_paths)
            am, am_port = start_alertmanager(alertmanager, tmp, hook.port)
            procs["alertmanager"] = am

            # The servers start first and the simulator last, so both see
            # the node from its first sample: Prometheus applies new targets
            # only every 5 s, and a counter increment the other server saw
            # before it would give different rate() and increase() results.
            sim_port = free_port()
            configs = {}
            for who in ("gpumon", "prometheus"):
                configs[who] = os.path.join(tmp, f"{who}.yml")
                write_config(configs[who], who, sim_port, am_port, rule_paths)
            prom, prom_port = start_on_free_port(
                lambda p: [prometheus, f"--config.file={configs['prometheus']}",
                           f"--storage.tsdb.path={os.path.join(tmp, 'prom-data')}",
                           f"--web.listen-address=127.0.0.1:{p}", "--log.level=warn"],
                "/-/ready", "prometheus", ready_timeout=60)
            procs["prometheus"] = prom
            server, port = start_on_free_port(
                lambda p: [args.gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data",
                           os.path.join(tmp, "gpumon-data"), "--config", configs["gpumon"]],
                "/-/healthy", "gpumon server")
            procs["gpumon server"] = server
            bases = {"gpumon": f"http://127.0.0.1:{port}",
                     "prometheus": f"http://127.0.0.1:{prom_port}"}
            for who, base in bases.items():
                wait_scraped(base, who, sim_port)
            # Both hold every scaled rule as written (Prometheus's parser is
            # the reference for the scaler's YAML and PromQL handling).
            for who, base in bases.items():
                check_loaded_rules(base, who, expected)

            truth_path = os.path.join(tmp, "ground-truth.json")
            sim_args = ["simulate", "--nodes", "1", "--gpus", "8", "--seed", "1",
                        "--interval", "1s", "--speed", str(SPEED), "--ground-truth",
                        truth_path]
            for sc in SCENARIOS:
                sim_args += ["--scenario", sc]
            for attempt in range(3):
                t0 = time.time()
                sim = Process([args.gpumon, *sim_args, "--listen", f"127.0.0.1:{sim_port}"],
                              name="gpumon simulate")
                procs["simulate"] = sim
                try:
                    sim.wait_http(f"http://127.0.0.1:{sim_port}/healthz", timeout=30)
                    break
                except TestFailure:
                    sim.stop()
                    if attempt == 2 or "in use" not in sim.stderr().lower():
                        raise
                # Another process took the port: move both servers to a new one.
                sim_port = free_port()
                for who, proc in (("gpumon", server), ("prometheus", prom)):
                    write_config(configs[who], who, sim_port, am_port, rule_paths)
                    proc.proc.send_signal(signal.SIGHUP)
                for who, base in bases.items():
                    wait_scraped(base, who, sim_port)

            # Run until gpumon's predicted alert reached the webhook and the
            # slowdown began, then a little longer for the alerts about it.
            deadline = t0 + RUN_DEADLINE_S
            slowdown_seen = None
            while True:
                for name, p in procs.items():
                    check(p.running(), f"{name} exited during the run\n{p.describe()}")
                if slowdown_seen is None:
                    slowdown_seen = first_slowdown_seen(bases["gpumon"], t0)
                arrived = hook.first("gpumon", PREDICTED, gpu=GPU, hostname=HOSTNAME)
                if slowdown_seen is not None and time.time() > slowdown_seen + AFTER_SLOWDOWN_S:
                    break
                if time.time() > deadline:
                    raise TestFailure(
                        f"within {RUN_DEADLINE_S} s: predicted alert at the webhook: "
                        f"{'yes' if arrived else 'no'}; slowdown seen by gpumon: "
                        f"{'yes' if slowdown_seen else 'no'}")
                time.sleep(0.5)
            end = time.time()

            fired = {who: first_firing(base, t0) for who, base in bases.items()}
            prom_slowdown = first_slowdown_seen(bases["prometheus"], t0)
            for who, base in bases.items():
                check_loaded_rules(base, who, expected)
            check(sim.stop() == 0, f"gpumon simulate did not exit cleanly\n{sim.describe()}")
            check(os.path.exists(truth_path),
                  f"gpumon simulate wrote no ground truth to {truth_path}\n{sim.describe()}")
            truth_doc, truth = read_ground_truth(truth_path)
            t0 = sim_origin(truth_doc, t0)
            timeline = make_timeline(t0, truth, fired, {"gpumon": slowdown_seen,
                                                        "prometheus": prom_slowdown}, hook)

            # ---------------------------------------------- 1. prediction
            truth_slowdown = min([truth[(GPU, e)] for e in
                                  ("first_thermal_slowdown", "first_memory_slowdown")
                                  if (GPU, e) in truth], default=None)
            check(truth_slowdown is not None,
                  f"the ground truth records no slowdown of GPU {GPU}: {truth_doc}")
            check(slowdown_seen is not None, "gpumon never saw the slowdown")
            arrived = hook.first("gpumon", PREDICTED, gpu=GPU, hostname=HOSTNAME)
            check(arrived is not None,
                  f"{PREDICTED} for GPU {GPU} of {HOSTNAME} never reached the webhook from gpumon")
            t_arrived, alert = arrived
            lead = truth_slowdown - t_arrived
            check(lead * SPEED >= MIN_LEAD_SIM_S,
                  f"{PREDICTED} arrived {lead:.1f} s ({lead * SPEED:.0f} simulated s) before "
                  f"the slowdown began (ground truth); at least {MIN_LEAD_SIM_S} simulated s "
                  "expected")
            check(t_arrived < slowdown_seen,
                  f"{PREDICTED} arrived {t_arrived - slowdown_seen:.1f} s after gpumon's data "
                  "showed the slowdown")
            runbook = alert.get("annotations", {}).get("runbook_url", "")
            suffix = f"docs/runbooks/{PREDICTED}.md"
            check(runbook.endswith("/" + suffix),
                  f"{PREDICTED} runbook_url {runbook!r} does not point at {suffix}")
            check(os.path.isfile(os.path.join(args.source_dir, suffix)),
                  f"{PREDICTED} links {suffix}, which is not in the repository")
            summary = alert.get("annotations", {}).get("summary", "")
            check(GPU in summary and HOSTNAME in summary,
                  f"{PREDICTED} summary does not name the GPU and node: {summary!r}")

            # ---------------------------------------------- 2. healthy GPUs quiet
            false = sorted({(who, key_text(k)) for who, f in fired.items() for k in f
                            if k[0] in PREDICTED_ALERTS and k[2] != GPU})
            false += sorted({(a["labels"].get("replica"), key_text(alert_key(a["labels"])))
                             for _, status, a in hook.snapshot()
                             if a["labels"].get("alertname") in PREDICTED_ALERTS and
                             a["labels"].get("gpu") != GPU})
            check(not false, f"slowdown predicted for healthy GPUs: {false}")

            # ---------------------------------------------- 3. same alerts
            g, p = fired["gpumon"], fired["prometheus"]
            only = []
            for a, b, who in ((g, p, "gpumon"), (p, g, "prometheus")):
                for k, t in a.items():
                    if k not in b and t < end - TOLERANCE_S:
                        only.append(f"{key_text(k)} fired on {who} only (at "
                                    f"+{t - t0:.1f} s)")
            for k in set(g) & set(p):
                if abs(g[k] - p[k]) > TOLERANCE_S:
                    only.append(f"{key_text(k)} fired at +{g[k] - t0:.1f} s on gpumon, "
                                f"+{p[k] - t0:.1f} s on Prometheus")
            check(not only, "gpumon and Prometheus disagree:\n  " + "\n  ".join(only))
            check(any(k[0] == PREDICTED and k[2] == GPU for k in p),
                  f"Prometheus never fired {PREDICTED} for GPU {GPU}")
            check(hook.first("prometheus", PREDICTED, gpu=GPU, hostname=HOSTNAME) is not None,
                  f"{PREDICTED} from Prometheus never reached the webhook")

            print(f"timeline (speed {SPEED}x; rules scaled: {sum(counts.values())} rules in "
                  f"{len(counts)} files):\n{timeline.text()}")
            print(f"{PREDICTED} reached the webhook {lead:.1f} s ({lead * SPEED / 60:.1f} "
                  f"simulated minutes) before the slowdown; {len(g)} alert series fired on "
                  f"gpumon, {len(p)} on Prometheus; the test took {time.time() - started:.0f} s")
        except TestFailure as e:
            if timeline is None and t0 is not None:
                timeline = salvage_timeline(t0, bases, truth_path, hook)
            extra = f"\ntimeline:\n{timeline.text()}" if timeline is not None else ""
            logs = "\n".join(p.describe() for p in procs.values())
            raise TestFailure(f"{e}{extra}\n{logs}") from None
        finally:
            for name in ("prometheus", "gpumon server", "simulate", "alertmanager"):
                if name in procs:
                    procs[name].stop()
            hook.close()


if __name__ == "__main__":
    run_test(body)
