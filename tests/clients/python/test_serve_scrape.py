#!/usr/bin/env python3
"""A training job serving /metrics is scraped by a real `gpumon server`.

The monitor serves on a free loopback port and runs a known number of steps;
the server finds it through file_sd (a JSON target file) with honor_labels
(the job's own `job` label wins, as for pushed groups) and a 1 s scrape
interval. Through the server's /api/v1/query: training_steps_total of the
job equals the steps run, with the job/rank/local_rank/node labels the
client set; more steps later show up as the new count."""

import json
import os
import sys
import tempfile
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clienttest  # noqa: E402

clienttest.setup_paths()
clienttest.require("prometheus_client")

import gpumon  # noqa: E402

JOB = "scrape-test"


def query(harness, base, expr):
    r = harness.http_get(base + "/api/v1/query?query=" + urllib.parse.quote(expr))
    harness.check(r.status == 200, f"query {expr!r} answered {r.status}: {r.body[:300]!r}")
    body = json.loads(r.text)
    harness.check(body["status"] == "success", f"query {expr!r}: {body}")
    return body["data"]["result"]


def run_steps(mon, n):
    for i in range(n):
        with mon.step(samples=2, tokens=32) as step:
            with step.section("forward"):
                pass
            step.loss(1.0 / (i + 1))


class ServeScrapeTest(unittest.TestCase):
    def test_server_scrapes_the_job(self):
        binary = clienttest.gpumon_binary()
        if binary is None:
            self.skipTest("no gpumon binary (--gpumon)")
        import harness
        mon = gpumon.TrainingMonitor(job=JOB, rank=1, local_rank=1, node="trainer-0",
                                     serve_port=0, serve_addr="127.0.0.1")
        server = None
        try:
            run_steps(mon, 7)
            with tempfile.TemporaryDirectory() as tmp:
                targets = os.path.join(tmp, "jobs.json")
                with open(targets, "w") as f:
                    json.dump([{"targets": [f"127.0.0.1:{mon.serve_port}"],
                                "labels": {"team": "ml"}}], f)
                config = os.path.join(tmp, "gpumon.yml")
                with open(config, "w") as f:
                    f.write("global:\n  scrape_interval: 1s\n"
                            "scrape_configs:\n"
                            "  - job_name: training-jobs\n"
                            "    honor_labels: true\n"
                            "    file_sd_configs:\n"
                            f"      - files: ['{targets}']\n"
                            "        refresh_interval: 1s\n")
                server, port = harness.start_on_free_port(
                    lambda p: [binary, "server", "--listen", f"127.0.0.1:{p}",
                               "--data", os.path.join(tmp, "data"), "--config", config],
                    "/-/healthy", "gpumon server")
                base = f"http://127.0.0.1:{port}"
                expr = f'training_steps_total{{job="{JOB}"}}'

                def steps_seen(want):
                    got = query(harness, base, expr)
                    return got if len(got) == 1 and float(got[0]["value"][1]) == want else None

                got = harness.wait_until(lambda: steps_seen(7), 30,
                                         what=f"{expr} == 7 on the server")
                labels = got[0]["metric"]
                self.assertEqual(labels["rank"], "1")
                self.assertEqual(labels["local_rank"], "1")
                self.assertEqual(labels["node"], "trainer-0")
                self.assertEqual(labels["team"], "ml")
                loss = query(harness, base, f'training_loss{{job="{JOB}"}}')
                self.assertEqual(float(loss[0]["value"][1]), 1.0 / 7)
                run_steps(mon, 3)
                harness.wait_until(lambda: steps_seen(10), 30,
                                   what=f"{expr} == 10 on the server")
                up = query(harness, base, 'up{job="training-jobs"}')
                self.assertEqual([s["value"][1] for s in up], ["1"])
                server.stop()
        finally:
            if server is not None:
                server.stop()
            mon.close()


if __name__ == "__main__":
    clienttest.main()
