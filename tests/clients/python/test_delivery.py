#!/usr/bin/env python3
"""gpumon's push delivery against real HTTP receivers: a local http.server
(to see exact requests and to fail or stall on purpose) and the real
`gpumon agent` when it is built. Checks the Pushgateway path and body, that
failures and dropped samples are counted, that a stalled or absent receiver
never blocks the training loop, and that close() makes a final push."""

import base64
import http.server
import os
import socket
import sys
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clienttest  # noqa: E402

clienttest.setup_paths()
clienttest.require("prometheus_client")

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

import gpumon  # noqa: E402
from gpumon.delivery import grouping_path, render_text  # noqa: E402

LABELS = {"job": "push-test", "rank": "2", "local_rank": "0", "node": "n1"}


def wait_for(predicate, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class Receiver:
    """A Pushgateway stand-in on a free loopback port, recording requests.
    mode: "ok" (202), "error" (500), "stall" (holds each request until
    release())."""

    def __init__(self):
        self.requests = []
        self.mode = "ok"
        self.entered = threading.Event()
        self._release = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):  # noqa: N802 - the base class's name
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                receiver.requests.append((self.command, self.path, dict(self.headers), body))
                if receiver.mode == "stall":
                    receiver.entered.set()
                    receiver._release.wait(30)
                    return
                status = 202 if receiver.mode == "ok" else 500
                self.send_response(status)
                payload = b"" if status == 202 else b"push rejected by test"
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def release(self):
        self._release.set()

    def close(self):
        self.release()
        self.server.shutdown()
        self.server.server_close()


def monitor(url, **kw):
    return gpumon.TrainingMonitor(job=LABELS["job"], rank=2, local_rank=0, node="n1",
                                  push_url=url, **kw)


def v(mon, name, **extra):
    return mon.registry.get_sample_value(name, dict(LABELS, **extra))


def run_steps(mon, n):
    for i in range(n):
        with mon.step(samples=4, tokens=16) as step:
            with step.section("forward"):
                pass
            step.loss(1.0 / (i + 1))


class PushTest(unittest.TestCase):
    def setUp(self):
        self.receiver = Receiver()

    def tearDown(self):
        self.receiver.close()

    def test_path_body_and_final_push(self):
        mon = monitor(self.receiver.url, push_interval=60)
        run_steps(mon, 5)
        mon.close()  # the final push
        self.assertEqual(len(self.receiver.requests), 1)
        method, path, headers, body = self.receiver.requests[0]
        self.assertEqual(method, "PUT")
        self.assertEqual(path, "/metrics/job/push-test/node/n1/rank/2")
        self.assertTrue(headers["Content-Type"].startswith("text/plain; version=0.0.4"))
        families = {f.name: f for f in text_string_to_metric_families(body.decode())}
        steps = [s for s in families["training_steps"].samples
                 if s.name == "training_steps_total"]
        self.assertEqual(len(steps), 1)
        # Grouping labels ride in the path; local_rank stays a sample label.
        self.assertEqual(steps[0].labels, {"local_rank": "0"})
        self.assertEqual(steps[0].value, 5)
        self.assertNotIn("_created", body.decode())
        self.assertEqual(v(mon, "gpumon_client_pushes_total"), 1)
        self.assertEqual(v(mon, "gpumon_client_push_failures_total"), 0)

    def test_periodic_pushes_and_path_encoding(self):
        mon = gpumon.TrainingMonitor(job="team/run 1", rank=0, local_rank=0, node="n1",
                                     push_url=self.receiver.url, push_interval=0.05)
        run_steps(mon, 1)
        wait_for(lambda: len(self.receiver.requests) >= 3, what="3 periodic pushes")
        mon.close()
        path = self.receiver.requests[0][1]
        encoded = base64.urlsafe_b64encode(b"team/run 1").decode()
        self.assertEqual(path, f"/metrics/job@base64/{encoded}/node/n1/rank/0")
        self.assertEqual(grouping_path({"job": "a b", "node": ""}),
                         "/metrics/job/a%20b/node@base64/=")
        with self.assertRaisesRegex(ValueError, "non-empty job"):
            grouping_path({"job": ""})

    def test_failures_and_dropped_samples_counted(self):
        self.receiver.mode = "error"
        mon = monitor(self.receiver.url, push_interval=60)
        run_steps(mon, 3)
        _, samples = render_text(mon.registry, ("job", "node", "rank"))
        self.assertFalse(mon.push.push_once())
        self.assertIn("HTTP 500: push rejected by test", mon.push.last_error)
        self.assertEqual(v(mon, "gpumon_client_push_failures_total"), 1)
        self.assertEqual(v(mon, "gpumon_client_dropped_samples_total"), samples)
        # The receiver recovers: the next push delivers, the counts travel with it.
        self.receiver.mode = "ok"
        self.assertTrue(mon.push.push_once())
        self.assertIsNone(mon.push.last_error)
        body = self.receiver.requests[-1][3].decode()
        self.assertIn('gpumon_client_push_failures_total{local_rank="0"} 1.0', body)
        self.assertIn(f'gpumon_client_dropped_samples_total{{local_rank="0"}} {samples}.0', body)
        mon.close()
        self.assertEqual(v(mon, "gpumon_client_pushes_total"), 2)

    def test_stalled_receiver_does_not_block_training(self):
        self.receiver.mode = "stall"
        mon = monitor(self.receiver.url, push_interval=0.05, push_timeout=1.0)
        wait_for(self.receiver.entered.is_set, what="a push to reach the stalled receiver")
        # The push thread is stuck inside a request; the loop runs on.
        run_steps(mon, 200)
        self.assertEqual(v(mon, "training_steps_total"), 200)
        # The stalled request times out and is counted.
        wait_for(lambda: (v(mon, "gpumon_client_push_failures_total") or 0) >= 1,
                 what="the timed-out push to be counted")
        self.assertIn("timed out", mon.push.last_error)
        self.assertGreater(v(mon, "gpumon_client_dropped_samples_total"), 0)
        self.receiver.release()
        mon.close()

    def test_receiver_down(self):
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mon = monitor(f"http://127.0.0.1:{port}", push_interval=0.05)
        run_steps(mon, 50)
        wait_for(lambda: (v(mon, "gpumon_client_push_failures_total") or 0) >= 2,
                 what="failed pushes")
        self.assertIn("Connection", mon.push.last_error)
        mon.close()  # never raises
        self.assertEqual(v(mon, "training_steps_total"), 50)
        self.assertEqual(v(mon, "gpumon_client_pushes_total"), 0)
        self.assertGreater(v(mon, "gpumon_client_dropped_samples_total"), 0)

    def test_forked_child_never_pushes(self):
        mon = monitor(self.receiver.url, push_interval=60)
        run_steps(mon, 2)
        pid = os.fork()
        if pid == 0:  # e.g. a data-loader worker with a copy of the monitor
            try:
                pushed = mon.push.push_once()
                mon.close()
                os._exit(0 if pushed is False else 3)
            except BaseException:
                os._exit(4)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        self.assertEqual(self.receiver.requests, [])
        mon.close()
        self.assertEqual(len(self.receiver.requests), 1)

    def test_bad_push_configuration(self):
        with self.assertRaisesRegex(ValueError, "push URL must be http"):
            monitor("ftp://example.invalid/x")
        with self.assertRaisesRegex(ValueError, "interval must be a positive number"):
            monitor(self.receiver.url, push_interval=0)

    def test_environment_and_serve_errors(self):
        saved = dict(os.environ)
        try:
            os.environ["GPUMON_PUSH_URL"] = self.receiver.url
            mon = gpumon.TrainingMonitor(job="env-job", rank=0, local_rank=0, node="n1")
            mon.close()
            self.assertEqual(self.receiver.requests[-1][1],
                             "/metrics/job/env-job/node/n1/rank/0")
            del os.environ["GPUMON_PUSH_URL"]
            os.environ["GPUMON_SERVE_PORT"] = "http"
            with self.assertRaisesRegex(ValueError, r"\$GPUMON_SERVE_PORT must be a port"):
                gpumon.TrainingMonitor(job="env-job")
        finally:
            os.environ.clear()
            os.environ.update(saved)
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            with self.assertRaisesRegex(OSError, f"cannot serve /metrics on 127.0.0.1:{port}"):
                gpumon.TrainingMonitor(job="x", serve_port=port, serve_addr="127.0.0.1")
        with self.assertRaisesRegex(ValueError, "serve_port must be 0..65535"):
            gpumon.ServingMetrics(serve_port=70000)

    def test_basic_auth_and_prefix(self):
        url = f"http://user:p%40ss@127.0.0.1:{self.receiver.port}/prefix/"
        mon = monitor(url, push_interval=60)
        mon.close()
        _, path, headers, _ = self.receiver.requests[0]
        self.assertEqual(path, "/prefix/metrics/job/push-test/node/n1/rank/2")
        self.assertEqual(headers["Authorization"],
                         "Basic " + base64.b64encode(b"user:p@ss").decode())


class AgentTest(unittest.TestCase):
    """Pushes to the real `gpumon agent`."""

    def setUp(self):
        binary = clienttest.gpumon_binary()
        if binary is None:
            self.skipTest("no gpumon binary (--gpumon)")
        import harness
        self.harness = harness
        self.agent = harness.Agent(binary, ["--simulate", "h200x2"])
        probe = urllib.parse.urljoin(self.agent.base, "/metrics/job/gpumon-probe")
        request = urllib.request.Request(probe, data=b"probe_metric 1\n", method="PUT",
                                         headers={"Content-Type": "text/plain"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            opener.open(request, timeout=5).close()
        except urllib.error.HTTPError as e:
            self.agent.stop()
            if e.code in (404, 405):
                self.skipTest(f"this gpumon agent has no push receiver (PUT answered {e.code})")
            raise

    def tearDown(self):
        self.agent.stop()

    def agent_steps(self):
        samples, _ = self.harness.parse_exposition(self.agent.metrics().text)
        got = self.harness.series(samples, "training_steps_total", job=LABELS["job"],
                                  rank="2", node="n1", local_rank="0")
        return got[0].value if got else None

    def test_push_to_agent_then_agent_dies(self):
        mon = monitor(self.agent.base, push_interval=0.1)
        run_steps(mon, 7)
        wait_for(lambda: self.agent_steps() == 7, what="training_steps_total 7 on the agent")
        self.agent.stop()
        run_steps(mon, 5)  # the agent is gone: training goes on
        wait_for(lambda: (v(mon, "gpumon_client_push_failures_total") or 0) >= 1,
                 what="pushes to the stopped agent to fail")
        mon.close()
        self.assertEqual(v(mon, "training_steps_total"), 12)
        self.assertGreaterEqual(v(mon, "gpumon_client_pushes_total"), 1)
        self.assertGreater(v(mon, "gpumon_client_dropped_samples_total"), 0)

    def test_serving_push_to_agent(self):
        m = gpumon.ServingMetrics(model="tiny-llm", job="serve-push", node="n1",
                                  push_url=self.agent.base, push_interval=60)
        for _ in range(3):
            with m.request() as r:
                r.first_token()
                r.tokens(prompt=10, generated=5)
        m.close()  # the final push
        samples, _ = self.harness.parse_exposition(self.agent.metrics().text)
        got = self.harness.series(samples, "serving_requests_total", job="serve-push",
                                  node="n1", model="tiny-llm", finished_reason="stop")
        self.assertEqual([s.value for s in got], [3.0], got)
        got = self.harness.series(samples, "serving_generation_tokens_total", job="serve-push")
        self.assertEqual([s.value for s in got], [15.0], got)


if __name__ == "__main__":
    clienttest.main()
