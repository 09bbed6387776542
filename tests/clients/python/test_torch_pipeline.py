"""Pipeline-parallel bubble ratio over a real two-stage pipeline (gloo, CPU).

Rank 0 holds stage "0", rank 1 stage "1"; each step pushes 4 micro-batches
forward (activations sent with dist.send/recv) and backward (gradients sent
back), GPipe style, so each stage idles while the other computes. Rank 0
times its compute with inst.stage_timer("0"); rank 1 measures its own
compute and reports it with inst.record_stage_busy("1", seconds), so the
exposed ratio must equal 1 - busy / step duration exactly, the step duration
being what the monitor observed (the step histogram's sum grows by it).
Rank 1 also declares a stage "idle" that is never busy: its ratio is 1.
Bad arguments raise ValueError.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _torch_harness as h  # noqa: E402

WORLD = 2
STEPS = 4
MICRO = 4


def worker(args):
    torch, gpumon, gtorch = h.import_client(args.source_dir)
    import prometheus_client
    import torch.distributed as dist

    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", init_method="env://")
    torch.manual_seed(rank)
    stage = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32))
    opt = torch.optim.SGD(stage.parameters(), lr=0.01)
    registry = prometheus_client.CollectorRegistry()
    mon = gpumon.TrainingMonitor(job="pipe-test", registry=registry)
    inst = gtorch.instrument(mon, model=stage, optimizer=opt)
    errors = []
    for bad in (lambda: inst.record_stage_busy("0", -1.0), lambda: inst.end_pipeline_step(0)):
        try:
            bad()
            errors.append("no error")
        except ValueError as e:
            errors.append(str(e))
    if rank == 1:
        inst.record_stage_busy("idle", 0.0)
    steps = []
    last_sum = 0.0
    for _ in range(STEPS):
        busy = 0.0
        with mon.step(samples=MICRO * 8):
            outs = []
            for _m in range(MICRO):
                if rank == 0:
                    with inst.stage_timer("0"):
                        out = stage(torch.randn(8, 32))
                    dist.send(out.detach(), 1)
                    outs.append(out)
                else:
                    inp = torch.zeros(8, 32)
                    dist.recv(inp, 0)
                    inp.requires_grad_(True)
                    t0 = time.perf_counter()
                    loss = stage(inp).pow(2).mean()
                    busy += time.perf_counter() - t0
                    outs.append((inp, loss))
            for item in reversed(outs):
                if rank == 0:
                    grad = torch.zeros(8, 32)
                    dist.recv(grad, 1)
                    with inst.stage_timer("0"):
                        item.backward(grad)
                else:
                    inp, loss = item
                    t0 = time.perf_counter()
                    loss.backward()
                    busy += time.perf_counter() - t0
                    dist.send(inp.grad, 0)
            if rank == 1:
                inst.record_stage_busy("1", busy)
            opt.step()
            opt.zero_grad()
        s = h.exposition(registry)
        total = h.value(s, "training_step_duration_seconds_sum")
        steps.append(
            {
                "duration": total - last_sum,
                "busy": busy,
                "bubble": h.value(s, "training_pipeline_bubble_ratio", stage=str(rank)),
                "idle": h.value(s, "training_pipeline_bubble_ratio", stage="idle"),
            }
        )
        last_sum = total
    inst.close()
    mon.close()
    dist.barrier()
    dist.destroy_process_group()
    h.write_result(args, rank, {"rank": rank, "steps": steps, "errors": errors})


def body(args):
    h.import_client(args.source_dir)
    results = h.spawn_ranks(os.path.abspath(__file__), WORLD, args, job="pipe-test")
    for r in results:
        rank = r["rank"]
        for e in r["errors"]:
            h.check(e != "no error", f"rank {rank}: a bad stage busy time or step time was accepted")
        for i, st in enumerate(r["steps"]):
            where = f"rank {rank} step {i + 1}"
            b = st["bubble"]
            h.check(b is not None, f"{where}: no training_pipeline_bubble_ratio{{stage=\"{rank}\"}}")
            h.check(0.0 <= b < 1.0, f"{where}: bubble ratio {b}, expected within [0, 1) for a stage that computed")
            if rank == 1:
                want = 1.0 - st["busy"] / st["duration"]
                h.check(h.close(b, want, rel=1e-9, abs_tol=1e-9), f"{where}: bubble {b}, expected 1 - {st['busy']} / {st['duration']} = {want}")
                h.check(st["idle"] == 1.0, f"{where}: stage \"idle\" (never busy) has bubble {st['idle']}, expected 1")
            else:
                h.check(st["idle"] is None, f"{where}: rank 0 exposes a stage it never declared")


if __name__ == "__main__":
    h.run_main(body, worker)
