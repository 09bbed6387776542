#!/usr/bin/env python3
"""`gpumon server --config` scrapes a simulated fleet into its TSDB.

Starts `gpumon simulate --nodes 3` (3 nodes x 8 GPUs, each node at
/node/<i>/metrics), then `gpumon server` with a Prometheus configuration
scraping the three nodes every second (instance rewritten by relabeling so
the nodes stay apart). Expects, through the server's own HTTP API: up == 1
for the 3 targets, 24 series of a GPU metric, /api/v1/targets listing the 3
targets as up. Then a bad configuration sent with SIGHUP must be refused
while scraping continues, and once the simulator is killed up must drop
to 0 and the GPU series must go stale (vanish from instant queries).
"""

import json
import os
import signal
import tempfile
import urllib.parse

from harness import check, http_get, run_test, start_on_free_port, wait_until

NODES = 3
GPUS = 8


def query(base, expr):
    r = http_get(base + "/api/v1/query?query=" + urllib.parse.quote(expr))
    check(r.status == 200, f"query {expr!r} answered {r.status}: {r.body[:300]!r}")
    body = json.loads(r.text)
    check(body["status"] == "success", f"query {expr!r}: {body}")
    return body["data"]["result"]


def up_values(base):
    return sorted((s["metric"]["instance"], s["value"][1]) for s in query(base, 'up{job="gpu"}'))


def body(args):
    with tempfile.TemporaryDirectory() as tmp:
        sim, sim_port = start_on_free_port(
            lambda port: [args.gpumon, "simulate", "--nodes", str(NODES), "--interval", "1s",
                          "--listen", f"127.0.0.1:{port}"],
            "/healthz", "gpumon simulate")
        server = None
        try:
            config = os.path.join(tmp, "prometheus.yml")
            groups = "".join(
                f"      - targets: ['127.0.0.1:{sim_port}']\n"
                f"        labels: {{__metrics_path__: /node/{i}/metrics}}\n" for i in range(NODES))
            good = ("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gpu\n"
                    "    static_configs:\n" + groups +
                    "    relabel_configs:\n      - source_labels: [__metrics_path__]\n"
                    "        regex: '/node/(\\d+)/metrics'\n        target_label: instance\n"
                    "        replacement: node$1\n")
            with open(config, "w") as f:
                f.write(good)
            data = os.path.join(tmp, "data")
            server, port = start_on_free_port(
                lambda p: [args.gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data", data,
                           "--config", config],
                "/-/healthy", "gpumon server")
            base = f"http://127.0.0.1:{port}"
            want_up = [(f"node{i}", "1") for i in range(NODES)]
            wait_until(lambda: up_values(base) == want_up, 20, what=f"up == {want_up}")
            wait_until(lambda: len(query(base, "gpu_temperature_celsius")) == NODES * GPUS, 20,
                       what=f"{NODES * GPUS} gpu_temperature_celsius series")
            per_node = query(base, "count by (instance) (gpu_temperature_celsius)")
            check(sorted((s["metric"]["instance"], s["value"][1]) for s in per_node) ==
                  [(f"node{i}", str(GPUS)) for i in range(NODES)], f"per node: {per_node}")
            report = query(base, 'scrape_samples_scraped{job="gpu"}')
            check(len(report) == NODES and all(float(s["value"][1]) > 0 for s in report),
                  f"scrape_samples_scraped: {report}")

            targets = json.loads(http_get(base + "/api/v1/targets").text)["data"]
            # The server also collects its own metrics, as job "gpumon".
            own = [t for t in targets["activeTargets"] if t["scrapePool"] == "gpumon"]
            check(len(own) == 1, f"self-monitoring target: {own}")
            wait_until(lambda: len(query(base, 'gpumon_tsdb_head_series{job="gpumon"} > 0')) == 1,
                       20, what="the server's own gpumon_tsdb_head_series")
            active = [t for t in targets["activeTargets"] if t["scrapePool"] != "gpumon"]
            check(len(active) == NODES, f"activeTargets: {active}")
            check(all(t["health"] == "up" and t["scrapePool"] == "gpu" for t in active),
                  f"activeTargets: {active}")
            check(sorted(t["scrapeUrl"] for t in active) ==
                  [f"http://127.0.0.1:{sim_port}/node/{i}/metrics" for i in range(NODES)],
                  f"scrapeUrl: {[t['scrapeUrl'] for t in active]}")

            # A bad reload is refused; the running configuration stays.
            with open(config, "w") as f:
                f.write("scrape_configs:\n  - job_name: gpu\n    scrape_intervall: 1s\n")
            os.kill(server.proc.pid, signal.SIGHUP)
            wait_until(lambda: "scrape_intervall" in server.stderr(), 10,
                       what="the reload error to be logged")
            check(server.running(), "server died on a bad reload")
            check(len(json.loads(http_get(base + "/api/v1/targets").text)["data"]
                      ["activeTargets"]) == NODES + 1, "targets changed after a bad reload")

            sim.stop()
            want_down = [(f"node{i}", "0") for i in range(NODES)]
            wait_until(lambda: up_values(base) == want_down, 20, what=f"up == {want_down}")
            wait_until(lambda: len(query(base, "gpu_temperature_celsius")) == 0, 10,
                       what="GPU series to go stale")
        finally:
            if server:
                server.stop()
            sim.stop()


if __name__ == "__main__":
    run_test(body)
