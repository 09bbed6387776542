#!/usr/bin/env python3
"""A real Prometheus scrapes the agent.

Starts the Debian `prometheus` binary on loopback with a private config and
storage directory, scraping a simulated 8 x H200 agent every second, and
waits until Prometheus can answer queries over what it scraped: 8
gpu_temperature_celsius series, all labelled simulated="true", and up == 1.
Prometheus negotiates OpenMetrics, so this also exercises that format.
"""

import json
import os
import tempfile
import urllib.parse

from harness import (Agent, TestFailure, check, http_get, need_tool, run_test,
                     start_on_free_port, wait_until)


def query(base, promql):
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    r = http_get(url)
    check(r.status == 200, f"query {promql!r} answered HTTP {r.status}: {r.body[:300]!r}")
    doc = json.loads(r.body)
    check(doc.get("status") == "success", f"query {promql!r} failed: {doc}")
    return doc["data"]["result"]


def targets_report(base):
    try:
        doc = json.loads(http_get(f"{base}/api/v1/targets").body)
        return json.dumps([{k: t.get(k) for k in ("scrapeUrl", "health", "lastError")}
                           for t in doc["data"]["activeTargets"]])
    except (OSError, ValueError, KeyError) as e:
        return f"(targets unavailable: {e})"


def body(args):
    prometheus = need_tool("prometheus", ["/usr/bin/prometheus"])
    with tempfile.TemporaryDirectory(prefix="gpumon-prom-") as tmp, \
            Agent(args.gpumon, ["--simulate", "h200x8"]) as agent:
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpumon
    static_configs:
      - targets: ["127.0.0.1:{agent.port}"]
""")
        prom, port = start_on_free_port(
            lambda port: [prometheus, f"--config.file={config}",
                          f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                          f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            "/-/ready", "prometheus", ready_timeout=60)
        base = f"http://127.0.0.1:{port}"
        with prom:

            def eight_simulated_series():
                result = query(base, "gpu_temperature_celsius")
                return result if len(result) == 8 else None

            try:
                result = wait_until(eight_simulated_series, timeout=60,
                                    what="8 gpu_temperature_celsius series in Prometheus")
            except TestFailure as e:
                raise TestFailure(f"{e}\ntargets: {targets_report(base)}\n"
                                  f"{prom.describe()}") from None
            for s in result:
                labels = s["metric"]
                check(labels.get("simulated") == "true",
                      f"series without simulated=\"true\": {labels}")
                value = float(s["value"][1])
                check(0 < value < 120, f"implausible temperature {value} for {labels}")
            gpus = sorted(s["metric"].get("gpu") for s in result)
            check(len(set(gpus)) == 8, f"expected 8 distinct gpu labels, got {gpus}")

            up = query(base, 'up{job="gpumon"}')
            check(len(up) == 1 and up[0]["value"][1] == "1",
                  f"expected up{{job=\"gpumon\"}} == 1, got {up}; "
                  f"targets: {targets_report(base)}")

            # The counter must be usable as one: rate() over it is defined once
            # there are two scrapes of it.
            def energy_rate():
                r = query(base, "rate(gpu_energy_joules_total[10s])")
                return r if len(r) == 8 and all(float(x["value"][1]) > 0 for x in r) else None

            rates = wait_until(energy_rate, timeout=30,
                               what="rate(gpu_energy_joules_total[10s]) > 0 for 8 GPUs")
            for s in rates:
                watts = float(s["value"][1])
                check(0 < watts < 2000, f"implausible energy rate {watts} W for {s['metric']}")
            print(f"prometheus scraped 8 simulated GPUs; up == 1; energy rates "
                  f"{sorted(round(float(s['value'][1])) for s in rates)} W")


if __name__ == "__main__":
    run_test(body)
