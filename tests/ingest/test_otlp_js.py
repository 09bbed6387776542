"""The OpenTelemetry JavaScript SDK's OTLP/HTTP protobuf exporter against the
real `gpumon agent` (simulated GPUs).

Installs tests/ingest/otlp_js (package-lock.json, `npm ci`) into a scratch
copy, runs its export.mjs twice against the agent's /v1/metrics — once with
cumulative temporality, once with delta temporality and gzip — and checks
the agent's /metrics for the translated names, labels and values: counter,
up-down counter, gauge, observable gauge and histogram, resource attributes
as grouping labels and target_info (docs/formats/otlp.md).

    python3 test_otlp_js.py --gpumon PATH/TO/gpumon --source-dir REPO_ROOT

Exits 0 on pass, 77 when node/npm are missing or the npm registry cannot be
reached, 1 on failure.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import harness  # noqa: E402
from harness import Agent, Skip, TestFailure, check, parse_exposition, series  # noqa: E402

NETWORK_ERRORS = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|"
    r"network|offline|proxy|certificate|self.signed|UNABLE_TO_|socket hang up", re.I)


def node_version(node):
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    m = re.match(r"v(\d+)\.(\d+)", out.stdout.strip())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def npm_ci(npm, workdir):
    """Installs the locked packages; Skip when the registry is unreachable."""
    env = dict(os.environ, npm_config_update_notifier="false", npm_config_fund="false",
               npm_config_audit="false")
    try:
        r = subprocess.run([npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"],
                           cwd=workdir, capture_output=True, text=True, timeout=240, env=env)
    except subprocess.TimeoutExpired:
        raise Skip("npm ci did not finish within 240 s (registry unreachable?)") from None
    if r.returncode != 0:
        text = r.stdout + r.stderr
        if NETWORK_ERRORS.search(text):
            raise Skip("npm ci could not reach the registry: " + text.strip()[-500:])
        raise TestFailure(f"npm ci failed (exit {r.returncode}):\n{text[-3000:]}")


def export(node, workdir, url, temporality, service):
    r = subprocess.run([node, "export.mjs", url, temporality, service], cwd=workdir,
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0,
          f"export.mjs {temporality} exited {r.returncode}:\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
    # The SDK logs a partial success (rejected points) as a warning.
    check("Partial Success" not in r.stdout + r.stderr,
          f"the agent rejected part of the {temporality} export:\n{r.stdout}{r.stderr}")


def one(samples, name, **labels):
    found = series(samples, name, **labels)
    check(len(found) == 1, f"expected one {name}{labels}, found {found}")
    return found[0]


def expect(samples, name, value, **labels):
    s = one(samples, name, **labels)
    check(abs(s.value - value) < 1e-9, f"{s}: expected value {value}")
    return s


def body(args):
    node = shutil.which("node")
    npm = shutil.which("npm")
    if not node or not npm:
        raise Skip("node and npm are needed for the OpenTelemetry JS SDK")
    if node_version(node) < (18, 19):
        raise Skip("the OpenTelemetry JS SDK 2.x needs Node.js 18.19 or newer")
    src = os.path.join(args.source_dir, "tests", "ingest", "otlp_js")
    with tempfile.TemporaryDirectory(prefix="gpumon-otlp-js-") as work:
        for f in ("package.json", "package-lock.json", "export.mjs"):
            shutil.copy(os.path.join(src, f), work)
        npm_ci(npm, work)

        with Agent(args.gpumon, ["--simulate", "h200x1"]) as agent:
            url = agent.base + "/v1/metrics"
            export(node, work, url, "cumulative", "otlp-js-cumulative")
            export(node, work, url, "delta", "otlp-js-delta")
            text = agent.metrics().text
            samples, types = parse_exposition(text)
            try:
                for job in ("otlp-js-cumulative", "otlp-js-delta"):
                    base = {"job": job, "rank": "1", "local_rank": "1", "node": "node-a"}
                    # Counter: 5 then +2 (train), 1 (eval); the delta run's
                    # increments are summed by the agent.
                    s = expect(samples, "training_steps_total", 7, phase="train", **base)
                    check("gpu" not in s.labels, f"{s}: no GPU join without a resolver")
                    expect(samples, "training_steps_total", 1, phase="eval", **base)
                    # Up-down counter → gauge; gauges keep the last value.
                    expect(samples, "queue_depth", 2, **base)
                    expect(samples, "device_temperature_celsius", 65, **base)
                    expect(samples, "model_flops_utilization_ratio", 0.42, **base)
                    # Histogram: 0.05, 0.5, 5, then 50, bounds 0.1/1/10.
                    for le, n in (("0.1", 1), ("1", 2), ("10", 3), ("+Inf", 4)):
                        expect(samples, "step_duration_seconds_bucket", n, le=le, **base)
                    expect(samples, "step_duration_seconds_sum", 55.55, **base)
                    expect(samples, "step_duration_seconds_count", 4, **base)
                    # The resource's other attributes.
                    expect(samples, "target_info", 1, deployment_environment="test", **base)
                    one(samples, "push_time_seconds", **base)
                check(types.get("training_steps_total") == "counter",
                      f"training_steps_total must be a counter: {types}")
                check(types.get("step_duration_seconds") == "histogram",
                      f"step_duration_seconds must be a histogram: {types}")
                check(types.get("queue_depth") == "gauge", f"queue_depth must be a gauge: {types}")
            except TestFailure as e:
                pushed = "\n".join(line for line in text.splitlines()
                                   if "otlp-js" in line or line.startswith("# TYPE"))
                raise TestFailure(f"{e}\n--- agent /metrics (pushed part) ---\n{pushed}") from None
            check(agent.running(), "the agent exited\n" + agent.describe())


if __name__ == "__main__":
    harness.run_test(body)
