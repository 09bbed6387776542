#!/usr/bin/env python3
"""The agent's Pushgateway-compatible receiver, driven by the real
prometheus_client push functions (push_to_gateway, pushadd_to_gateway,
delete_from_gateway): grouping labels, replace vs merge, delete, expiry, limit
errors and basic auth via --web.config.file. The agent runs on simulated GPUs.

Run: python3 test_push_gateway.py --gpumon <binary> --source-dir <repo>
Needs prometheus_client (Debian's python3-prometheus-client); exits 77 without.
"""
import base64
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from harness import check  # noqa: E402

USER = "pusher"
PASSWORD = "push-s3cret"
# bcrypt of PASSWORD (cost 4, the minimum: the test needs no strength).
PASSWORD_HASH = "$2b$04$uRoYkPgczhDg15k0EDO4cOqo0yGAG3o0JC1Bogw2VIQmOJkrEmJpO"
AUTH = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

# The simulated agent talks to loopback only; keep proxies out of it.
for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
    os.environ.pop(var, None)


def import_client():
    try:
        import prometheus_client  # noqa: F401
        from prometheus_client import exposition  # noqa: F401
    except ImportError:
        raise harness.Skip(f"{sys.executable} has no prometheus_client "
                           "(Debian: python3-prometheus-client)") from None
    return prometheus_client


def scrape(agent, auth=None):
    headers = {"Authorization": auth} if auth else None
    r = harness.http_get(agent.base + "/metrics", headers=headers)
    check(r.status == 200, f"GET /metrics answered {r.status}: {r.body[:300]!r}")
    samples, types = harness.parse_exposition(r.text)
    return samples, types, r.text


def raw_push(agent, method, path, body, auth=None):
    """(status, body text) of a push sent with urllib, to read error bodies."""
    req = urllib.request.Request(agent.base + path, data=body.encode(), method=method,
                                 headers={"Content-Type": "text/plain; version=0.0.4"})
    if auth:
        req.add_header("Authorization", auth)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def expect_push_error(what, fn):
    try:
        fn()
    except OSError as e:  # urllib's HTTPError is an OSError
        return str(e)
    raise harness.TestFailure(f"{what}: the push was accepted")


def one(samples, name, **labels):
    found = harness.series(samples, name, **labels)
    check(len(found) == 1, f"want exactly one {name}{labels}, found {found}")
    return found[0]


class AuthAgent:
    def __init__(self, process, port):
        self.process = process
        self.port = port
        self.base = f"http://127.0.0.1:{port}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.process.stop()
        return False


def test_auth_and_semantics(pc, args, tmp):
    from prometheus_client.exposition import basic_auth_handler

    def auth_handler(url, method, timeout, headers, data):
        return basic_auth_handler(url, method, timeout, headers, data, USER, PASSWORD)

    web = os.path.join(tmp, "web.yml")
    with open(web, "w") as f:
        f.write(f"basic_auth_users:\n  {USER}: '{PASSWORD_HASH}'\n")
    config = os.path.join(tmp, "agent.yml")
    with open(config, "w") as f:
        f.write("push:\n  expiry: 0\n  max_series_per_group: 50\n  max_series: 80\n"
                "  max_body_bytes: 65536\n")
    # Behind basic auth the readiness probe (no credentials) gets 401.
    proc, port = harness.start_on_free_port(
        lambda port: [args.gpumon, "agent", "--listen", f"127.0.0.1:{port}", "--simulate",
                      "h100x2", "--config", config, "--web.config.file", web],
        "/healthz", "gpumon agent", expect_status=401)
    agent = AuthAgent(proc, port)
    with agent:
        gw = f"127.0.0.1:{agent.port}"
        reg = pc.CollectorRegistry()
        loss = pc.Gauge("training_loss", "Loss of the last step.", registry=reg)
        steps = pc.Counter("training_steps", "Optimizer steps.", registry=reg)
        hist = pc.Histogram("training_step_duration_seconds", "Step time.", registry=reg,
                            buckets=(0.1, 1.0))
        loss.set(0.75)
        steps.inc(3)
        hist.observe(0.5)
        key = {"node": "n1", "rank": "0"}

        # Without credentials the agent refuses the push.
        msg = expect_push_error("push without credentials",
                                lambda: pc.push_to_gateway(gw, "train", reg, grouping_key=key))
        check("401" in msg, f"want 401 without credentials, got {msg}")

        pc.push_to_gateway(gw, "train", reg, grouping_key=key, handler=auth_handler)
        samples, types, text = scrape(agent, AUTH)
        check(one(samples, "training_loss", job="train", node="n1", rank="0").value == 0.75,
              "training_loss value")
        check(one(samples, "training_steps_total", job="train", node="n1").value == 3,
              "training_steps_total value")
        check(types.get("training_step_duration_seconds") == "histogram",
              f"histogram type, got {types.get('training_step_duration_seconds')}")
        check(one(samples, "training_step_duration_seconds_bucket", job="train",
                  le="1.0").value == 1, "histogram bucket")
        check(one(samples, "training_step_duration_seconds_count", job="train").value == 1,
              "histogram count")
        check("# TYPE training_step_duration_seconds_bucket" not in text,
              "histogram components must be one family")
        push_time = one(samples, "push_time_seconds", job="train", node="n1", rank="0").value
        check(push_time > 1e9, f"push_time_seconds is Unix time, got {push_time}")
        # GPU series are still there, beside the pushed ones.
        check(harness.series(samples, "gpu_temperature_celsius"), "GPU series missing")

        # POST (pushadd) keeps the other families; PUT (push) replaces them.
        reg2 = pc.CollectorRegistry()
        extra = pc.Gauge("training_grad_norm", "Grad norm.", registry=reg2)
        extra.set(2.5)
        pc.pushadd_to_gateway(gw, "train", reg2, grouping_key=key, handler=auth_handler)
        samples, _, _ = scrape(agent, AUTH)
        one(samples, "training_loss", job="train", rank="0")
        check(one(samples, "training_grad_norm", job="train", rank="0").value == 2.5,
              "pushadd value")
        pc.push_to_gateway(gw, "train", reg2, grouping_key=key, handler=auth_handler)
        samples, _, _ = scrape(agent, AUTH)
        check(not harness.series(samples, "training_loss", job="train", rank="0"),
              "PUT must replace the whole group")
        one(samples, "training_grad_norm", job="train", rank="0")

        # A second group of the same job: families merge, groups stay apart.
        pc.push_to_gateway(gw, "train", reg2, grouping_key={"node": "n1", "rank": "1"},
                           handler=auth_handler)
        samples, _, text = scrape(agent, AUTH)
        check(len(harness.series(samples, "training_grad_norm", job="train")) == 2,
              "two groups' samples")
        check(text.count("# TYPE training_grad_norm ") == 1, "one TYPE line per family")

        # Grouping values with "/" and empty values travel base64-encoded.
        pc.push_to_gateway(gw, "dir_cleaner", reg2,
                           grouping_key={"path": "/var/tmp", "empty": ""},
                           handler=auth_handler)
        samples, _, _ = scrape(agent, AUTH)
        one(samples, "training_grad_norm", job="dir_cleaner", path="/var/tmp")

        # delete_from_gateway removes the group (and its push_time_seconds).
        pc.delete_from_gateway(gw, "train", grouping_key=key, handler=auth_handler)
        samples, _, _ = scrape(agent, AUTH)
        check(not harness.series(samples, "training_grad_norm", job="train", rank="0"),
              "deleted group still served")
        check(not harness.series(samples, "push_time_seconds", job="train", rank="0"),
              "deleted group's push_time_seconds still served")
        one(samples, "training_grad_norm", job="train", rank="1")

        # Limits: 60 series in one group is over max_series_per_group 50.
        reg3 = pc.CollectorRegistry()
        many = pc.Gauge("training_metric", "User metric.", ["metric"], registry=reg3)
        for i in range(60):
            many.labels(metric=f"m{i}").set(i)
        msg = expect_push_error("push over the series limit", lambda: pc.push_to_gateway(
            gw, "big", reg3, grouping_key={"rank": "0"}, handler=auth_handler))
        check("400" in msg, f"want 400 over the series limit, got {msg}")
        body = pc.generate_latest(reg3).decode()
        status, text = raw_push(agent, "PUT", "/metrics/job/big/rank/0", body, AUTH)
        check(status == 400 and "max_series_per_group 50" in text,
              f"series limit answer: {status} {text!r}")
        # A sample label contradicting the grouping key is rejected.
        status, text = raw_push(agent, "PUT", "/metrics/job/train/rank/0",
                                'training_loss{rank="1"} 1\n', AUTH)
        check(status == 400 and "conflicts with the grouping label" in text,
              f"grouping conflict answer: {status} {text!r}")
        # Timestamps are rejected, as by Pushgateway.
        status, text = raw_push(agent, "PUT", "/metrics/job/ts", "x 1 1700000000000\n", AUTH)
        check(status == 400 and "timestamp" in text, f"timestamp answer: {status} {text!r}")
        # A body over max_body_bytes is 413.
        status, text = raw_push(agent, "PUT", "/metrics/job/huge", "#" * 70000 + "\n", AUTH)
        check(status == 413, f"oversized body answer: {status} {text[:200]!r}")
        # Pushed names may not pass for the agent's own GPU series.
        status, text = raw_push(agent, "PUT", "/metrics/job/fake",
                                "gpu_temperature_celsius 20\n", AUTH)
        check(status == 400 and "reserved" in text, f"reserved name answer: {status} {text!r}")

        samples, _, _ = scrape(agent, AUTH)
        one(samples, "training_grad_norm", job="train", rank="1")
        check(not harness.series(samples, "training_metric"), "rejected push left series")
        check(one(samples, "gpumon_pushes_total", result="rejected").value >= 5,
              "rejected pushes counted")
        check(one(samples, "gpumon_pushes_total", result="accepted").value >= 5,
              "accepted pushes counted")
        check(one(samples, "gpumon_push_groups").value == 2, "two groups left")


def test_expiry(pc, args, tmp):
    config = os.path.join(tmp, "expiry.yml")
    with open(config, "w") as f:
        f.write("push:\n  expiry: 2s\n")
    with harness.Agent(args.gpumon, ["--simulate", "h100x1", "--config", config]) as agent:
        gw = f"127.0.0.1:{agent.port}"
        reg = pc.CollectorRegistry()
        pc.Gauge("training_loss", "Loss.", registry=reg).set(1)
        pc.push_to_gateway(gw, "short", reg, grouping_key={"rank": "0"})
        # Accepted above; whenever the scrape comes, the group must go.
        harness.wait_until(
            lambda: not harness.series(scrape(agent)[0], "training_loss", job="short"),
            timeout=30, what="the pushed group to expire")
        samples, _, _ = scrape(agent)
        check(one(samples, "gpumon_push_groups_expired_total").value >= 1,
              "expired groups counted")
        check(one(samples, "gpumon_push_groups").value == 0, "no group left")


def test_bad_config(args, tmp):
    config = os.path.join(tmp, "bad.yml")
    with open(config, "w") as f:
        f.write("push:\n  expiry: 1m\n  max_series: lots\n")
    r = subprocess.run([args.gpumon, "agent", "--simulate", "h100x1", "--listen",
                        "127.0.0.1:0", "--config", config],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 2, f"bad push config: exit {r.returncode}, {r.stderr}")
    check(f"{config}:3:" in r.stderr and "push.max_series" in r.stderr,
          f"error must name file:line and field: {r.stderr}")


def main(args):
    pc = import_client()
    with tempfile.TemporaryDirectory(prefix="gpumon-push-") as tmp:
        test_bad_config(args, tmp)
        test_auth_and_semantics(pc, args, tmp)
        test_expiry(pc, args, tmp)


if __name__ == "__main__":
    harness.run_test(main)
