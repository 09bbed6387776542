#!/usr/bin/env python3
"""`gpumon server` and a real Prometheus scrape the same node_exporter alike.

Starts the Debian prometheus-node-exporter on loopback (a fixed set of
collectors whose series do not come and go between scrapes, plus the
textfile collector serving a file of awkward series: escaped label values,
empty labels, labels clashing with the target's job/instance, NaN/Inf,
histogram, summary, untyped, a colon in a name), then Prometheus 2.42 and
`gpumon server --config` with the same configuration: job "node" (1 s
interval, metric_relabel_configs that drop nothing) and job "node_honor"
(same target, honor_labels: true).

Once both have scraped several times, compares over one time window and at
one evaluation instant:
  - the set of series (label sets) from /api/v1/series, per job;
  - count() per job, up, scrape_samples_scraped (also against the number of
    samples node_exporter itself exposes), scrape_samples_post_metric_relabeling,
    scrape_series_added;
  - the values of stable gauges (memory size, uname, boot time, file sizes,
    the textfile series) as the API renders them;
  - the metric metadata (type, help, unit) Prometheus holds for the target.

Determinism: a background poller fetches node_exporter's /metrics several
times a second and records every change of its series set. A mismatch
while the set changed inside the window is retried in a fresh window; a
mismatch without such a change is a failure, printed as a diff.
"""

import json
import math
import os
import tempfile
import threading
import time
import urllib.parse

from harness import (TestFailure, check, http_get, need_tool, parse_exposition, run_test,
                     start_on_free_port, wait_until)

# Collectors whose series set is fixed for the life of a machine (cpu,
# memory, disks, the root file systems, network interfaces, kernel info).
COLLECTORS = ["cpu", "diskstats", "filesystem", "loadavg", "meminfo", "netdev", "os", "stat",
              "textfile", "time", "uname", "vmstat"]
# Interfaces that container runtimes create and remove at any moment.
NETDEV_EXCLUDE = "^(lo|veth.*|docker.*|br-.*|cali.*|cni.*|flannel.*|virbr.*|vnet.*|tap.*)$"

# Served by node_exporter's textfile collector; each line exercises a part of
# scraping where two implementations can disagree.
TEXTFILE = r"""# HELP parity_escaping_info Label values that need escaping: backslash \\ and newline \n.
# TYPE parity_escaping_info gauge
parity_escaping_info{path="C:\\dir\\file",quote="say \"hi\"",newline="a\nb",unicode="température ✓"} 1
# TYPE parity_clash gauge
parity_clash{job="exported-job",instance="exported-instance",exported_job="already"} 2
parity_empty_label{a="",b="x"} 3
# TYPE parity_special gauge
parity_special{kind="nan"} NaN
parity_special{kind="inf"} +Inf
parity_special{kind="neginf"} -Inf
parity_special{kind="tiny"} 1e-300
parity_special{kind="big"} 1.7976931348623157e+308
parity_special{kind="negzero"} -0
parity_special{kind="int"} 123456789012345
# HELP parity_requests_total A counter.
# TYPE parity_requests_total counter
parity_requests_total{code="200"} 5
parity_requests_total{code="500"} 0
# HELP parity_latency_seconds A histogram.
# TYPE parity_latency_seconds histogram
parity_latency_seconds_bucket{le="0.1"} 1
parity_latency_seconds_bucket{le="1"} 3
parity_latency_seconds_bucket{le="+Inf"} 4
parity_latency_seconds_sum 2.5
parity_latency_seconds_count 4
# HELP parity_rpc_seconds A summary.
# TYPE parity_rpc_seconds summary
parity_rpc_seconds{quantile="0.5"} 0.2
parity_rpc_seconds{quantile="0.99"} 0.9
parity_rpc_seconds_sum 10
parity_rpc_seconds_count 30
parity_untyped 7
parity:recorded_ratio{_leading="underscore",le="not-a-bucket"} 0.5
"""

JOBS = ["node", "node_honor"]
# Everything the two jobs produce (honor_labels lets the textfile's own job
# label through); the server's self-monitoring job is not part of it.
ALL_SCRAPED = '{__name__=~".+",job!="gpumon"}'
MIN_SCRAPES = 4
ATTEMPTS = 3
# Gauges whose value does not change while the test runs.
STABLE = [
    'node_memory_MemTotal_bytes', 'node_uname_info', 'node_boot_time_seconds',
    'node_os_info', 'node_exporter_build_info', 'node_filesystem_size_bytes',
    'node_textfile_mtime_seconds', 'node_textfile_scrape_error', '{__name__=~"parity.+"}',
    '{__name__=~"scrape_samples_scraped|scrape_samples_post_metric_relabeling|'
    'scrape_series_added",job!="gpumon"}',
    'up{job!="gpumon"}',
    'count by (job) ({__name__=~".+",job!="gpumon"})',
] + [f'count({{job="{job}"}})' for job in JOBS]


def series_key(labels):
    return tuple(sorted(labels.items()))


def show(key):
    labels = dict(key)
    name = labels.pop("__name__", "")
    inner = ",".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def api(base, path, params):
    url = base + path + "?" + urllib.parse.urlencode(params)
    r = http_get(url)
    check(r.status == 200, f"GET {url} answered {r.status}: {r.body[:400]!r}")
    body = json.loads(r.text)
    check(body.get("status") == "success", f"GET {url}: {body}")
    return body["data"]


class Server:
    def __init__(self, name, process, port):
        self.name = name
        self.process = process
        self.base = f"http://127.0.0.1:{port}"

    def query(self, expr, at):
        data = api(self.base, "/api/v1/query", {"query": expr, "time": f"{at:.3f}"})
        check(data["resultType"] == "vector", f"{self.name}: {expr!r} gave {data['resultType']}")
        return data["result"]

    def series(self, match, start, end):
        """The label sets matching `match` in [start, end]; duplicates are
        a finding of their own, so they are returned too."""
        data = api(self.base, "/api/v1/series",
                   {"match[]": match, "start": f"{start:.3f}", "end": f"{end:.3f}"})
        keys = [series_key(s) for s in data]
        seen, dups = set(), []
        for k in keys:
            if k in seen:
                dups.append(k)
            seen.add(k)
        return seen, dups

    def metadata(self):
        return api(self.base, "/api/v1/metadata", {})


class Poller(threading.Thread):
    """Fetches node_exporter's /metrics continuously and records when its
    set of series changes, so a mismatch caused by node_exporter itself can
    be told apart from one caused by the scrapers."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url = url
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.current = None  # frozenset of series keys of the latest fetch
        self.changes = []  # (time, added, removed)
        self.errors = []

    def run(self):
        while not self.halt.is_set():
            try:
                samples, _ = parse_exposition(http_get(self.url, timeout=5).text)
                keys = frozenset(series_key({"__name__": s.name, **s.labels}) for s in samples)
                with self.lock:
                    if self.current is not None and keys != self.current:
                        self.changes.append((time.time(), keys - self.current, self.current - keys))
                    self.current = keys
            except Exception as e:  # noqa: BLE001 - reported by the test thread
                with self.lock:
                    self.errors.append(f"{type(e).__name__}: {e}")
            self.halt.wait(0.2)

    def snapshot(self):
        with self.lock:
            return self.current, list(self.changes), list(self.errors)


def set_diff(what, left_name, left, right_name, right, limit=60):
    if left == right:
        return []
    out = [f"{what}: {len(left)} series in {left_name}, {len(right)} in {right_name}"]
    for name, only in ((left_name, left - right), (right_name, right - left)):
        if only:
            out.append(f"  only in {name} ({len(only)}):")
            out += [f"    {show(k)}" for k in sorted(only)[:limit]]
            if len(only) > limit:
                out.append(f"    ... and {len(only) - limit} more")
    return out


def vector(server, expr, at):
    return {series_key(s["metric"]): s["value"][1] for s in server.query(expr, at)}


def compare(prom, gm, poller, start, end):
    """Returns a list of human-readable differences (empty when equal)."""
    problems = []
    for match in [f'{{job="{job}"}}' for job in JOBS] + [ALL_SCRAPED]:
        sets = []
        for s in (prom, gm):
            keys, dups = s.series(match, start, end)
            if dups:
                problems.append(f"{s.name} /api/v1/series {match} lists duplicates: " +
                                ", ".join(show(k) for k in dups[:10]))
            sets.append(keys)
        check(sets[0], f"prometheus holds no series for {match}")
        print(f"/api/v1/series {match}: prometheus {len(sets[0])}, gpumon {len(sets[1])}")
        problems += set_diff(f"/api/v1/series match[]={match}", prom.name, sets[0], gm.name,
                             sets[1])

    for expr in STABLE:
        a, b = vector(prom, expr, end), vector(gm, expr, end)
        check(a, f"prometheus returned nothing for {expr}")
        problems += set_diff(f"series of {expr} at t={end:.3f}", prom.name, set(a), gm.name, set(b))
        for key in sorted(set(a) & set(b)):
            if a[key] != b[key]:
                problems.append(f"value of {expr}: {show(key)}: {prom.name} {a[key]!r}, "
                                f"{gm.name} {b[key]!r}")

    # scrape_samples_scraped against node_exporter's own output, for a
    # cross-check that does not depend on either server.
    current, _, _ = poller.snapshot()
    if current is not None:
        for s in (prom, gm):
            for key, value in vector(s, 'scrape_samples_scraped{job=~"node|node_honor"}', end).items():
                if value != str(len(current)):
                    problems.append(f"{s.name}: {show(key)} = {value}, but node_exporter exposes "
                                    f"{len(current)} samples")
    return problems


def compare_metadata(prom, gm, limit=15):
    want, got = prom.metadata(), gm.metadata()
    check(want, "prometheus has no metric metadata for the node_exporter target")
    wrong = []
    for name in sorted(want):
        theirs = got.get(name, [])
        missing = [e for e in want[name] if e not in theirs]
        if missing:
            wrong.append(f"    {name}: {prom.name} {missing}, {gm.name} {theirs}")
    for name in sorted(got):
        if name.startswith(("node_", "parity")) and name not in want:
            wrong.append(f"    {name}: only in {gm.name}: {got[name]}")
    if not wrong:
        return []
    more = [f"    ... and {len(wrong) - limit} more"] if len(wrong) > limit else []
    return [f"/api/v1/metadata: {len(wrong)} of {len(want)} metric names differ "
            f"({prom.name} has {len(want)} names, {gm.name} {len(got)})"] + \
        wrong[:limit] + more


def write_config(path, node_port):
    target = f"127.0.0.1:{node_port}"
    jobs = ""
    for job in JOBS:
        jobs += f"""  - job_name: {job}
    honor_labels: {"true" if job == "node_honor" else "false"}
    static_configs:
      - targets: ["{target}"]
    metric_relabel_configs:
      - source_labels: [__name__]
        regex: parity_no_such_metric
        action: drop
"""
    with open(path, "w", encoding="utf-8") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n" + jobs)


def scrapes_since(server, t0, at):
    """The fewest scrapes of any job on `server` in (t0, at]."""
    window = max(1, int(math.floor(at - t0)))
    got = vector(server, f'count_over_time(up{{job=~"node|node_honor"}}[{window}s])', at)
    if len(got) != len(JOBS):
        return 0
    return min(int(float(v)) for v in got.values())


def body(args):
    prometheus = need_tool("prometheus", ["/usr/bin/prometheus"])
    exporter = need_tool("prometheus-node-exporter", ["/usr/bin/prometheus-node-exporter"])
    with tempfile.TemporaryDirectory(prefix="gpumon-node-parity-") as tmp:
        textfiles = os.path.join(tmp, "textfile")
        os.mkdir(textfiles)
        with open(os.path.join(textfiles, "parity.prom"), "w", encoding="utf-8") as f:
            f.write(TEXTFILE)
        started = []
        poller = None
        try:
            node, node_port = start_on_free_port(
                lambda port: [exporter, f"--web.listen-address=127.0.0.1:{port}",
                              "--collector.disable-defaults",
                              *[f"--collector.{c}" for c in COLLECTORS],
                              f"--collector.textfile.directory={textfiles}",
                              f"--collector.netdev.device-exclude={NETDEV_EXCLUDE}",
                              "--log.level=warn"],
                "/metrics", "node_exporter")
            started.append(node)
            poller = Poller(f"http://127.0.0.1:{node_port}/metrics")
            poller.start()

            config = os.path.join(tmp, "prometheus.yml")
            write_config(config, node_port)
            proc, port = start_on_free_port(
                lambda p: [prometheus, f"--config.file={config}",
                           f"--storage.tsdb.path={os.path.join(tmp, 'prom-data')}",
                           f"--web.listen-address=127.0.0.1:{p}", "--log.level=warn"],
                "/-/ready", "prometheus", ready_timeout=60)
            started.append(proc)
            prom = Server("prometheus", proc, port)
            proc, port = start_on_free_port(
                lambda p: [args.gpumon, "server", "--listen", f"127.0.0.1:{p}",
                           "--data", os.path.join(tmp, "gpumon-data"), "--config", config],
                "/-/healthy", "gpumon server")
            started.append(proc)
            gm = Server("gpumon", proc, port)

            for s in (prom, gm):
                want = [(job, "1") for job in JOBS]
                try:
                    wait_until(lambda: sorted((x["metric"]["job"], x["value"][1]) for x in
                                              s.query('up{job=~"node|node_honor"}', time.time()))
                               == want, 30, what=f"{s.name}: up == 1 for jobs {JOBS}")
                except TestFailure as e:
                    raise TestFailure(f"{e}\n{s.process.describe()}") from None

            problems = []
            for attempt in range(1, ATTEMPTS + 1):
                start = time.time()

                def enough():
                    at = time.time()
                    ok = all(scrapes_since(s, start, at) >= MIN_SCRAPES for s in (prom, gm))
                    return at if ok else None

                end = wait_until(enough, 30, interval=0.5,
                                 what=f"{MIN_SCRAPES} scrapes per job on both servers")
                problems = compare(prom, gm, poller, start, end)
                current, changes, errors = poller.snapshot()
                check(current is not None, f"could not fetch node_exporter's /metrics: {errors}")
                moved = [c for c in changes if c[0] >= start - 2]
                if not problems:
                    break
                if not moved:
                    break  # node_exporter was steady: the difference is real
                print(f"attempt {attempt}: node_exporter's series changed during the window "
                      f"({len(moved)} times, e.g. +{[show(k) for k in moved[0][1]][:3]} "
                      f"-{[show(k) for k in moved[0][2]][:3]}); retrying")
            problems += compare_metadata(prom, gm)

            for s in (prom, gm):
                check(s.process.running(), f"{s.name} died\n{s.process.describe()}")
            if problems:
                raise TestFailure("gpumon server and prometheus disagree on the node_exporter "
                                  "scrape:\n" + "\n".join(problems))
            n = len(gm.series('{job="node"}', start, end)[0])
            print(f"{n} series per job, values and metadata equal in prometheus and gpumon")
        finally:
            if poller:
                poller.halt.set()
                poller.join(timeout=10)
            for p in reversed(started):
                p.stop()


if __name__ == "__main__":
    run_test(body)
