#!/usr/bin/env python3
"""Every query of every shipped dashboard works, on gpumon and on Prometheus.

For each naming scheme (dashboards/native with gpumon's names, dashboards/dcgm
with dcgm-exporter's) this starts a simulated fleet (`gpumon simulate --nodes
3 --gpus 4 --names native|dcgm`, with fault scenarios so error panels have
something to show), a `gpumon server` and a real Prometheus (Debian's
/usr/bin/prometheus) that both scrape it every second with the scheme's rule
pack (rules/*.rules.yml, rules/dcgm/*.rules.yml). Then, for every panel target,
annotation and templating query, with the template variables expanded both to
"All" (`.*`) and to one concrete value (the first value the variable's own
query returns), and Grafana's macros ($__rate_interval, $__range, ...)
substituted:

- gpumon must parse and answer it (`gpumon dashboards check` has already
  parsed the unexpanded queries);
- it must return data, except the panels listed in MAY_BE_EMPTY with the
  reason (training-job metrics: no job runs in the simulated fleet, faults the simulator
  does not raise in a minute); an unlisted panel without data fails;
- Prometheus must return the same series (label sets) with values within
  REL_TOL, queried at the same timestamp in the past that both have scraped
  (instant queries) and over the same range (range targets). The two scrape
  at different instants, so values are compared with a tolerance and series
  whose label sets differ fail.

Variable queries (label_values) must return the same values from both.
"""

import json
import math
import os
import re
import socket
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import (Process, TestFailure, check, http_get, need_tool, run_test,  # noqa: E402
                     wait_until)

NODES, GPUS = 3, 4
CLUSTERS = ["a", "a", "b"]  # node i's cluster label (capacity panels group by it)
# The simulated faults, started once both servers scrape: XIDs and NVLink
# errors (nvlink-flap), ECC errors and a row remap (ecc-storm), a degraded
# PCIe link, the power brake (clock slowdowns), a GPU that falls off the bus
# after it was seen (GPUs missing, GpuLost). Node 2 runs no workload (idle GPUs).
FAULTS_AT = 8  # seconds after the simulator starts
SCENARIOS = [
    "training:node=0-1",
    f"nvlink-flap:node=0:gpu=2:start={FAULTS_AT}s:down=3s:up=20s",
    f"ecc-storm:node=1:gpu=1:start={FAULTS_AT}s:rate=100000",
    f"pcie-degrade:node=2:gpu=0:start={FAULTS_AT}s:width=8",
    f"power-brake:node=1:gpu=0:start={FAULTS_AT}s:duration=0",
    f"fall-off-bus:node=2:gpu=3:start={FAULTS_AT + 4}s",
]
SCRAPE = "1s"
# The simulator's collection interval: each value it collects stays for five
# scrapes, so both servers see every value (at instants up to a scrape apart).
SIM_INTERVAL = "5s"
DATA_SECONDS = 28  # history both servers have before the queries' timestamp
# Grafana's macros for a 15 s range at 2 s resolution. Grafana makes
# $__rate_interval at least four scrape intervals; 30 s here, six simulator
# collections, so a rate's window holds enough counter steps.
MACROS = {"__rate_interval": "30s", "__interval": "2s", "__interval_ms": "2000",
          "__range": "15s", "__range_s": "15", "__range_ms": "15000"}
RANGE_SECONDS, RANGE_STEP = 10, 5  # range targets: [at - 10 s, at] every 5 s
# The two servers scrape the same simulator at different instants (up to one
# scrape interval apart), so a value gpumon has at t is compared with what
# Prometheus has at t + d for d from -1 s to 1 s in quarter seconds (one of
# them puts Prometheus's window over the same samples as gpumon's), within
# REL_TOL.
SHIFTS = tuple(q / 4 for q in range(-4, 5))
REL_TOL = 0.1
ABS_TOL = 0.02
PORTS = range(19400, 19500)

# (scheme or "*", dashboard, panel title[, refId]) -> (expansions in which no
# data is fine: "all", "one" or both, why). Without a refId: every target.
MAY_BE_EMPTY = {}
TRAINING = ("the simulated fleet runs no training job (docs/jobs.md metrics); the panel "
            "shows 'No data' until a job exports them")
for title in ("Loss", "Throughput", "Model FLOPs utilisation", "Learning rate and gradient norm",
              "Step time per rank", "Straggler score per rank", "Straggler score over time",
              "Step sections", "Gradient sync and overlap", "Pipeline bubble", "Collectives",
              "CUDA memory per rank", "Memory fragmentation", "Allocator retries and OOMs",
              "Checkpoint save and load time", "Since the last checkpoint",
              "Last checkpoint step", "Goodput", "Temperature of the job's GPUs"):
    MAY_BE_EMPTY[("*", "training", title)] = ({"all", "one"}, TRAINING)
# The GPUs joined to a job's ranks: none without a job; the node's GPUs (B) have data.
MAY_BE_EMPTY[("*", "training", "Utilisation of the job's GPUs", "A")] = ({"all", "one"}, TRAINING)
MAY_BE_EMPTY.update({
    ("*", "operations", "Forecast: time to die slowdown"):
        ({"all", "one"}, "the forecast records need a temperature rising for minutes; the "
                         "simulated GPUs are steady during the test"),
    ("*", "operations", "Forecast: time to HBM slowdown"):
        ({"all", "one"}, "as above, for the HBM"),
    ("*", "operations", "Remapped rows and retired pages", "B"):
        ({"all", "one"}, "H200s retire no pages (row remapping replaced page retirement)"),
    ("*", "operations", "Clock event reasons"):
        ({"one"}, "the chosen GPU may have no active slowdown reason during the test"),
    ("*", "executive", "Firing alerts by severity"):
        ({"one"}, "no alert fires on the first node during the test"),
    ("dcgm", "executive", "Firing alerts by severity"):
        ({"all", "one"}, "the alerts that fire within a minute (GpuLost, XIDs) have no "
                         "dcgm-exporter equivalent"),
    ("*", "operations", "Alerts"):
        ({"one"}, "no alert fires on the first node during the test"),
    ("dcgm", "operations", "Alerts"):
        ({"all", "one"}, "the alerts that fire within a minute have no dcgm-exporter "
                         "equivalent; the others wait their `for`"),
    ("native", "operations", "XID errors and their meaning"):
        ({"one"}, "XIDs happen only on the GPUs with faults"),
    ("native", "operations", "XID events"):
        ({"one"}, "XIDs happen only on the GPUs with faults"),
    ("*", "capacity", "Idle GPUs"):
        ({"one"}, "the first GPU runs the training workload"),
    ("*", "operations", "annotation Firing alerts"):
        ({"one"}, "no alert fires on the first node during the test"),
    ("dcgm", "operations", "annotation Firing alerts"):
        ({"all", "one"}, "see Alerts"),
})

# Panels whose targets may each be empty as long as one of them has data, in
# both expansions: histogram bands without GPUs in them have no series.
ANY_TARGET = {
    ("*", "capacity", "GPUs by mean utilisation over the range, per cluster"):
        "a utilisation band that holds no GPU has no series",
}

# Queries only checked for both servers answering them (and, through
# ANY_TARGET, for gpumon's data), not compared series by series:
# (scheme or "*", dashboard, panel title) -> why.
UNCOMPARABLE = {
    ("*", "capacity", "GPUs by mean utilisation over the range, per cluster"):
        "a GPU whose mean sits at a band's edge can fall in either band on two servers "
        "that sampled it a scrape apart",
}


# ------------------------------------------------------------------ processes

def port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


_next_port = [PORTS.start]


def take_port():
    """The next port of PORTS that is free now."""
    while _next_port[0] < PORTS.stop and not port_free(_next_port[0]):
        _next_port[0] += 1
    check(_next_port[0] < PORTS.stop, "no free port in 19400-19499")
    _next_port[0] += 1
    return _next_port[0] - 1


def start(make_argv, ready_path, name, port=None):
    """Starts make_argv(port) on `port` (or the next free port of PORTS) and
    waits until ready_path answers 200; a start that lost its port to another
    process is retried on the next one (unless the port was given)."""
    for _ in range(5):
        p = port or take_port()
        proc = Process(make_argv(p), name=name)
        try:
            proc.wait_http(f"http://127.0.0.1:{p}{ready_path}", timeout=60)
            return proc, p
        except TestFailure:
            proc.stop()
            if port or "in use" not in proc.stderr().lower():
                raise
    raise TestFailure(f"{name}: no port to listen on")


def write_config(path, sim_port, rule_glob):
    targets = "".join(
        f"      - targets: ['127.0.0.1:{sim_port}']\n"
        f"        labels: {{__metrics_path__: /node/{i}/metrics, instance: node-{i}, "
        f"cluster: {CLUSTERS[i]}}}\n"
        for i in range(NODES))
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"global:\n  scrape_interval: {SCRAPE}\n  scrape_timeout: {SCRAPE}\n"
                f"  evaluation_interval: {SCRAPE}\n"
                f"rule_files:\n  - {rule_glob}\n"
                "scrape_configs:\n  - job_name: gpu\n    static_configs:\n" + targets)


class Stack:
    """One scheme's gpumon server and Prometheus, scraping one simulator.
    The servers start first, with the simulator's port unanswered, so both
    get the simulator's first samples within one scrape interval of each
    other: windows reaching back to the start of the data (avg_over_time(x[1d]),
    increase(x[10m])) then cover the same samples."""

    def __init__(self, args, scheme, tmp, prometheus):
        self.scheme = scheme
        self.procs = []
        # Absolute: both servers resolve rule_files against the config's folder.
        rules = os.path.join(os.path.abspath(args.source_dir), "rules",
                             *(["dcgm"] if scheme == "dcgm" else []), "*.rules.yml")
        sim_port = take_port()
        config = os.path.join(tmp, f"{scheme}.yml")
        write_config(config, sim_port, rules)
        gm, gm_port = start(lambda p: [args.gpumon, "server", "--config", config, "--data",
                                       os.path.join(tmp, f"gpumon-{scheme}"), "--listen",
                                       f"127.0.0.1:{p}"], "/-/ready", f"gpumon server ({scheme})")
        self.procs.append(gm)
        prom, prom_port = start(lambda p: [prometheus, f"--config.file={config}",
                                           f"--storage.tsdb.path={tmp}/prom-{scheme}",
                                           f"--web.listen-address=127.0.0.1:{p}",
                                           "--log.level=warn"], "/-/ready",
                                f"prometheus ({scheme})")
        self.procs.append(prom)
        self.gpumon = f"http://127.0.0.1:{gm_port}"
        self.prometheus = f"http://127.0.0.1:{prom_port}"
        self.sim_argv = [args.gpumon, "simulate", "--nodes", str(NODES), "--gpus", str(GPUS),
                         "--names", scheme, "--interval", SIM_INTERVAL,
                         "--listen", f"127.0.0.1:{sim_port}"]
        for sc in SCENARIOS:
            self.sim_argv += ["--scenario", sc]
        self.sim_port = sim_port

    def start_simulator(self):
        # Prometheus applies discovered targets every 5 s: wait until both
        # servers have tried every target once (and found it down).
        def tried(base):
            targets = [t for t in result_of(api(base, "/api/v1/targets", {}),
                                            "targets")["activeTargets"]
                       if t.get("labels", {}).get("job") == "gpu"]
            return len(targets) == NODES and all(
                t.get("health") == "down" for t in targets)
        for base in (self.gpumon, self.prometheus):
            wait_until(lambda: tried(base), 30, what=f"{base} scraping the simulator's port")
        self.started = time.time()
        sim, _ = start(lambda p: self.sim_argv, "/healthz", f"gpumon simulate ({self.scheme})",
                       port=self.sim_port)
        self.procs.append(sim)

    def alive(self):
        for p in self.procs:
            check(p.running(), f"{p.name} died\n{p.describe()}")

    def stop(self):
        for p in self.procs:
            p.stop()


# ------------------------------------------------------------------ queries

def api(base, path, params):
    url = f"{base}{path}?{urllib.parse.urlencode(params, doseq=True)}"
    r = http_get(url, timeout=30)
    try:
        return json.loads(r.body)
    except ValueError:
        raise TestFailure(f"{url} answered HTTP {r.status}: {r.body[:300]!r}") from None


def result_of(body, what):
    check(body.get("status") == "success", f"{what}: {body.get('errorType')}: {body.get('error')}")
    return body["data"]


def series_map(data):
    """{sorted label items: [(t, v), ...]} of a vector or matrix answer."""
    out = {}
    if data["resultType"] == "scalar":
        return {(): [(float(data["result"][0]), float(data["result"][1]))]}
    for s in data["result"]:
        key = tuple(sorted(s["metric"].items()))
        pts = [s["value"]] if "value" in s else s["values"]
        out[key] = [(float(t), float(v)) for t, v in pts]
    return out


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), ABS_TOL)


def compare(want_at, got):
    """How got (gpumon's answer) differs from Prometheus's answers at the
    shifted times (want_at: {shift: answer}), or None. Every gpumon point must
    match Prometheus's at t + shift for some shift, series by series; every
    Prometheus series at shift 0 must be in gpumon's answer and vice versa
    unless it appears or disappears within the shift (a scrape apart)."""
    g = series_map(got)
    w = {d: series_map(ans) for d, ans in want_at.items()}
    problems = []
    only_w = [dict(k) for k in w[0.0] if k not in g and all(k in w[d] for d in SHIFTS)]
    only_g = [dict(k) for k in g if all(k not in w[d] for d in SHIFTS)]
    if only_w:
        problems.append(f"series only in Prometheus: {only_w[:2]} ({len(only_w)})")
    if only_g:
        problems.append(f"series only in gpumon: {only_g[:2]} ({len(only_g)})")
    for k, pts in g.items():
        for t, v in pts:
            near = [dict(w[d].get(k, ())).get(t + d) for d in SHIFTS]
            near = [x for x in near if x is not None]
            if near and not any(close(x, v) for x in near):
                problems.append(f"{dict(k)} at {t}: gpumon {v}, Prometheus {near} "
                                f"(at {t + SHIFTS[0]}..{t + SHIFTS[-1]})")
                break
    return "; ".join(problems[:3]) or None


# ------------------------------------------------------------- expansion

VAR_RE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)(?::[^\]]*)?\]\]")


def regex_value(values):
    """A multi-value selection as Grafana writes it into =~ (one value: itself)."""
    esc = [re.sub(r"([\\.^$*+?()\[\]{}|])", r"\\\\\1", v) for v in values]
    return esc[0] if len(esc) == 1 else "(" + "|".join(esc) + ")"


def expand(text, values):
    def sub(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name in MACROS:
            return MACROS[name]
        check(name in values, f"unknown variable ${name} in {text!r}")
        return values[name]
    return VAR_RE.sub(sub, text)


def variable_values(base, query, values, at):
    """What a variable's query returns (label_values / query_result)."""
    q = query.strip()
    m = re.fullmatch(r"label_values\((.*)\)", q, re.S)
    if m:
        inner = m.group(1)
        selector, _, label = inner.rpartition(",")
        label = label.strip()
        params = {"start": at - 3600, "end": at}
        if selector.strip():
            params["match[]"] = expand(selector.strip(), values)
        data = result_of(api(base, f"/api/v1/label/{label}/values", params), query)
        return sorted(data)
    m = re.fullmatch(r"query_result\((.*)\)", q, re.S)
    if m:
        data = result_of(api(base, "/api/v1/query", {"query": expand(m.group(1), values),
                                                      "time": at}), query)
        return sorted(json.dumps(s["metric"], sort_keys=True) for s in data["result"])
    raise TestFailure(f"variable query {query!r} is not label_values or query_result")


def queries_of(doc):
    """(panel title, kind, refId, expr, range) for every target and annotation."""
    out = []

    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))
    for p in panels(doc.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" in t:
                out.append((p.get("title", ""), f"target {t.get('refId')}", t.get("refId"),
                            t["expr"], t.get("range", True) and not t.get("instant", False)))
    for a in doc.get("annotations", {}).get("list", []):
        expr = a.get("expr") or a.get("target", {}).get("expr")
        if expr:
            out.append((f"annotation {a.get('name')}", "annotation", None, expr, True))
    return out


def check_dashboard(stack, name, doc, at, report):
    """Runs one dashboard's queries on both servers; appends problems."""
    variables = [v for v in doc.get("templating", {}).get("list", [])]
    fixed = {v["name"]: v.get("query", "") for v in variables if v["type"] in ("textbox",
                                                                               "constant")}
    # Variable chain, evaluated in order, both "All" and first value.
    expansions = {"all": dict(fixed), "one": dict(fixed)}
    for v in variables:
        if v["type"] != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        for mode, vals in expansions.items():
            got = variable_values(stack.gpumon, q, vals, at)
            want = variable_values(stack.prometheus, q, vals, at)
            if got != want:
                report.append(f"{stack.scheme}/{name}: variable {v['name']} ({mode}): gpumon "
                              f"{got[:5]}, Prometheus {want[:5]}")
            if mode == "all":
                vals[v["name"]] = v.get("allValue") or ".*"
                if not got and not name == "training":
                    report.append(f"{stack.scheme}/{name}: variable {v['name']} has no values")
            else:
                vals[v["name"]] = regex_value(got[:1]) if got else ".*"
    counts = {"queries": 0, "with data": 0}
    panel_data = {}  # (title, mode) -> whether any of its targets had data
    for title, kind, ref, expr, is_range in queries_of(doc):
        for mode, vals in expansions.items():
            q = expand(expr, vals)
            where = f"{stack.scheme}/{name}: {title}: {kind} ({mode})"
            requests = [("/api/v1/query", lambda d: {"query": q, "time": at + d})]
            if is_range:
                requests.append(("/api/v1/query_range", lambda d: {
                    "query": q, "start": at - RANGE_SECONDS + d, "end": at + d,
                    "step": RANGE_STEP}))
            has_data = False
            for path, params in requests:
                got_body = api(stack.gpumon, path, params(0))
                if got_body.get("status") != "success":
                    report.append(f"{where}: gpumon failed: {got_body.get('errorType')}: "
                                  f"{got_body.get('error')}\n    query: {q}")
                    continue
                want_at = {}
                for d in SHIFTS:
                    want_body = api(stack.prometheus, path, params(d))
                    if want_body.get("status") != "success":
                        report.append(f"{where}: Prometheus failed: {want_body.get('error')}\n"
                                      f"    query: {q}")
                        break
                    want_at[d] = want_body["data"]
                else:
                    counts["queries"] += 1
                    has_data = has_data or bool(series_map(got_body["data"]))
                    problem = compare(want_at, got_body["data"])
                    if any(k in UNCOMPARABLE for k in ((stack.scheme, name, title),
                                                       ("*", name, title))):
                        problem = None
                    if problem:
                        report.append(f"{where} {path}: {problem}\n    query: {q}")
            allowed = None
            for key in ((stack.scheme, name, title, ref), ("*", name, title, ref),
                        (stack.scheme, name, title), ("*", name, title)):
                if key in MAY_BE_EMPTY and mode in MAY_BE_EMPTY[key][0]:
                    allowed = MAY_BE_EMPTY[key][1]
                    break
            panel_data[(title, mode)] = panel_data.get((title, mode), False) or has_data
            if any(k in ANY_TARGET for k in ((stack.scheme, name, title), ("*", name, title))):
                allowed = allowed or "checked for the panel as a whole"
            if has_data:
                counts["with data"] += 1
            elif allowed is not None:
                print(f"no data, as listed: {where}: {allowed}")
            else:
                report.append(f"{where}: no data from gpumon (not a listed gap)\n    query: {q}")
    for (title, mode), had in panel_data.items():
        if not had and any(k in ANY_TARGET for k in ((stack.scheme, name, title),
                                                     ("*", name, title))):
            report.append(f"{stack.scheme}/{name}: {title} ({mode}): no target has data")
    return counts


def body(args):
    prometheus = need_tool("prometheus", ["/usr/bin/prometheus"])
    started = time.monotonic()
    report = []
    stacks = []
    with tempfile.TemporaryDirectory(prefix="gpumon-dash-") as tmp:
        try:
            for scheme in ("native", "dcgm"):
                stacks.append(Stack(args, scheme, tmp, prometheus))
            for s in stacks:
                s.start_simulator()
            for s in stacks:
                for base in (s.gpumon, s.prometheus):
                    wait_until(lambda: len(result_of(api(base, "/api/v1/query", {
                        "query": 'up{job="gpu"} == 1'}), "up")["result"]) == NODES, 30,
                        what=f"{base}: every simulated node scraped")
                check(time.time() - s.started < FAULTS_AT,
                      f"{s.scheme}: the servers took {time.time() - s.started:.0f} s to scrape; "
                      f"the faults start at {FAULTS_AT} s")
            both = time.time()
            time.sleep(DATA_SECONDS)
            # A timestamp both servers have scraped past (and evaluated rules at).
            at = math.floor(both) + DATA_SECONDS - 2
            check(at - RANGE_SECONDS - 15 > both, "the oldest window starts after both scrape")
            totals = {"queries": 0, "with data": 0}
            for s in stacks:
                folder = os.path.join(args.source_dir, "dashboards", s.scheme)
                for file in sorted(os.listdir(folder)):
                    with open(os.path.join(folder, file), encoding="utf-8") as f:
                        doc = json.load(f)
                    c = check_dashboard(s, file[:-5], doc, at, report)
                    for k in totals:
                        totals[k] += c[k]
                s.alive()
        finally:
            for s in stacks:
                s.stop()
    print(f"{totals['queries']} answers compared with Prometheus, {totals['with data']} "
          f"query expansions with data, in {time.monotonic() - started:.1f} s")
    for r in report:
        print("PROBLEM " + r)
    if report:
        raise TestFailure(f"{len(report)} problem(s), listed above")


if __name__ == "__main__":
    run_test(body)
