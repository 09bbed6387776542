#!/usr/bin/env python3
"""gpumon.ServingMetrics: the serving metrics of docs/jobs.md under gpumon's
and vLLM's names, the request API (queue time, TTFT, TPOT, tokens, finished
reasons), queue depth tracking, batch sizes, and /metrics served over HTTP."""

import os
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clienttest  # noqa: E402

clienttest.setup_paths()
clienttest.require("prometheus_client")

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

import gpumon  # noqa: E402

BASE = {"job": "srv", "node": "n1", "model": "llama-8b"}


def gpumon_metrics(**kw):
    return gpumon.ServingMetrics(model="llama-8b", job="srv", node="n1", **kw)


class GpumonNamingTest(unittest.TestCase):
    def setUp(self):
        self.m = gpumon_metrics()

    def tearDown(self):
        self.m.close()

    def v(self, name, **extra):
        return self.m.registry.get_sample_value(name, dict(BASE, **extra))

    def test_request_lifecycle(self):
        m = self.m
        with m.request(queued=True) as r:
            self.assertEqual(self.v("serving_requests_waiting"), 1)
            self.assertEqual(self.v("serving_requests_running"), 0)
            time.sleep(0.002)
            r.scheduled()
            self.assertEqual(self.v("serving_requests_waiting"), 0)
            self.assertEqual(self.v("serving_requests_running"), 1)
            time.sleep(0.003)
            r.first_token()
            r.first_token()  # only the first call counts
            r.tokens(prompt=100, generated=1)
            time.sleep(0.002)
            r.tokens(generated=9)
        self.assertEqual(self.v("serving_requests_running"), 0)
        self.assertEqual(self.v("serving_request_queue_time_seconds_count"), 1)
        queue = self.v("serving_request_queue_time_seconds_sum")
        ttft = self.v("serving_time_to_first_token_seconds_sum")
        duration = self.v("serving_request_duration_seconds_sum")
        self.assertGreaterEqual(queue, 0.002)
        self.assertGreaterEqual(ttft, queue + 0.003)
        self.assertGreaterEqual(duration, ttft + 0.002)
        self.assertEqual(self.v("serving_time_to_first_token_seconds_count"), 1)
        # TPOT: (end - first token) / (generated - 1).
        self.assertEqual(self.v("serving_time_per_output_token_seconds_count"), 1)
        tpot = self.v("serving_time_per_output_token_seconds_sum")
        self.assertGreaterEqual(tpot, 0.002 / 9)
        self.assertLessEqual(tpot, (duration - ttft) / 9 + 1e-12)
        self.assertEqual(self.v("serving_prompt_tokens_total"), 100)
        self.assertEqual(self.v("serving_generation_tokens_total"), 10)
        self.assertEqual(self.v("serving_requests_total", finished_reason="stop"), 1)

    def test_unqueued_abort_and_length(self):
        m = self.m
        with self.assertRaises(ConnectionResetError):
            with m.request() as r:
                self.assertEqual(self.v("serving_requests_running"), 1)
                raise ConnectionResetError("client went away")
        with m.request() as r:
            r.finished_reason = "length"
            r.tokens(prompt=3, generated=1)
        self.assertEqual(self.v("serving_requests_total", finished_reason="abort"), 1)
        self.assertEqual(self.v("serving_requests_total", finished_reason="length"), 1)
        self.assertEqual(self.v("serving_requests_running"), 0)
        self.assertEqual(self.v("serving_request_duration_seconds_count"), 2)
        # No first token: no TTFT; one generated token: no TPOT. Not queued: no queue time.
        self.assertEqual(self.v("serving_time_to_first_token_seconds_count"), 0)
        self.assertEqual(self.v("serving_time_per_output_token_seconds_count"), 0)
        self.assertEqual(self.v("serving_request_queue_time_seconds_count"), 0)

    def test_batches_and_explicit_queue(self):
        m = gpumon_metrics(track_queue=False)
        for n in (1, 3, 8):
            m.observe_batch(requests=n, tokens=n * 100)
        m.set_queue_depth(waiting=7, running=3)
        m.observe_queue_time(0.5)
        with m.request(queued=True):
            pass
        v = lambda name, **e: m.registry.get_sample_value(name, dict(BASE, **e))  # noqa: E731
        self.assertEqual(v("serving_batch_size_count"), 3)
        self.assertEqual(v("serving_batch_size_sum"), 12)
        self.assertEqual(v("serving_batch_size_bucket", le="4.0"), 2)
        self.assertEqual(v("serving_requests_waiting"), 7)
        self.assertEqual(v("serving_requests_running"), 3)
        self.assertEqual(v("serving_request_queue_time_seconds_count"), 2)
        m.close()

    def test_served_over_http(self):
        m = gpumon_metrics(serve_port=0, serve_addr="127.0.0.1")
        with m.request() as r:
            r.first_token()
            r.tokens(prompt=5, generated=2)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{m.serve_port}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        families = {f.name: f for f in text_string_to_metric_families(text)}
        self.assertEqual(families["serving_requests"].type, "counter")
        self.assertEqual(families["serving_request_duration_seconds"].type, "histogram")
        sample = [s for s in families["serving_prompt_tokens"].samples
                  if s.name == "serving_prompt_tokens_total"][0]
        self.assertEqual(sample.labels, BASE)
        self.assertEqual(sample.value, 5)
        m.close()


class VllmNamingTest(unittest.TestCase):
    def test_vllm_names_and_labels(self):
        m = gpumon.ServingMetrics(naming="vllm", model="llama-8b", job="srv", node="n1")
        with m.request(queued=True) as r:
            r.scheduled()
            r.first_token()
            r.tokens(prompt=10, generated=4)
        m.observe_batch(requests=2, tokens=300)
        labels = dict(BASE, model_name="llama-8b")
        v = lambda name, **e: m.registry.get_sample_value(name, dict(labels, **e))  # noqa: E731
        self.assertEqual(v("vllm:e2e_request_latency_seconds_count"), 1)
        self.assertEqual(v("vllm:time_to_first_token_seconds_count"), 1)
        self.assertEqual(v("vllm:time_per_output_token_seconds_count"), 1)
        self.assertEqual(v("vllm:request_queue_time_seconds_count"), 1)
        self.assertEqual(v("vllm:num_requests_waiting"), 0)
        self.assertEqual(v("vllm:num_requests_running"), 0)
        self.assertEqual(v("vllm:prompt_tokens_total"), 10)
        self.assertEqual(v("vllm:generation_tokens_total"), 4)
        self.assertEqual(v("vllm:request_success_total", finished_reason="stop"), 1)
        # vLLM's iteration histogram counts tokens, not requests.
        self.assertEqual(v("vllm:iteration_tokens_total_sum"), 300)
        names = {metric.name for metric in m.registry.collect()}
        self.assertFalse(any(n.startswith("serving_") for n in names), names)
        m.close()

    def test_bad_naming(self):
        with self.assertRaisesRegex(ValueError, "naming must be 'gpumon' or 'vllm'"):
            gpumon.ServingMetrics(naming="otel")


if __name__ == "__main__":
    clienttest.main()
