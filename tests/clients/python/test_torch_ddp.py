"""Real DDP over gloo on CPU: what gpumon's PyTorch integration exposes
matches what the training script computed itself.

Three ranks train a small MLP for a few steps (DistributedDataParallel over
gloo, small buckets so a step has several, two optimizer param groups and an
LR schedule that changes every step). After every step each rank reads its
own registry's exposition and records it beside its own figures: the loss,
the LR of each group before optimizer.step(), the global gradient norm
computed independently (float64 over all gradients concatenated), the step
count. Then each rank saves and loads a checkpoint through the helpers. The
parent checks, per rank and across ranks:
- training_loss, training_learning_rate{param_group}, training_grad_norm and
  training_steps_total equal the script's figures at every step;
- the gradient norm is the same on every rank (DDP averaged the gradients);
- training_grad_sync_seconds_total is > 0 and grows every step, the overlap
  ratio is within 0..1;
- training_collective_sequence{state="started"} equals "completed" after each
  step, advances every step, and is the same on every rank at every step;
- checkpoint save/load are counted once each with bytes equal to the file's
  size, and the loaded state equals the saved one;
- a CPU-only run exposes no training_cuda_* series at all;
- every series carries the rank's job/rank/local_rank labels.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _torch_harness as h  # noqa: E402

WORLD = 3
STEPS = 5
JOB = "ddp-test"


def worker(args):
    torch, gpumon, gtorch = h.import_client(args.source_dir)
    import prometheus_client
    import torch.distributed as dist

    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", init_method="env://")
    torch.manual_seed(1234)  # same initial weights everywhere (DDP broadcasts anyway)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)
    )
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.01)
    opt = torch.optim.SGD(
        [
            {"params": list(model[0].parameters())},
            {"params": list(model[2].parameters()) + list(model[4].parameters()), "lr": 0.02},
        ],
        lr=0.05,
        momentum=0.9,
    )
    # Created before instrument(): on torch 1.13 the integration wraps the
    # scheduler-wrapped optimizer.step.
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    registry = prometheus_client.CollectorRegistry()
    mon = gpumon.TrainingMonitor(job=JOB, registry=registry)
    inst = gtorch.instrument(mon, model=ddp, optimizer=opt)

    gen = torch.Generator().manual_seed(100 + rank)  # each rank its own data
    steps = []
    for i in range(STEPS):
        x = torch.randn(32, 16, generator=gen)
        y = torch.randn(32, 1, generator=gen)
        with mon.step(samples=32) as step:
            with step.section("forward"):
                loss = torch.nn.functional.mse_loss(ddp(x), y)
            with step.section("backward"):
                loss.backward()
            grads = torch.cat([p.grad.detach().flatten().double() for p in model.parameters()])
            norm = float(torch.sqrt((grads * grads).sum()))
            lrs = [g["lr"] for g in opt.param_groups]
            with step.section("optimizer"):
                opt.step()
                opt.zero_grad()
                sched.step()  # inside the step: the LR exported must still be the one used
            step.loss(loss.detach())  # a 0-d tensor: read at step end
            loss_value = float(loss.item())
        s = h.exposition(registry)
        steps.append(
            {
                "loss": loss_value,
                "lrs": lrs,
                "grad_norm": norm,
                "exposed": {
                    "loss": h.value(s, "training_loss"),
                    "lrs": [h.value(s, "training_learning_rate", param_group=g) for g in range(len(lrs))],
                    "grad_norm": h.value(s, "training_grad_norm"),
                    "steps": h.value(s, "training_steps_total"),
                    "grad_sync": h.value(s, "training_grad_sync_seconds_total"),
                    "overlap": h.value(s, "training_comm_overlap_ratio"),
                    "started": h.value(s, "training_collective_sequence", state="started"),
                    "completed": h.value(s, "training_collective_sequence", state="completed"),
                },
            }
        )

    path = os.path.join(args.out, f"ckpt{rank}.pt")
    saved = {k: v.clone() for k, v in model.state_dict().items()}
    written = inst.save_checkpoint(saved, path, step=STEPS)
    size = os.path.getsize(path)
    loaded = inst.load_checkpoint(path)
    same = sorted(loaded) == sorted(saved) and all(torch.equal(loaded[k], saved[k]) for k in saved)
    s = h.exposition(registry)
    labels = {(n, l.get("job"), l.get("rank"), l.get("local_rank")) for n, l, _ in s if n.startswith("training_")}
    result = {
        "rank": rank,
        "steps": steps,
        "checkpoint": {
            "size": size,
            "returned": written,
            "same": same,
            "save_bytes": h.value(s, "training_checkpoint_save_bytes_total"),
            "load_bytes": h.value(s, "training_checkpoint_load_bytes_total"),
            "save_count": h.value(s, "training_checkpoint_save_seconds_count"),
            "load_count": h.value(s, "training_checkpoint_load_seconds_count"),
            "save_sum": h.value(s, "training_checkpoint_save_seconds_sum"),
            "last_step": h.value(s, "training_last_checkpoint_step"),
        },
        "names": h.names(s),
        "bad_labels": sorted({n for n, job, r, lr in labels if (job, r, lr) != (JOB, str(rank), str(rank))}),
        "cuda_available": bool(torch.cuda.is_available()),
        "info": next(({k: v for k, v in l.items()} for n, l, _ in s if n == "training_info"), None),
    }
    inst.close()
    mon.close()
    dist.barrier()
    dist.destroy_process_group()
    h.write_result(args, rank, result)


def body(args):
    h.import_client(args.source_dir)  # skip here, not in every rank
    results = h.spawn_ranks(os.path.abspath(__file__), WORLD, args, job=JOB)
    for r in results:
        rank = r["rank"]
        check_rank(r, rank)
    for i in range(STEPS):
        seqs = {(r["steps"][i]["exposed"]["started"], r["steps"][i]["exposed"]["completed"]) for r in results}
        h.check(len(seqs) == 1, f"step {i + 1}: collective sequence numbers differ between ranks: {seqs}")
        norms = [r["steps"][i]["grad_norm"] for r in results]
        h.check(
            all(h.close(n, norms[0], rel=1e-6) for n in norms),
            f"step {i + 1}: DDP-averaged gradient norms differ between ranks: {norms}",
        )


def check_rank(r, rank):
    last_sync = 0.0
    last_seq = 0
    for i, st in enumerate(r["steps"]):
        e = st["exposed"]
        where = f"rank {rank} step {i + 1}"
        h.check(e["steps"] == i + 1, f"{where}: training_steps_total = {e['steps']}, expected {i + 1}")
        h.check(e["loss"] == st["loss"], f"{where}: training_loss = {e['loss']}, the script computed {st['loss']}")
        for g, (want, got) in enumerate(zip(st["lrs"], e["lrs"])):
            h.check(got == want, f"{where}: training_learning_rate{{param_group=\"{g}\"}} = {got}, optimizer used {want}")
        h.check(
            h.close(e["grad_norm"], st["grad_norm"]),
            f"{where}: training_grad_norm = {e['grad_norm']}, the script computed {st['grad_norm']}",
        )
        h.check(
            e["grad_sync"] is not None and e["grad_sync"] > last_sync,
            f"{where}: training_grad_sync_seconds_total = {e['grad_sync']}, expected > {last_sync}",
        )
        last_sync = e["grad_sync"]
        h.check(
            e["overlap"] is not None and 0.0 <= e["overlap"] <= 1.0,
            f"{where}: training_comm_overlap_ratio = {e['overlap']}, expected within 0..1",
        )
        h.check(
            e["started"] is not None and e["started"] == e["completed"],
            f"{where}: collective sequence started {e['started']} != completed {e['completed']} after the step",
        )
        h.check(e["started"] > last_seq, f"{where}: collective sequence {e['started']} did not advance past {last_seq}")
        last_seq = e["started"]
    lrs0 = [st["lrs"][0] for st in r["steps"]]
    h.check(len(set(lrs0)) == len(lrs0), f"rank {rank}: the LR schedule did not change the LR each step: {lrs0}")
    ck = r["checkpoint"]
    h.check(ck["same"], f"rank {rank}: the loaded checkpoint differs from the saved one")
    h.check(ck["returned"] == ck["size"], f"rank {rank}: save_checkpoint returned {ck['returned']}, file has {ck['size']}")
    for key in ("save_bytes", "load_bytes"):
        h.check(ck[key] == ck["size"], f"rank {rank}: training_checkpoint_{key}_total = {ck[key]}, file has {ck['size']} bytes")
    for key in ("save_count", "load_count"):
        h.check(ck[key] == 1, f"rank {rank}: training_checkpoint_{key.replace('_count', '')}_seconds_count = {ck[key]}, expected 1")
    h.check(ck["save_sum"] is not None and ck["save_sum"] > 0, f"rank {rank}: checkpoint save took {ck['save_sum']} s")
    h.check(ck["last_step"] == STEPS, f"rank {rank}: training_last_checkpoint_step = {ck['last_step']}, expected {STEPS}")
    h.check(not r["bad_labels"], f"rank {rank}: series without this rank's job/rank/local_rank labels: {r['bad_labels']}")
    info = r["info"]
    h.check(
        info is not None and info.get("world_size") == str(WORLD) and info.get("backend") == "gloo",
        f"rank {rank}: training_info labels {info}, expected world_size={WORLD} backend=gloo",
    )
    if not r["cuda_available"]:
        cuda = [n for n in r["names"] if n.startswith("training_cuda")]
        h.check(not cuda, f"rank {rank}: a CPU-only run exposes CUDA series: {cuda}")


if __name__ == "__main__":
    h.run_main(body, worker)
