#!/usr/bin/env python3
"""`gpumon server` evaluates rules and notifies a real Alertmanager.

Starts a webhook receiver (an HTTP server in this script recording every
notification), Alertmanager 0.25 routing everything to it, `gpumon simulate
--nodes 2`, and `gpumon server` scraping the two nodes every second with a
rule file (a recording rule, an alert with a short `for`, an alert with a
long `for`) and an alerting section pointing at the Alertmanager. Expects:
- /api/v1/rules lists every rule with health "ok";
- the recording rule's samples equal the raw expression evaluated at the
  same timestamps;
- the short alert goes pending, then firing (same activeAt), with its
  annotation rendered from the alert's own labels and value;
- Alertmanager holds it as active with the external label added and the
  annotation rendered, and the webhook receives a firing notification; the
  still-pending long alert is never sent;
- after a restart on the same data directory, the long alert's activeAt is
  restored from ALERTS_FOR_STATE instead of starting over;
- once the simulator is killed (its series go stale) the alert resolves:
  Alertmanager no longer lists it as active and the webhook receives a
  resolved notification.
"""

import datetime
import http.server
import json
import os
import re
import tempfile
import threading
import time
import urllib.parse

from harness import (TestFailure, check, http_get, need_tool, run_test, start_on_free_port,
                     wait_until)

NODES = 2
CLUSTER = "it-alerting"
ALERT = "GpuPowerDraw"
LONG_ALERT = "GpuPowerDrawLong"
RECORD = "instance:gpu_power_usage_watts:max"
RAW = "max by (instance) (gpu_power_usage_watts)"

RULES = f"""groups:
  - name: record
    interval: 1s
    # Rules read data 2 s old, so every scrape they see has been committed and
    # the raw expression at a recorded timestamp sees the same samples.
    query_offset: 2s
    rules:
      - record: {RECORD}
        expr: {RAW}
  - name: alerts
    interval: 1s
    rules:
      - alert: {ALERT}
        expr: {RAW} > 0
        for: 4s
        labels:
          severity: page
        annotations:
          summary: 'GPU power on {{{{ $labels.instance }}}}: {{{{ $value | humanize }}}}'
      - alert: {LONG_ALERT}
        expr: {RAW} > 0
        # Longer than the 10 m 'for' grace period, so its state is restored.
        for: 30m
        labels:
          severity: ticket
"""


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


def parse_time(text):
    """RFC 3339 with up to nanoseconds -> Unix seconds (float)."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)", text)
    check(m is not None, f"not an RFC 3339 time: {text!r}")
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    whole = datetime.datetime.fromisoformat(m.group(1) + zone).timestamp()
    return whole + (float(m.group(2)) if m.group(2) else 0.0)


def humanize(v):
    """Prometheus's `humanize` template function (SI prefixes, %.4g)."""
    if v == 0 or v != v or v in (float("inf"), float("-inf")):
        return "%.4g" % v
    prefix = ""
    if abs(v) >= 1:
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(v) < 1000:
                break
            prefix, v = p, v / 1000
    else:
        for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
            if abs(v) >= 1:
                break
            prefix, v = p, v * 1000
    return "%.4g%s" % (v, prefix)


def alerts_of(base, name):
    return {a["labels"]["instance"]: a for a in api(base, "/api/v1/alerts")["alerts"]
            if a["labels"].get("alertname") == name}


def am_alerts(am_base, name):
    r = http_get(am_base + "/api/v2/alerts?filter=" + urllib.parse.quote(f'alertname="{name}"'))
    check(r.status == 200, f"Alertmanager /api/v2/alerts answered {r.status}: {r.body[:300]!r}")
    return {a["labels"].get("instance"): a for a in json.loads(r.text)}


class Webhook:
    """Records the JSON bodies POSTed by Alertmanager's webhook receiver."""

    def __init__(self):
        self.lock = threading.Lock()
        self.notifications = []
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with hook.lock:
                    hook.notifications.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def received(self, status, name):
        """Instances of `name` alerts notified with the given status.

        The alert's own status counts, not the notification's: when one
        instance resolves while another still fires, Alertmanager sends the
        resolved one in a notification whose overall status is "firing", and
        drops it from the group afterwards."""
        with self.lock:
            return {a["labels"].get("instance") for n in self.notifications
                    for a in n.get("alerts", [])
                    if a.get("status") == status and a["labels"].get("alertname") == name}

    def snapshot(self):
        with self.lock:
            return list(self.notifications)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def rule_health(base):
    return {r["name"]: r["health"] for g in api(base, "/api/v1/rules")["groups"]
            for r in g["rules"]}


def check_recording_rule(base):
    """Every recorded sample equals the raw expression at its timestamp."""
    wait_until(lambda: (lambda r: len(r) == NODES and all(
        float(s["value"][1]) >= 4 for s in r))(query(base, f"count_over_time({RECORD}[30s])")),
               20, what=f"4 samples of {RECORD} per instance")
    recorded = {}
    for s in query(base, f"{RECORD}[30s]"):
        recorded[s["metric"]["instance"]] = s["values"]
    check(sorted(recorded) == [f"node{i}" for i in range(NODES)],
          f"{RECORD} instances: {sorted(recorded)}")
    compared = 0
    for instance, values in recorded.items():
        for t, v in values[-4:]:
            raw = {s["metric"]["instance"]: s["value"] for s in query(base, RAW, at=t)}
            check(instance in raw, f"raw {RAW} at {t} has no {instance}: {raw}")
            check(raw[instance][0] == t, f"raw result timestamp {raw[instance][0]} != {t}")
            check(float(raw[instance][1]) == float(v),
                  f"{RECORD}{{instance={instance!r}}} at {t} is {v}, the raw expression "
                  f"gives {raw[instance][1]}")
            compared += 1
    check(compared >= 2 * NODES, f"only {compared} recorded samples to compare")
    # The rule keeps the instance label and only it (plus the new name).
    for s in query(base, RECORD):
        check(set(s["metric"]) == {"__name__", "instance"}, f"recorded labels: {s['metric']}")


def start_server(gpumon, config, data):
    return start_on_free_port(
        lambda p: [gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data", data, "--config",
                   config],
        "/-/healthy", "gpumon server")


def body(args):
    alertmanager = need_tool("prometheus-alertmanager", ["/usr/bin/prometheus-alertmanager"])
    hook = Webhook()
    sim = am = server = None
    with tempfile.TemporaryDirectory() as tmp:
        try:
            am_config = os.path.join(tmp, "alertmanager.yml")
            with open(am_config, "w") as f:
                f.write("route:\n  receiver: hook\n  group_by: [alertname]\n"
                        "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                        "receivers:\n  - name: hook\n    webhook_configs:\n"
                        f"      - url: http://127.0.0.1:{hook.port}/hook\n"
                        "        send_resolved: true\n")
            am, am_port = start_on_free_port(
                lambda p: [alertmanager, f"--config.file={am_config}",
                           f"--storage.path={os.path.join(tmp, 'am')}",
                           f"--web.listen-address=127.0.0.1:{p}", "--cluster.listen-address="],
                "/-/ready", "alertmanager")
            am_base = f"http://127.0.0.1:{am_port}"

            sim, sim_port = start_on_free_port(
                lambda p: [args.gpumon, "simulate", "--nodes", str(NODES), "--interval", "1s",
                           "--listen", f"127.0.0.1:{p}"],
                "/healthz", "gpumon simulate")
            with open(os.path.join(tmp, "rules.yml"), "w") as f:
                f.write(RULES)
            groups = "".join(
                f"      - targets: ['127.0.0.1:{sim_port}']\n"
                f"        labels: {{__metrics_path__: /node/{i}/metrics}}\n" for i in range(NODES))
            config = os.path.join(tmp, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                        f"  external_labels:\n    cluster: {CLUSTER}\n"
                        # Relative to the configuration file's directory.
                        "rule_files:\n  - rules.yml\n"
                        "alerting:\n  alertmanagers:\n    - static_configs:\n"
                        f"        - targets: ['127.0.0.1:{am_port}']\n"
                        "scrape_configs:\n  - job_name: gpu\n    static_configs:\n" + groups +
                        "    relabel_configs:\n      - source_labels: [__metrics_path__]\n"
                        "        regex: '/node/(\\d+)/metrics'\n        target_label: instance\n"
                        "        replacement: node$1\n")
            data = os.path.join(tmp, "data")
            server, port = start_server(args.gpumon, config, data)
            base = f"http://127.0.0.1:{port}"
            instances = [f"node{i}" for i in range(NODES)]

            # Pending, then firing, for the short alert; polled often since
            # it is pending for only a few evaluations.
            pending_at = {}
            deadline = time.monotonic() + 40
            while True:
                current = alerts_of(base, ALERT)
                for inst, a in current.items():
                    if a["state"] == "pending":
                        pending_at.setdefault(inst, a["activeAt"])
                if (sorted(current) == instances and
                        all(a["state"] == "firing" for a in current.values())):
                    break
                check(time.monotonic() < deadline,
                      f"{ALERT} did not fire for {instances} within 40 s: {current}\n"
                      f"{server.describe()}")
                time.sleep(0.1)
            check(sorted(pending_at) == instances,
                  f"{ALERT} was not seen pending for every instance before firing: {pending_at}")
            for inst, a in current.items():
                check(a["activeAt"] == pending_at[inst],
                      f"{ALERT}{{instance={inst!r}}} activeAt changed from pending "
                      f"({pending_at[inst]}) to firing ({a['activeAt']})")
                check(a["labels"] == {"alertname": ALERT, "instance": inst, "severity": "page"},
                      f"{ALERT} labels: {a['labels']}")
                want = f"GPU power on {inst}: {humanize(float(a['value']))}"
                check(a["annotations"] == {"summary": want},
                      f"{ALERT} annotations: {a['annotations']}, want summary {want!r}")

            health = rule_health(base)
            check(health == {RECORD: "ok", ALERT: "ok", LONG_ALERT: "ok"},
                  f"/api/v1/rules health: {health}")
            check_recording_rule(base)

            ams = api(base, "/api/v1/alertmanagers")
            check([a["url"] for a in ams["activeAlertmanagers"]] ==
                  [f"{am_base}/api/v2/alerts"], f"/api/v1/alertmanagers: {ams}")

            # The real Alertmanager holds the firing alerts.
            got = wait_until(lambda: (lambda a: a if sorted(a) == instances else None)(
                am_alerts(am_base, ALERT)), 20, what=f"{ALERT} in Alertmanager")
            for inst, a in got.items():
                check(a["labels"] == {"alertname": ALERT, "instance": inst, "severity": "page",
                                      "cluster": CLUSTER},
                      f"Alertmanager labels: {a['labels']}")
                summary = a["annotations"].get("summary", "")
                check(re.fullmatch(rf"GPU power on {inst}: \d+(\.\d+)?[kM]?", summary),
                      f"Alertmanager annotation not rendered: {a['annotations']}")
                check(a["status"]["state"] == "active", f"Alertmanager status: {a['status']}")
                check(a["generatorURL"].startswith("http"), f"generatorURL: {a['generatorURL']}")
            wait_until(lambda: hook.received("firing", ALERT) == set(instances), 20,
                       what=f"a firing webhook notification for {instances}")
            for n in hook.snapshot():
                check(n["receiver"] == "hook" and n["groupLabels"] == {"alertname": ALERT},
                      f"webhook notification: {n}")
                check(all(a["labels"].get("cluster") == CLUSTER for a in n["alerts"]),
                      f"webhook alerts lack the external label: {n['alerts']}")
            check(am_alerts(am_base, LONG_ALERT) == {},
                  f"pending {LONG_ALERT} was sent to Alertmanager")

            # Restart while the long alert is pending: its activeAt survives.
            long_before = alerts_of(base, LONG_ALERT)
            check(sorted(long_before) == instances and
                  all(a["state"] == "pending" for a in long_before.values()),
                  f"{LONG_ALERT}: {long_before}")
            active0 = {i: parse_time(a["activeAt"]) for i, a in long_before.items()}
            # Pending long enough that a restored activeAt (shifted by the
            # downtime) still lies before the restart, unlike a reset one.
            wait_until(lambda: time.time() - max(active0.values()) > 8, 15,
                       what=f"{LONG_ALERT} pending for 8 s")
            state = {s["metric"]["instance"]: float(s["value"][1])
                     for s in query(base, f'ALERTS_FOR_STATE{{alertname="{LONG_ALERT}"}}')}
            check(sorted(state) == instances and
                  all(abs(state[i] - active0[i]) < 1 for i in instances),
                  f"ALERTS_FOR_STATE {state} does not hold activeAt {active0}")
            stopped_at = time.time()
            check(server.stop() == 0, f"server did not stop cleanly\n{server.describe()}")
            restarted_at = time.time()
            server, port = start_server(args.gpumon, config, data)
            base = f"http://127.0.0.1:{port}"

            def restored():
                now = alerts_of(base, LONG_ALERT)
                if sorted(now) != instances:
                    return None
                at = {i: parse_time(a["activeAt"]) for i, a in now.items()}
                return at if all(t < restarted_at for t in at.values()) else None

            active1 = wait_until(restored, 20,
                                 what=f"{LONG_ALERT} activeAt restored to before the restart")
            for i in instances:
                # Restoration keeps whole seconds and shifts by the downtime.
                down = time.time() - stopped_at
                check(active0[i] - 1 <= active1[i] <= active0[i] + down + 1,
                      f"{LONG_ALERT}{{instance={i!r}}} activeAt {active1[i]} restored outside "
                      f"[original {active0[i]}, original + downtime {down:.1f} s]")
            check(all(a["state"] == "pending" for a in alerts_of(base, LONG_ALERT).values()),
                  f"{LONG_ALERT} after restart: {alerts_of(base, LONG_ALERT)}")

            # The short alert fires again; then its data goes away.
            wait_until(lambda: (lambda a: sorted(a) == instances and all(
                x["state"] == "firing" for x in a.values()))(alerts_of(base, ALERT)), 30,
                       what=f"{ALERT} firing after the restart")
            check(hook.received("resolved", ALERT) == set(),
                  f"resolved before the condition ended: {hook.snapshot()}")
            sim.stop()
            wait_until(lambda: alerts_of(base, ALERT) == {}, 20,
                       what=f"{ALERT} to leave /api/v1/alerts once the series are stale")
            wait_until(lambda: am_alerts(am_base, ALERT) == {}, 20,
                       what=f"{ALERT} to be no longer active in Alertmanager")
            wait_until(lambda: hook.received("resolved", ALERT) == set(instances), 20,
                       what=f"a resolved webhook notification for {instances}")
            resolved = [a for n in hook.snapshot() if n["status"] == "resolved"
                        for a in n["alerts"]]
            check(all(a["status"] == "resolved" and
                      parse_time(a["endsAt"]) > parse_time(a["startsAt"]) for a in resolved),
                  f"resolved alerts: {resolved}")
        except TestFailure as e:
            extra = "\n".join(p.describe() for p in (server, am) if p is not None)
            raise TestFailure(f"{e}\n{extra}") from None
        finally:
            for p in (server, sim, am):
                if p is not None:
                    p.stop()
            hook.close()


if __name__ == "__main__":
    run_test(body)
