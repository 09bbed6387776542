"""One rank of the training job test_training_e2e.py runs (not a test itself).

A small model trained with DistributedDataParallel over gloo on the CPU,
instrumented with gpumon's Python client: a TrainingMonitor pushing to the
gpumon agent, gpumon.torch.instrument for the DDP communication hook, the
learning rate and the gradient norm, and the step sections timed around
forward, backward and the optimizer. The rank named by --slow-rank sleeps
--slow-seconds inside forward every step: a straggler.

Before it creates the monitor the rank waits until its PID is listed in
--placement-file (the simulator's GPUMON_SIM_PROCESSES file, written by the
test), so its first push already finds its GPU. It prints one line per
milestone on stdout ("ready", "step N" every 10 steps) for the test to
follow, trains until killed or until a collective fails (a peer died: gloo
raises), and then exits with status 3 after a last push.

Run with an interpreter that has torch, and clients/python on PYTHONPATH.
"""

import argparse
import os
import sys
import time


def wait_for_placement(path, timeout):
    pid = str(os.getpid())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path, encoding="utf-8") as f:
                if any(line.split()[:1] == [pid] for line in f):
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise SystemExit(f"rank: PID {pid} not listed in {path} within {timeout} s")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--world-size", type=int, required=True)
    p.add_argument("--master-port", type=int, required=True)
    p.add_argument("--push-url", required=True)
    p.add_argument("--job", required=True)
    p.add_argument("--placement-file", required=True)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-seconds", type=float, default=0.0)
    p.add_argument("--step-pause", type=float, default=0.0,
                   help="seconds every rank sleeps between steps (outside the step)")
    p.add_argument("--push-interval", type=float, default=0.5)
    args = p.parse_args()

    wait_for_placement(args.placement_file, 60)

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    import gpumon
    import gpumon.torch

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.master_port)
    dist.init_process_group("gloo", rank=args.rank, world_size=args.world_size)

    torch.manual_seed(1234)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    ddp = DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    loss_fn = torch.nn.MSELoss()

    mon = gpumon.TrainingMonitor(job=args.job, rank=args.rank, local_rank=args.rank,
                                 push_url=args.push_url, push_interval=args.push_interval,
                                 world_size=args.world_size, backend="gloo")
    gpumon.torch.instrument(mon, model=ddp, optimizer=opt)

    gen = torch.Generator().manual_seed(args.rank)
    batches = [(torch.randn(16, 32, generator=gen), torch.randn(16, 1, generator=gen))
               for _ in range(8)]
    print("ready", flush=True)
    step = 0
    try:
        while True:
            x, y = batches[step % len(batches)]
            with mon.step(samples=x.shape[0]) as s:
                with s.section("forward"):
                    loss = loss_fn(ddp(x), y)
                    if args.rank == args.slow_rank:
                        time.sleep(args.slow_seconds)
                with s.section("backward"):
                    loss.backward()
                with s.section("optimizer"):
                    opt.step()
                    opt.zero_grad()
                s.loss(loss.detach())
            step += 1
            if step % 10 == 0:
                print(f"step {step}", flush=True)
            if args.step_pause:
                time.sleep(args.step_pause)
    except RuntimeError as e:
        # A peer died: gloo's collective fails on the survivors.
        print(f"collective failed after {step} steps: {e}", flush=True)
        mon.close()
        sys.exit(3)


if __name__ == "__main__":
    main()
