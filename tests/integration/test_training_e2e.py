#!/usr/bin/env python3
"""A DDP training job, end to end: the client pushes to the agent, the agent
joins each rank to its GPU, the server's training rules name the straggler
and the stalled job.

Setup, all on loopback:
- `gpumon agent --simulate h200x4` (one simulated node of 4 H200s; every
  series it serves says simulated="true") with GPUMON_SIM_PROCESSES naming a
  file of simulated GPU processes: the test lists rank r's real PID on GPU
  r + 1, so the agent's NVML process list places each rank on one GPU;
- `gpumon server` scraping the agent every second with `honor_labels: true`
  (the pushed `job` label survives), evaluating rules/gpumon-training.rules.yml
  and rules/gpumon-thermal.rules.yml every second;
- 3 ranks (tests/integration/training_e2e_rank.py) training a small model
  with DistributedDataParallel over gloo on the CPU, each with a
  gpumon.TrainingMonitor pushing to the agent every 0.5 s and
  gpumon.torch.instrument on the model and optimizer; rank 2 sleeps
  SLOW_SECONDS inside forward every step.

Time compression. The job runs in real time, but the rules' windows are
minutes long, so the server loads scaled copies (rule_time_scale.py) in
which every duration of every expr, every `for` and the number literals
that are seconds (the stall floor, the push ages) are divided by SPEED:
the 1-minute rates become 6-second rates, the straggler's `for: 2m` 12
seconds, the stall floor of 5 minutes 30 seconds. The ratios (straggler
score 0.7, 10 % of the step) are unitless and unchanged.

Expects:
1. Every rank's job series (training_steps_total) on the server carry
   `job`, `rank`, `node` (equal to the GPU series' hostname) and the
   `hostname`, `gpu` and `uuid` of the GPU its PID was placed on, exactly as
   the agent's GPU series carry them.
2. TrainingStraggler fires for rank 2 (section forward) with its GPU's
   labels, and its description names that GPU; it never fires for ranks 0
   and 1 (their backward holds the all-reduce wait and must not count).
   TrainingJobStalled stays silent while the job trains.
3. Rank 1 is killed (SIGKILL; the other ranks' gloo collectives then fail
   and they exit): TrainingJobStalled fires for rank 1 of the job.
No rule of the loaded files fails to evaluate. The run prints a timeline
(when steps began, when each alert fired, how many steps that took).

Needs a Python interpreter that can import torch and prometheus_client
(this one, or /usr/bin/python3); exits 77 (skip) when there is none.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

from harness import (Agent, Process, Skip, TestFailure, check, free_port, http_get,
                     parse_exposition, run_test, start_on_free_port)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rule_time_scale as rts  # noqa: E402

SPEED = 10
WORLD = 3
SLOW_RANK = 2
KILLED_RANK = 1
SLOW_SECONDS = 0.3
JOB = "e2e-ddp"
GPU_OF_RANK = {r: str(r + 1) for r in range(WORLD)}
# Number literals of the training rules that are seconds (scaled with the
# windows); every other literal is a ratio, a count or a multiplier.
SCALE_CONSTANTS = {
    "TrainingJobStalled": {"seconds": ["300", "120", "60"]},
}
RULE_FILES = ("gpumon-training.rules.yml", "gpumon-thermal.rules.yml")
STRAGGLER_TIMEOUT_S = 90
STALL_TIMEOUT_S = 120


def torch_python():
    """An interpreter that can import torch and prometheus_client, or None."""
    candidates = [os.environ.get("GPUMON_TEST_TORCH_PYTHON"), sys.executable,
                  "/usr/bin/python3"]
    seen = set()
    for c in candidates:
        if not c or c in seen or not os.access(c, os.X_OK):
            continue
        seen.add(c)
        r = subprocess.run([c, "-c", "import torch, torch.distributed, prometheus_client"],
                           capture_output=True, timeout=120)
        if r.returncode == 0:
            return c
    return None


def api(base, path, timeout=10.0):
    r = http_get(base + path, timeout=timeout)
    check(r.status == 200, f"GET {base}{path} answered {r.status}: {r.body[:300]!r}")
    body = json.loads(r.text)
    check(body.get("status") == "success", f"GET {base}{path}: {body}")
    return body["data"]


def query(base, expr):
    return api(base, "/api/v1/query?query=" + urllib.parse.quote(expr))["result"]


def scaled_rules(args, tmp):
    out_dir = os.path.join(tmp, "rules")
    os.makedirs(out_dir)
    sources = [os.path.join(args.source_dir, "rules", f) for f in RULE_FILES]
    for s in sources:
        if not os.path.isfile(s):
            raise TestFailure(f"rule file {s} is missing")
    try:
        written, _ = rts.scale_rule_files(sources, out_dir, SPEED, SCALE_CONSTANTS)
    except rts.ScaleError as e:
        raise TestFailure(f"cannot time-scale the rules: {e}") from None
    for path in written:
        r = subprocess.run([args.gpumon, "rules", "check", path], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0, f"gpumon rules check fails on the scaled {path}:\n"
              f"{r.stdout}{r.stderr}")
    return written


def write_config(path, agent_port, rule_paths):
    with open(path, "w", encoding="utf-8") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "  evaluation_interval: 1s\n"
                "rule_files:\n" + "".join(f"  - {p}\n" for p in rule_paths) +
                "scrape_configs:\n  - job_name: gpumon-agent\n    honor_labels: true\n"
                "    static_configs:\n"
                f"      - targets: ['127.0.0.1:{agent_port}']\n")


def agent_gpus(agent):
    """{gpu index: (hostname, uuid)} from the agent's own GPU series."""
    samples, _ = parse_exposition(agent.metrics().text)
    out = {}
    for s in samples:
        if s.name == "gpu_temperature_celsius":
            check(s.labels.get("simulated") == "true",
                  f"the simulated agent's series are not labelled simulated: {s}")
            out[s.labels["gpu"]] = (s.labels.get("hostname"), s.labels.get("uuid"))
    check(len(out) == 4, f"expected 4 simulated GPUs on the agent, got {sorted(out)}")
    return out


def write_placement(path, pids):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("# simulated GPU processes: pid gpu_index used_bytes\n")
        for rank, pid in sorted(pids.items()):
            f.write(f"{pid} {GPU_OF_RANK[rank]} {(4 + rank) << 30}\n")
    os.replace(tmp, path)


def alerts(base, name):
    """Active alerts named `name` from the server's /api/v1/alerts."""
    return [a for a in api(base, "/api/v1/alerts")["alerts"]
            if a.get("labels", {}).get("alertname") == name]


def firing(base, name, **labels):
    return [a for a in alerts(base, name)
            if a.get("state") == "firing" and
            all(a["labels"].get(k) == v for k, v in labels.items())]


def check_ranks_alive(ranks, except_rank=None):
    for r, p in ranks.items():
        if r != except_rank and not p.running():
            raise TestFailure(f"rank {r} exited early\n{p.describe()}")


def wait_for(what, timeout, poll, ranks=None, except_rank=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ranks is not None:
            check_ranks_alive(ranks, except_rank)
        got = poll()
        if got:
            return got
        time.sleep(0.5)
    raise TestFailure(f"timed out after {timeout} s waiting for {what}")


def check_rule_health(base):
    errors = []
    for g in api(base, "/api/v1/rules")["groups"]:
        for r in g["rules"]:
            if r.get("health") == "err" or r.get("lastError"):
                errors.append(f"{r['name']}: {r.get('lastError')}")
    check(not errors, "rules failed to evaluate:\n" + "\n".join(errors[:20]))


def steps_done(base):
    """{rank: steps} from the server's training_steps_total."""
    return {s["metric"].get("rank"): float(s["value"][1])
            for s in query(base, f'training_steps_total{{job="{JOB}"}}')}


def body(args):
    python = torch_python()
    if python is None:
        raise Skip("no Python interpreter here can import torch and prometheus_client "
                   "(Debian: apt install python3-torch python3-prometheus-client)")
    client_path = os.path.join(os.path.abspath(args.source_dir), "clients", "python")
    check(os.path.isfile(os.path.join(client_path, "gpumon", "__init__.py")),
          f"the Python client is missing under {client_path}")
    rank_script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "training_e2e_rank.py")

    with tempfile.TemporaryDirectory() as tmp:
        placement = os.path.join(tmp, "sim-processes.txt")
        rule_paths = scaled_rules(args, tmp)
        ranks = {}
        agent = server = None
        try:
            agent = Agent(args.gpumon, ["--simulate", "h200x4"],
                          env={"GPUMON_SIM_PROCESSES": placement})
            gpus = agent_gpus(agent)
            config = os.path.join(tmp, "server.yml")
            write_config(config, agent.port, rule_paths)
            server, port = start_on_free_port(
                lambda p: [args.gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data",
                           os.path.join(tmp, "data"), "--config", config],
                "/-/healthy", "gpumon server")
            base = f"http://127.0.0.1:{port}"

            env = dict(os.environ)
            env["PYTHONPATH"] = client_path + (os.pathsep + env["PYTHONPATH"]
                                               if env.get("PYTHONPATH") else "")
            for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "GPUMON_JOB", "GPUMON_NODE"):
                env.pop(k, None)
            master_port = free_port()
            t_start = time.time()
            for r in range(WORLD):
                ranks[r] = Process([python, "-B", rank_script, "--rank", str(r),
                                    "--world-size", str(WORLD),
                                    "--master-port", str(master_port),
                                    "--push-url", agent.base, "--job", JOB,
                                    "--placement-file", placement,
                                    "--slow-rank", str(SLOW_RANK),
                                    "--slow-seconds", str(SLOW_SECONDS)],
                                   env=env, name=f"rank {r}")
            write_placement(placement, {r: p.proc.pid for r, p in ranks.items()})

            # 1. The job series carry the GPU join labels.
            def all_ranks_seen():
                got = query(base, f'training_steps_total{{job="{JOB}"}} > 0')
                return got if len(got) == WORLD else None
            series = wait_for("every rank's training_steps_total on the server", 90,
                              all_ranks_seen, ranks)
            t_steps = time.time()
            for s in series:
                m = s["metric"]
                r = int(m.get("rank", "-1"))
                check(r in GPU_OF_RANK, f"unexpected rank label: {m}")
                host, uuid = gpus[GPU_OF_RANK[r]]
                want = {"job": JOB, "rank": str(r), "local_rank": str(r), "node": host,
                        "hostname": host, "gpu": GPU_OF_RANK[r], "uuid": uuid}
                diff = {k: (m.get(k), v) for k, v in want.items() if m.get(k) != v}
                check(not diff, f"rank {r}'s series lack the GPU join labels "
                      f"(label: (got, want)) {diff}: {m}")
            print(f"job series joined to their GPUs: "
                  f"{ {s['metric']['rank']: s['metric']['gpu'] for s in series} }")

            # 2. The straggler: rank 2 only; no stall while training.
            straggler = wait_for("TrainingStraggler firing for rank 2", STRAGGLER_TIMEOUT_S,
                                 lambda: firing(base, "TrainingStraggler", job=JOB),
                                 ranks)
            t_straggler = time.time()
            steps_at_alert = steps_done(base)
            for a in straggler:
                lab = a["labels"]
                check(lab.get("rank") == str(SLOW_RANK),
                      f"TrainingStraggler fired for a rank that is not slow: {lab}")
                host, uuid = gpus[GPU_OF_RANK[SLOW_RANK]]
                check(lab.get("section") == "forward" and lab.get("gpu") == GPU_OF_RANK[SLOW_RANK]
                      and lab.get("uuid") == uuid and lab.get("hostname") == host
                      and lab.get("node") == host,
                      f"TrainingStraggler labels do not name rank 2's section and GPU: {lab}")
                desc = a.get("annotations", {}).get("description", "")
                check(f"Its GPU {GPU_OF_RANK[SLOW_RANK]} ({uuid}) on {host}" in desc,
                      f"the straggler's description does not name its GPU:\n{desc}")
                print(f"TrainingStraggler: {desc}")
            # Let the fast ranks' noise have its chance, then look at the
            # whole run: no firing straggler alert for them, no stall.
            time.sleep(5)
            check_ranks_alive(ranks)
            window = int(time.time() - t_start) + 5
            others = query(base, f'ALERTS{{alertname="TrainingStraggler",alertstate="firing",'
                                 f'job="{JOB}",rank!="{SLOW_RANK}"}}[{window}s]')
            check(not others, "TrainingStraggler fired for fast ranks: "
                  f"{[o['metric'] for o in others]}")
            stalled = query(base, f'ALERTS{{alertname="TrainingJobStalled",job="{JOB}"}}'
                                  f'[{window}s]')
            check(not stalled, "TrainingJobStalled fired (or was pending) while the job "
                  f"trained: {[s['metric'] for s in stalled]}")
            check_rule_health(base)

            # 3. Kill rank 1: the job stalls.
            t_kill = time.time()
            ranks[KILLED_RANK].proc.send_signal(signal.SIGKILL)
            ranks[KILLED_RANK].proc.wait(timeout=10)
            stall = wait_for("TrainingJobStalled firing for the killed rank", STALL_TIMEOUT_S,
                             lambda: firing(base, "TrainingJobStalled", job=JOB,
                                            rank=str(KILLED_RANK)))
            t_stall = time.time()
            causes = sorted({a["labels"].get("cause", "") for a in stall})
            for a in stall:
                print(f"TrainingJobStalled[{a['labels'].get('cause')}]: "
                      f"{a.get('annotations', {}).get('description', '')}")
            check_rule_health(base)

            def rel(t):
                return f"+{t - t_start:5.1f} s"
            print("timeline (from the ranks' start):\n"
                  f"  {rel(t_steps)}  every rank's steps visible on the server\n"
                  f"  {rel(t_straggler)}  TrainingStraggler firing for rank {SLOW_RANK} "
                  f"(steps per rank by then: {steps_at_alert}; {t_straggler - t_steps:.1f} s "
                  "after the first steps were seen)\n"
                  f"  {rel(t_kill)}  rank {KILLED_RANK} killed\n"
                  f"  {rel(t_stall)}  TrainingJobStalled firing for rank {KILLED_RANK} "
                  f"(cause {causes}; {t_stall - t_kill:.1f} s after the kill; "
                  f"rules scaled {SPEED}x)")
        except TestFailure as e:
            detail = "\n".join(p.describe() for p in ranks.values())
            if server is not None:
                detail += "\n" + server.describe()
            if agent is not None:
                detail += "\n" + agent.describe()
            raise TestFailure(f"{e}\n{detail}") from None
        finally:
            for p in ranks.values():
                p.stop(grace=2)
            if server is not None:
                server.stop()
            if agent is not None:
                agent.stop()


if __name__ == "__main__":
    run_test(body)
