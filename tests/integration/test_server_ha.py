#!/usr/bin/env python3
"""High-availability pair deduplicated at query time (--query.replica-label).

Two `gpumon server` replicas scrape the same `gpumon simulate --nodes 2`
every second, with external_labels {replica: a} and {replica: b}, and
remote-write to a third `gpumon server --web.enable-remote-write-receiver
--query.replica-label replica`. On the third:
- each replica's data is stored (selecting on the replica label finds 16
  series per replica; a recording rule, which reads raw data, counts 32);
- the API merges the replicas: count(gpu_temperature_celsius) is the GPU
  count, no series carries `replica`, and /api/v1/labels does not list it;
- after replica a is killed (SIGKILL, as a crash) the merged series keep
  getting fresh samples, now from b, with no gap longer than the switch
  penalty allows (Thanos: more than two scrape intervals of silence), and
  never alternating between replicas;
- restarted without --query.replica-label the same data shows 2x the
  series, labelled replica="a" and replica="b".
"""

import json
import os
import signal
import tempfile
import time
import urllib.parse

from harness import check, http_get, run_test, start_on_free_port, wait_until

NODES = 2
GPUS = 8
INTERVAL_S = 1
# A merged series switches replica once the current one has been silent for
# more than twice its sample interval; the other replica's next sample then
# follows within one interval. Slack covers scrape jitter.
MAX_GAP_MS = (2 * INTERVAL_S + INTERVAL_S) * 1000 + 500


def api(base, path, **params):
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    r = http_get(url, timeout=30.0)
    check(r.status == 200, f"GET {url} answered {r.status}: {r.body[:300]!r}")
    body = json.loads(r.text)
    check(body["status"] == "success", f"GET {url}: {body}")
    return body["data"]


def query(base, expr, at_ms=None):
    params = {"query": expr}
    if at_ms is not None:
        params["time"] = f"{at_ms / 1000:.3f}"
    return api(base, "/api/v1/query", **params)["result"]


def scalar(base, expr, at_ms=None):
    r = query(base, expr, at_ms)
    return float(r[0]["value"][1]) if len(r) == 1 else None


def key(metric):
    return tuple(sorted(metric.items()))


def raw(base, selector, at_ms, window_ms):
    """{labels: [(t_ms, value)]} of selector[window] at at_ms: the samples
    in (at - window, at]."""
    return {
        key(s["metric"]): [(round(float(t) * 1000), v) for t, v in s["values"]]
        for s in query(base, f"{selector}[{window_ms}ms]", at_ms)
    }


def now_ms():
    return int(time.time() * 1000)


def replica_config(path, sim_port, replica, receiver):
    groups = "".join(f"      - targets: ['127.0.0.1:{sim_port}']\n"
                     f"        labels: {{__metrics_path__: /node/{i}/metrics}}\n"
                     for i in range(NODES))
    with open(path, "w") as f:
        f.write(f"global:\n  scrape_interval: {INTERVAL_S}s\n"
                f"  external_labels: {{replica: {replica}}}\n"
                f"remote_write:\n  - url: {receiver}/api/v1/write\n"
                "    queue_config: {batch_send_deadline: 500ms, min_backoff: 50ms, "
                "max_backoff: 500ms}\n"
                # Prometheus offsets an HA pair's scrapes from each other
                # (its offset seed hashes the external labels); gpumon's
                # offset depends on the target alone, so a URL parameter per
                # replica gives the replicas distinct scrape times.
                "scrape_configs:\n  - job_name: gpu\n"
                f"    params: {{replica: [{replica}]}}\n    static_configs:\n" + groups +
                "    relabel_configs:\n      - source_labels: [__metrics_path__]\n"
                "        regex: '/node/(\\d+)/metrics'\n        target_label: instance\n"
                "        replacement: node$1\n")


def start_server(gpumon, name, data, config, extra=()):
    return start_on_free_port(
        lambda p: [gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data", data, "--config",
                   config, *extra], "/-/healthy", name)


def check_merged_samples(merged, per_replica, killed_ms, at_ms, on_a_first):
    """Each merged series: samples taken from one replica at a time, at most
    one switch (to b, after the kill), no gap beyond MAX_GAP_MS, fresh at
    the end. Series in on_a_first must start on replica a."""
    for k, pts in merged.items():
        a = set(per_replica["a"].get(k, []))
        b = set(per_replica["b"].get(k, []))
        check(len(pts) >= 8, f"{dict(k)}: only {len(pts)} merged samples")
        sources = []
        for p in pts:
            src = ("a" if p in a else "") + ("b" if p in b else "")
            check(src, f"{dict(k)}: merged sample {p} is in neither replica's data")
            sources.append(src)
            if p[0] > killed_ms + MAX_GAP_MS:
                check("b" in src, f"{dict(k)}: sample {p} after a was killed is not b's")
        # Drop the (rare) samples both replicas share, then count switches.
        definite = [s for s in sources if len(s) == 1]
        switches = sum(1 for x, y in zip(definite, definite[1:]) if x != y)
        check(switches <= 1 and (not definite or definite[-1] == "b"),
              f"{dict(k)}: merged series alternates between replicas: {''.join(definite)}")
        if k in on_a_first:
            check(definite and definite[0] == "a" and switches == 1,
                  f"{dict(k)}: must start on replica a and switch to b once: "
                  f"{''.join(definite)}")
        gaps = [(y[0] - x[0], x[0]) for x, y in zip(pts, pts[1:])]
        worst = max(gaps)
        check(worst[0] <= MAX_GAP_MS, f"{dict(k)}: gap of {worst[0]} ms after {worst[1]} "
              f"(a killed at {killed_ms}); merged {pts}; a {sorted(a)}; b {sorted(b)}")
        check(pts[-1][0] >= at_ms - MAX_GAP_MS,
              f"{dict(k)}: no fresh samples, last at {pts[-1][0]} (query at {at_ms})")


def body(args):
    with tempfile.TemporaryDirectory() as tmp:
        procs = {}
        try:
            procs["sim"], sim_port = start_on_free_port(
                lambda p: [args.gpumon, "simulate", "--nodes", str(NODES), "--interval",
                           f"{INTERVAL_S}s", "--listen", f"127.0.0.1:{p}"], "/healthz",
                "gpumon simulate")
            rules = os.path.join(tmp, "rules.yml")
            with open(rules, "w") as f:
                f.write("groups:\n  - name: raw\n    interval: 1s\n    rules:\n"
                        "      - record: raw:gpu_temperature_celsius:count\n"
                        "        expr: count(gpu_temperature_celsius)\n")
            dedup_cfg = os.path.join(tmp, "dedup.yml")
            with open(dedup_cfg, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                        "rule_files: [rules.yml]\nscrape_configs: []\n")
            dedup_data = os.path.join(tmp, "dedup-data")
            dedup_flags = ["--web.enable-remote-write-receiver"]
            procs["dedup"], port = start_server(args.gpumon, "gpumon server (dedup)", dedup_data,
                                                dedup_cfg,
                                                dedup_flags + ["--query.replica-label", "replica"])
            dedup = f"http://127.0.0.1:{port}"
            bases = {}
            for r in ("a", "b"):
                cfg = os.path.join(tmp, f"replica-{r}.yml")
                replica_config(cfg, sim_port, r, dedup)
                procs[r], rport = start_server(args.gpumon, f"gpumon server (replica {r})",
                                               os.path.join(tmp, f"data-{r}"), cfg)
                bases[r] = f"http://127.0.0.1:{rport}"

            n = NODES * GPUS
            for r in ("a", "b"):
                wait_until(lambda r=r: scalar(dedup, f'count(gpu_temperature_celsius'
                                              f'{{replica="{r}"}})') == n, 20,
                           what=f"{n} series of replica {r} on the deduplicating server")
            time.sleep(8)  # a stretch of data from both replicas

            # Raw data: both replicas are stored.
            check(scalar(dedup, 'count(gpu_temperature_celsius{replica="a"}) + '
                         'count(gpu_temperature_celsius{replica="b"})') == 2 * n,
                  "selecting on the replica label must find each replica's series")
            wait_until(lambda: scalar(dedup, "raw:gpu_temperature_celsius:count") == 2 * n, 10,
                       what=f"the recording rule over raw data to count {2 * n}")

            # Deduplicated view.
            merged = query(dedup, "gpu_temperature_celsius")
            check(len(merged) == n, f"deduplicated: {len(merged)} series, want {n}")
            check(all("replica" not in s["metric"] for s in merged),
                  f"a deduplicated series keeps the replica label: {merged[0]['metric']}")
            local = {key(s["metric"]) for s in query(bases["a"], "gpu_temperature_celsius")}
            check({key(s["metric"]) for s in merged} == local,
                  "deduplicated series must carry the replicas' own labels")
            check(scalar(dedup, "count(gpu_temperature_celsius)") == n,
                  "count(gpu_temperature_celsius) must be the GPU count")
            check(scalar(dedup, 'count(gpu_temperature_celsius{replica=~"a|b"})') == n,
                  "a replica matcher selecting both replicas must still merge them")
            labels = api(dedup, "/api/v1/labels")
            check("replica" not in labels and "gpu" in labels, f"/api/v1/labels: {labels}")
            check(api(dedup, "/api/v1/label/replica/values") == [],
                  "replica label values must be empty")
            series = api(dedup, "/api/v1/series", **{"match[]": "gpu_temperature_celsius"})
            check(len(series) == n and all("replica" not in s for s in series),
                  f"/api/v1/series: {len(series)} series, e.g. {series[:1]}")

            # Replica a crashes; b's samples take over.
            before_kill = now_ms() - 1000
            procs["a"].proc.send_signal(signal.SIGKILL)
            procs["a"].proc.wait(timeout=10)
            killed = now_ms()
            time.sleep(8)
            at = now_ms() - 1000
            wait_until(lambda: all(
                p[-1][0] >= at - 1500 for p in raw(
                    dedup, 'gpu_temperature_celsius{replica="b"}', now_ms(), 5000).values()), 15,
                       what="replica b's latest samples to reach the deduplicating server")
            # The window starts on a sample of replica a's node0 target about
            # six intervals before a's last one, so node0's merged series starts
            # on a and must switch to b. (Six intervals lie beyond the 5 s
            # penalty a merge starts with, so the start does not shape the
            # switch.)
            a_raw = raw(dedup, 'gpu_temperature_celsius{replica="a"}', at, 30000)
            node0 = [k for k in a_raw if dict(k).get("instance") == "node0"]
            check(len(node0) == GPUS, f"replica a's node0 series: {len(node0)}")
            a_ts = [t for t, _ in a_raw[node0[0]]]
            first = [t for t in a_ts if t <= a_ts[-1] - (6 * INTERVAL_S - 0.5) * 1000]
            check(first and a_ts[-1] <= killed, f"replica a's samples: {a_ts} (killed {killed})")
            window = at - first[-1] + 1
            merged_raw = raw(dedup, "gpu_temperature_celsius", at, window)
            per_replica = {
                r: raw(dedup, f'gpu_temperature_celsius{{replica="{r}"}}', at, window)
                for r in ("a", "b")
            }
            check(len(merged_raw) == n, f"{len(merged_raw)} merged series over the kill")
            check(all(len(per_replica[r]) == n for r in ("a", "b")),
                  "both replicas must have data in the window")
            check_merged_samples(merged_raw, per_replica, killed, at, set(node0))
            check(scalar(dedup, "count(gpu_temperature_celsius)") == n,
                  "count after the kill must stay the GPU count")
            print(f"merged {n} series over {window} ms around the kill; "
                  f"{sum(len(v) for v in merged_raw.values())} samples, none missing")

            # Without --query.replica-label the stored data shows both replicas.
            procs["dedup"].stop()
            procs["dedup"], port = start_server(args.gpumon, "gpumon server (no dedup)",
                                                dedup_data, dedup_cfg, dedup_flags)
            plain = f"http://127.0.0.1:{port}"
            both = query(plain, "gpu_temperature_celsius", before_kill)
            check(len(both) == 2 * n, f"without dedup: {len(both)} series, want {2 * n}")
            check(sorted(s["metric"].get("replica") for s in both) == ["a"] * n + ["b"] * n,
                  "without dedup each series must carry replica a or b")
            check("replica" in api(plain, "/api/v1/labels"), "labels without dedup")
        finally:
            for p in procs.values():
                p.stop()


if __name__ == "__main__":
    run_test(body)
