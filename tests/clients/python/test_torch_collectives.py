"""track_collectives=True over real gloo ranks: every torch.distributed
collective takes one sequence number, started and completed advance equally
on all ranks, nothing is counted twice.

Two ranks run steps that each call a known set of collectives (synchronous,
async_op=True waited at once, async_op=True left in flight past the step's
end, object collectives that call other collectives inside, and
reduce_scatter, which gloo may reject: a call that raises has completed too,
so it must not look like a hang). Then a DistributedDataParallel model (one
gradient bucket) trains with the same collectives: its bucket all-reduce is
counted once, by the communication hook, not again by the collective
wrapper. The parent checks the exposed training_collective_sequence after
every step, and that close() restores torch.distributed's functions.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _torch_harness as h  # noqa: E402

WORLD = 2
STEPS = 3
# Collectives per step of collectives(): all_reduce, all_reduce async (waited),
# broadcast, all_gather, barrier, all_gather_object, broadcast_object_list,
# reduce_scatter (may raise on gloo), all_reduce async (waited next step).
PER_STEP = 9


def collectives(torch, dist, rank, late):
    t = torch.full((4,), float(rank + 1))
    dist.all_reduce(t)
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    dist.broadcast(t, src=0)
    out = [torch.zeros(4) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t)
    dist.barrier()
    objs = [None] * dist.get_world_size()
    dist.all_gather_object(objs, {"rank": rank})
    box = [{"from": 0}] if rank == 0 else [None]
    dist.broadcast_object_list(box, src=0)
    try:
        dist.reduce_scatter(torch.zeros(2), [torch.ones(2) for _ in range(dist.get_world_size())])
    except RuntimeError:
        pass  # gloo in some versions: "does not support reduce_scatter"
    if late:
        late.pop().wait()  # the previous step's in-flight one
    late.append(dist.all_reduce(torch.ones(8), async_op=True))
    return objs == [{"rank": r} for r in range(dist.get_world_size())] and box == [{"from": 0}]


def worker(args):
    torch, gpumon, gtorch = h.import_client(args.source_dir)
    import prometheus_client
    import torch.distributed as dist

    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", init_method="env://")
    original = dist.all_reduce
    registry = prometheus_client.CollectorRegistry()
    mon = gpumon.TrainingMonitor(job="coll-test", registry=registry)
    inst = gtorch.instrument(mon, track_collectives=True)
    late = []
    phases = {"plain": [], "ddp": []}
    objects_ok = True
    for _ in range(STEPS):
        with mon.step():
            objects_ok &= collectives(torch, dist, rank, late)
        s = h.exposition(registry)
        phases["plain"].append(
            [h.value(s, "training_collective_sequence", state=st) for st in ("started", "completed")]
        )
    inst.close()
    restored = dist.all_reduce is original and dist.distributed_c10d.all_reduce is original

    # Phase 2: DDP + track_collectives on a fresh monitor.
    registry2 = prometheus_client.CollectorRegistry()
    mon2 = gpumon.TrainingMonitor(job="coll-test", registry=registry2)
    torch.manual_seed(7)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    ddp = torch.nn.parallel.DistributedDataParallel(model)  # 25 MB buckets: one bucket
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    inst2 = gtorch.instrument(mon2, model=ddp, optimizer=opt, track_collectives=True)
    for i in range(STEPS):
        with mon2.step():
            ddp(torch.randn(4, 8)).sum().backward()
            opt.step()
            opt.zero_grad()
            objects_ok &= collectives(torch, dist, rank, late)
        s = h.exposition(registry2)
        phases["ddp"].append(
            [h.value(s, "training_collective_sequence", state=st) for st in ("started", "completed")]
        )
    late.pop().wait()
    # wait() may return just before the backend thread runs the future's
    # callbacks (where completion is counted): give it a bounded moment, and
    # one more step end for backends whose works are polled there.
    deadline = time.monotonic() + 10
    while inst2.collectives_completed < inst2.collectives_started and time.monotonic() < deadline:
        with mon2.step():
            pass
        time.sleep(0.01)
    with mon2.step():
        pass
    s = h.exposition(registry2)
    final = [h.value(s, "training_collective_sequence", state=st) for st in ("started", "completed")]
    props = [inst2.collectives_started, inst2.collectives_completed]
    inst2.close()
    mon.close()
    mon2.close()
    dist.barrier()
    dist.destroy_process_group()
    h.write_result(
        args,
        rank,
        {"rank": rank, "phases": phases, "final": final, "props": props, "restored": restored, "objects_ok": objects_ok},
    )


def body(args):
    h.import_client(args.source_dir)
    results = h.spawn_ranks(os.path.abspath(__file__), WORLD, args, job="coll-test")
    for r in results:
        rank = r["rank"]
        h.check(r["objects_ok"], f"rank {rank}: the object collectives returned wrong values under the wrappers")
        h.check(r["restored"], f"rank {rank}: close() did not restore torch.distributed.all_reduce")
        for phase, per_step in (("plain", PER_STEP), ("ddp", PER_STEP + 1)):
            for i, (started, completed) in enumerate(r["phases"][phase]):
                where = f"rank {rank} {phase} step {i + 1}"
                want = per_step * (i + 1)
                h.check(started == want, f"{where}: started = {started}, expected {want} ({per_step} per step)")
                # Only the async all_reduce issued last in the step may still be in flight.
                h.check(
                    completed is not None and want - 1 <= completed <= started,
                    f"{where}: completed = {completed}, expected {want - 1}..{started}",
                )
        want = (PER_STEP + 1) * STEPS
        h.check(r["final"] == [want, want], f"rank {rank}: after waiting for all, sequence = {r['final']}, expected [{want}, {want}]")
        h.check(r["props"] == [want, want], f"rank {rank}: collectives_started/completed = {r['props']}, expected {want}")
    for phase in ("plain", "ddp"):
        seqs = [[st for st, _ in r["phases"][phase]] for r in results]
        h.check(all(s == seqs[0] for s in seqs), f"{phase}: started sequence differs between ranks: {seqs}")


if __name__ == "__main__":
    h.run_main(body, worker)
