#!/usr/bin/env python3
"""`gpumon server` reloads its configuration on SIGHUP and POST /-/reload.

Starts `gpumon simulate --nodes 2` and `gpumon server --web.enable-lifecycle`
scraping node 0 every second, with one rule file (group "a"). Then:
- SIGHUP after adding a job for node 1 and a second rule file (group "b"):
  the new target and group appear and produce data;
- POST /-/reload with an unknown configuration field, and separately with a
  rule expression that does not parse: refused with HTTP 500 naming the
  problem, logged, gpumon_config_last_reload_successful 0 on /metrics, the
  running targets and rules unchanged; a fixed file then reloads (200, the
  gauge back to 1); the bad rule file sent with SIGHUP is refused the same way;
- no data is lost across the reloads: for the job scraped from the start
  and for the rule group evaluated from the start, count_over_time over the
  whole run equals the number of intervals in it.
"""

import json
import os
import signal
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from harness import (TestFailure, check, http_get, parse_exposition, run_test, series,
                     start_on_free_port, wait_until)

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_post(url):
    check(url.startswith("http://127.0.0.1:"), f"refusing non-loopback URL {url}")
    request = urllib.request.Request(url, data=b"", method="POST")
    try:
        with _OPENER.open(request, timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def api(base, path):
    r = http_get(base + path)
    check(r.status == 200, f"GET {path} answered {r.status}: {r.body[:300]!r}")
    body = json.loads(r.text)
    check(body["status"] == "success", f"GET {path}: {body}")
    return body["data"]


def query(base, expr, at=None):
    path = "/api/v1/query?query=" + urllib.parse.quote(expr)
    if at is not None:
        path += f"&time={at:.3f}"
    return api(base, path)["result"]


def scalar_by(base, expr, label):
    return {s["metric"].get(label): float(s["value"][1]) for s in query(base, expr)}


def targets(base):
    """(pool, scrapeUrl, health) of every target but the server's own."""
    active = api(base, "/api/v1/targets")["activeTargets"]
    return sorted((t["scrapePool"], t["scrapeUrl"], t["health"]) for t in active
                  if t["scrapePool"] != "gpumon")


def rules(base):
    """{group name: [(rule name, query, health)]}."""
    return {g["name"]: [(r["name"], r["query"], r["health"]) for r in g["rules"]]
            for g in api(base, "/api/v1/rules")["groups"]}


def reload_gauge(base):
    r = http_get(base + "/metrics")
    check(r.status == 200, f"/metrics answered {r.status}")
    samples, _ = parse_exposition(r.text)
    found = series(samples, "gpumon_config_last_reload_successful")
    check(len(found) == 1, f"gpumon_config_last_reload_successful on /metrics: {found}")
    return found[0].value


def job(name, sim_port, node):
    return (f"  - job_name: {name}\n    metrics_path: /node/{node}/metrics\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{sim_port}']\n")


RULES_A = """groups:
  - name: a
    interval: 1s
    rules:
      - record: job:gpu_temperature_celsius:count
        expr: count by (job) (gpu_temperature_celsius)
"""
RULES_B = """groups:
  - name: b
    interval: 1s
    rules:
      - record: job:gpu_power_usage_watts:max
        expr: max by (job) (gpu_power_usage_watts)
"""


def check_no_loss(base, expr, start, before, what):
    """Samples of `expr` (one series) since `start`, the first one before
    `before`, 1 s apart: none missing."""
    now = time.time()
    window = int(now - start) + 3
    got = query(base, f"{expr}[{window}s]", at=now)
    check(len(got) == 1, f"{what}: {len(got)} series for {expr}")
    stamps = [t for t, _ in got[0]["values"]]
    check(stamps[0] < before, f"{what}: data before the reloads is gone, first sample at "
                              f"{stamps[0]:.3f}, first reload at {before:.3f}")
    intervals = round(stamps[-1] - stamps[0])
    count = query(base, f"count_over_time({expr}[{window}s])", at=now)
    check(len(count) == 1, f"{what}: count_over_time gave {count}")
    check(float(count[0]["value"][1]) == len(stamps) == intervals + 1,
          f"{what}: count_over_time {count[0]['value'][1]} and {len(stamps)} samples over "
          f"{intervals} 1-s intervals; gaps: "
          f"{[(a, b) for a, b in zip(stamps, stamps[1:]) if b - a > 1.5]}")


def body(args):
    with tempfile.TemporaryDirectory() as tmp:
        sim, sim_port = start_on_free_port(
            lambda p: [args.gpumon, "simulate", "--nodes", "2", "--interval", "1s", "--listen",
                       f"127.0.0.1:{p}"],
            "/healthz", "gpumon simulate")
        server = None
        try:
            config = os.path.join(tmp, "prometheus.yml")
            rules_b = os.path.join(tmp, "rules_b.yml")
            with open(os.path.join(tmp, "rules_a.yml"), "w") as f:
                f.write(RULES_A)
            with open(rules_b, "w") as f:
                f.write(RULES_B)
            head = "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            one = head + "rule_files: [rules_a.yml]\nscrape_configs:\n" + job("n0", sim_port, 0)
            two = (head + "rule_files: [rules_a.yml, rules_b.yml]\nscrape_configs:\n" +
                   job("n0", sim_port, 0) + job("n1", sim_port, 1))
            with open(config, "w") as f:
                f.write(one)
            start = time.time()
            server, port = start_on_free_port(
                lambda p: [args.gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data",
                           os.path.join(tmp, "data"), "--config", config,
                           "--web.enable-lifecycle"],
                "/-/healthy", "gpumon server")
            base = f"http://127.0.0.1:{port}"
            url = [f"http://127.0.0.1:{sim_port}/node/{i}/metrics" for i in range(2)]
            count_a = "job:gpu_temperature_celsius:count"
            max_b = "job:gpu_power_usage_watts:max"

            wait_until(lambda: targets(base) == [("n0", url[0], "up")], 20, what="target n0 up")
            wait_until(lambda: scalar_by(base, count_a, "job") == {"n0": 8}, 20,
                       what=f"{count_a} == 8 for n0")
            check(list(rules(base)) == ["a"], f"groups: {rules(base)}")
            check(reload_gauge(base) == 1, "reload gauge is not 1 after start")

            # Series that must keep getting samples: scrapes and rule results.
            watched = ['up{job="n0"}', f'{count_a}{{job="n0"}}']

            def runs_on(what):
                """Waits for two more samples of every watched series."""
                since = time.time()
                for expr in watched:
                    wait_until(lambda: any(float(s["value"][1]) >= since + 2
                                           for s in query(base, f"timestamp({expr})")), 10,
                               what=f"{what}: new samples of {expr}")

            runs_on("first configuration")

            # SIGHUP: a job and a rule group are added.
            first_reload = time.time()
            with open(config, "w") as f:
                f.write(two)
            os.kill(server.proc.pid, signal.SIGHUP)
            want_targets = [("n0", url[0], "up"), ("n1", url[1], "up")]
            wait_until(lambda: targets(base) == want_targets, 20, what=f"targets {want_targets}")
            wait_until(lambda: scalar_by(base, count_a, "job") == {"n0": 8, "n1": 8}, 20,
                       what=f"{count_a} == 8 for n0 and n1")
            wait_until(lambda: sorted(scalar_by(base, max_b, "job")) == ["n0", "n1"], 20,
                       what=f"{max_b} for n0 and n1")
            # The recorded value is the raw maximum (both read the same data).
            for name, value in scalar_by(base, max_b, "job").items():
                check(value > 0, f"{max_b}{{job={name!r}}} = {value}")
            good_rules = wait_until(
                lambda: (lambda r: r if sorted(r) == ["a", "b"] and all(
                    h == "ok" for g in r.values() for _, _, h in g) else None)(rules(base)),
                10, what="rule groups a and b healthy")
            check(reload_gauge(base) == 1, "reload gauge is not 1 after a good SIGHUP reload")
            watched += ['up{job="n1"}', f'{max_b}{{job="n1"}}']
            runs_on("SIGHUP adding a job and a group")

            def refused(what, needle, send):
                logged = server.stderr().count(needle)
                status, text = send()
                if status is not None:
                    check(status == 500 and needle in text,
                          f"{what}: POST /-/reload answered {status} {text!r}, want 500 "
                          f"naming {needle!r}")
                wait_until(lambda: server.stderr().count(needle) > logged, 10,
                           what=f"{what}: the reason ({needle!r}) to be logged")
                check(server.running(), f"{what}: the server died")
                check(reload_gauge(base) == 0,
                      f"{what}: gpumon_config_last_reload_successful is not 0")
                check(targets(base) == want_targets, f"{what}: targets changed: {targets(base)}")
                runs_on(what)
                now = rules(base)
                check({g: [(n, q) for n, q, _ in r] for g, r in now.items()} ==
                      {g: [(n, q) for n, q, _ in r] for g, r in good_rules.items()},
                      f"{what}: rules changed: {now}")

            def post():
                return http_post(base + "/-/reload")

            def accepted(what, send):
                status, text = send()
                if status is not None:
                    check(status == 200, f"{what}: POST /-/reload answered {status} {text!r}")
                wait_until(lambda: reload_gauge(base) == 1, 10,
                           what=f"{what}: gpumon_config_last_reload_successful back to 1")
                runs_on(what)

            def hup():
                os.kill(server.proc.pid, signal.SIGHUP)
                return None, ""

            # An unknown field in the configuration.
            first_refusal = time.time()
            with open(config, "w") as f:
                f.write(two.replace("  scrape_interval: 1s\n", "  scrape_intervall: 1s\n"))
            refused("unknown config field", "scrape_intervall", post)
            with open(config, "w") as f:
                f.write(two)
            accepted("fixed config", post)

            # A rule expression that does not parse, by POST then by SIGHUP.
            with open(rules_b, "w") as f:
                f.write(RULES_B.replace("(gpu_power_usage_watts)", "(gpu_power_usage_watts"))
            refused("bad rule expr (POST)", "rules_b.yml", post)
            refused("bad rule expr (SIGHUP)", "rules_b.yml", hup)
            with open(rules_b, "w") as f:
                f.write(RULES_B)
            accepted("fixed rules (SIGHUP)", hup)
            check(rules(base).keys() == good_rules.keys(), f"groups: {rules(base)}")

            # Nothing lost: scraping and rule evaluation ran through it all.
            check_no_loss(base, 'up{job="n0"}', start, first_reload, "job n0")
            check_no_loss(base, f'{count_a}{{job="n0"}}', start, first_reload, "group a")
            check_no_loss(base, 'up{job="n1"}', first_reload, first_refusal, "job n1")
            check_no_loss(base, f'{max_b}{{job="n1"}}', first_reload, first_refusal, "group b")
        except TestFailure as e:
            raise TestFailure(f"{e}\n{server.describe() if server else ''}") from None
        finally:
            if server:
                server.stop()
            sim.stop()


if __name__ == "__main__":
    run_test(body)
