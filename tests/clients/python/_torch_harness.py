"""Helpers shared by the test_torch_*.py tests of gpumon's PyTorch integration.

Each test is a standalone program (ctest convention: exit 0 pass, 77 skip,
anything else fail), optionally given --source-dir REPO_ROOT. A distributed
test starts its ranks as subprocesses of the same interpreter running the
same file with --worker; the ranks meet over gloo on 127.0.0.1 (torch's
env:// rendezvous on a free port), use one thread each, and each writes what
it computed and what the client exposed to a JSON file the parent checks.
The ranks see no GPU (CUDA_VISIBLE_DEVICES is emptied), so they are a
CPU-only run on any host.
"""

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback

SKIP = 77
# Labels every job series carries; checked once, then ignored when matching.
JOB_LABELS = ("job", "rank", "local_rank", "node")


class Skip(Exception):
    pass


class Failure(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def close(a, b, rel=1e-5, abs_tol=1e-9):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", default=None, help="repository root (default: from this file)")
    parser.add_argument("--gpumon", default=None, help="unused; accepted like the integration tests")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    return parser.parse_args()


def client_path(source_dir):
    root = source_dir or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    return os.path.join(os.path.abspath(root), "clients", "python")


def import_client(source_dir):
    """Puts the source tree's client first on sys.path; skips without torch or
    prometheus_client (or without gloo); returns (torch, gpumon, gpumon.torch)."""
    sys.path.insert(0, client_path(source_dir))
    try:
        import prometheus_client  # noqa: F401
        import torch
        import torch.distributed as dist
    except ImportError as e:
        raise Skip(f"needs torch and prometheus_client in {sys.executable}: {e}")
    if not dist.is_available() or not dist.is_gloo_available():
        raise Skip("this torch has no torch.distributed gloo backend")
    import gpumon
    import gpumon.torch as gtorch

    return torch, gpumon, gtorch


def run_main(body, worker=None):
    """Runs body(args) (or worker(args) with --worker) with the exit convention."""
    args = parse_args()
    name = os.path.basename(sys.argv[0])
    try:
        if args.worker:
            worker(args)
            sys.exit(0)
        body(args)
    except Skip as e:
        print(f"SKIP {name}: {e}")
        sys.exit(SKIP)
    except Failure as e:
        print(f"FAIL {name}: {e}")
        sys.exit(1)
    except SystemExit:
        raise
    except BaseException:  # noqa: BLE001 - any crash is a failure
        traceback.print_exc()
        print(f"FAIL {name}: unexpected error")
        sys.exit(1)
    print(f"PASS {name}")
    sys.exit(0)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn_ranks(script, world_size, args, timeout=90, job="torch-test"):
    """Runs `script --worker` as world_size ranks; returns each rank's JSON result."""
    out = tempfile.mkdtemp(prefix="gpumon-torch-")
    port = free_port()
    procs = []
    try:
        for rank in range(world_size):
            env = dict(os.environ)
            env.update(
                RANK=str(rank),
                LOCAL_RANK=str(rank),
                WORLD_SIZE=str(world_size),
                MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(port),
                GPUMON_JOB=job,
                OMP_NUM_THREADS="1",
                MKL_NUM_THREADS="1",
                CUDA_VISIBLE_DEVICES="",  # CPU ranks, even on a GPU host
            )
            cmd = [sys.executable, "-B", script, "--worker", "--out", out]
            if args.source_dir:
                cmd += ["--source-dir", args.source_dir]
            log = open(os.path.join(out, f"rank{rank}.log"), "w")
            procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log))
        deadline = time.monotonic() + timeout
        codes = []
        for p, log in procs:
            try:
                codes.append(p.wait(timeout=max(1.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                codes.append(None)
        logs = []
        for rank, (p, log) in enumerate(procs):
            log.close()
            with open(os.path.join(out, f"rank{rank}.log")) as f:
                logs.append(f.read())
        for rank, code in enumerate(codes):
            if code == SKIP:
                raise Skip(f"rank {rank} skipped: {logs[rank].strip()[-400:]}")
            check(code == 0, f"rank {rank} exited {code} (None: timed out after {timeout}s); its log:\n{logs[rank][-3000:]}")
        results = []
        for rank in range(world_size):
            with open(os.path.join(out, f"rank{rank}.json")) as f:
                results.append(json.load(f))
        return results
    finally:
        for p, log in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def write_result(args, rank, result):
    path = os.path.join(args.out, f"rank{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(path + ".tmp", path)


def exposition(registry):
    """The registry's text exposition parsed back: [(name, labels dict, value)]."""
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    text = generate_latest(registry).decode("utf-8")
    samples = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples.append((s.name, dict(s.labels), s.value))
    return samples


def value(samples, name, **labels):
    """The one sample named `name` whose non-job labels equal `labels`, else None."""
    want = {k: str(v) for k, v in labels.items()}
    found = [v for n, l, v in samples if n == name and {k: x for k, x in l.items() if k not in JOB_LABELS} == want]
    if len(found) > 1:
        raise Failure(f"{len(found)} samples of {name}{want}, expected one")
    return found[0] if found else None


def names(samples):
    return sorted({n for n, _, _ in samples})
