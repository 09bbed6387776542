"""Single-process checks of gpumon's PyTorch integration (CPU; CUDA too where present).

- `import gpumon` (and a TrainingMonitor) imports no torch; `import gpumon.torch` does.
- save_checkpoint / load_checkpoint: to a path and to a file object, bytes equal
  the file's size / the bytes written; a torch.save that raises propagates and
  counts no save.
- global_grad_norm equals a float64 reference, sparse gradients included;
  None when no parameter has a gradient.
- The optimizer hook with an LR scheduler created after instrument() (the
  torch 1.13 path wraps optimizer.step): the scheduler still counts steps (no
  "lr_scheduler.step() before optimizer.step()" warning), the exported LR is
  the one each step used, and close() puts optimizer.step back.
- Without an optimizer, the gradient norm is read from the model at step end.
- DDP on a one-rank gloo group: a hook the user already registered is a clear
  error naming comm_hook=; a custom comm_hook (fp16 compression) is timed;
  backward passes under no_sync() take no sequence number, each synced one
  takes one per bucket.
- Bad arguments raise TypeError / ValueError.
- The overlap ratio follows its documented definition on fixed intervals.
- CUDA memory series exist only when CUDA is used: equal to
  torch.cuda.memory_stats() after a CUDA step, absent on a CPU-only run.
"""

import io
import os
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _torch_harness as h  # noqa: E402


def check_import_isolation(args):
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import gpumon; gpumon.TrainingMonitor(job='x');"
        "a = 'torch' in sys.modules; import gpumon.torch; print(a, 'torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, h.client_path(args.source_dir)], capture_output=True, text=True, timeout=60
    )
    h.check(out.returncode == 0, f"importing gpumon failed: {out.stderr[-2000:]}")
    h.check(out.stdout.split() == ["False", "True"], f"torch imported by 'import gpumon' / gpumon.torch: {out.stdout!r}")


def new_monitor(gpumon):
    import prometheus_client

    registry = prometheus_client.CollectorRegistry()
    return gpumon.TrainingMonitor(job="local-test", registry=registry), registry


def check_checkpoints(torch, gpumon, gtorch, tmp):
    mon, reg = new_monitor(gpumon)
    inst = gtorch.instrument(mon)
    state = {"w": torch.arange(1000, dtype=torch.float32), "step": 3}
    path = os.path.join(tmp, "a.pt")
    n1 = inst.save_checkpoint(state, path, step=3)
    buf = io.BytesIO(b"x" * 10)
    buf.seek(10)
    n2 = inst.save_checkpoint(state, buf)
    h.check(n1 == os.path.getsize(path), f"save to a path returned {n1}, file has {os.path.getsize(path)}")
    h.check(n2 == len(buf.getvalue()) - 10, f"save to a file object returned {n2}, wrote {len(buf.getvalue()) - 10}")
    h.check(n2 > 0 and n1 > 0, f"checkpoint sizes {n1}, {n2}")
    loaded = inst.load_checkpoint(path)
    buf = io.BytesIO(buf.getvalue()[10:])  # torch.load needs the archive from offset 0
    loaded2 = gtorch.load_checkpoint(mon, buf)
    for got in (loaded, loaded2):
        h.check(torch.equal(got["w"], state["w"]) and got["step"] == 3, "a loaded checkpoint differs from the saved one")
    try:
        inst.save_checkpoint({"f": lambda: 0}, os.path.join(tmp, "bad.pt"))
        h.check(False, "saving an unpicklable object did not raise")
    except (AttributeError, TypeError, RuntimeError, Exception) as e:  # noqa: B014 - pickling errors vary
        h.check(not isinstance(e, h.Failure), str(e))
    s = h.exposition(reg)
    h.check(h.value(s, "training_checkpoint_save_seconds_count") == 2, "expected 2 successful saves counted")
    h.check(h.value(s, "training_checkpoint_save_bytes_total") == n1 + n2, f"save bytes != {n1} + {n2}")
    h.check(h.value(s, "training_checkpoint_load_seconds_count") == 2, "expected 2 loads counted")
    h.check(h.value(s, "training_checkpoint_load_bytes_total") == n1 + n2, f"load bytes != {n1} + {n2}")
    mon.close()


def check_grad_norm(torch, gtorch):
    torch.manual_seed(3)
    emb = torch.nn.Embedding(50, 8, sparse=True)
    lin = torch.nn.Linear(8, 3)
    frozen = torch.nn.Linear(3, 3)  # no gradient
    h.check(gtorch.global_grad_norm(list(lin.parameters())) is None, "global_grad_norm without gradients is not None")
    lin(emb(torch.tensor([1, 4, 4, 9]))).pow(2).sum().backward()
    params = list(emb.parameters()) + list(lin.parameters()) + list(frozen.parameters())
    ref = 0.0
    for p in params:
        if p.grad is not None:
            g = p.grad.to_dense() if p.grad.is_sparse else p.grad
            ref += float((g.double() ** 2).sum())
    ref **= 0.5
    got = float(gtorch.global_grad_norm(params))
    h.check(h.close(got, ref), f"global_grad_norm = {got}, float64 reference {ref}")


def check_optimizer_and_model(torch, gpumon, gtorch):
    torch.manual_seed(5)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.8)
    mon, reg = new_monitor(gpumon)
    inst = gtorch.instrument(mon, model=model, optimizer=opt)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)  # after instrument()
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            with mon.step():
                model(torch.randn(5, 4)).pow(2).sum().backward()
                used = opt.param_groups[0]["lr"]
                norm = float(torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.parameters())))
                opt.step()
                opt.zero_grad()
            sched.step()
            s = h.exposition(reg)
            seen.append((used, h.value(s, "training_learning_rate", param_group=0), norm, h.value(s, "training_grad_norm")))
    order = [str(w.message) for w in caught if "lr_scheduler.step()" in str(w.message)]
    h.check(not order, f"the LR scheduler warned about step order: {order}")
    for used, lr, norm, got in seen:
        h.check(lr == used, f"training_learning_rate = {lr}, the step used {used}")
        h.check(h.close(got, norm), f"training_grad_norm = {got}, computed {norm}")
    h.check([u for u, *_ in seen] == [0.8, 0.4, 0.2], f"the scheduler did not run: {[u for u, *_ in seen]}")
    inst.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.step()  # still works after close(), and the scheduler still sees it
        sched.step()
    late = [str(w.message) for w in caught if "lr_scheduler" in str(w.message) or "optimizer.step" in str(w.message)]
    h.check(not late, f"after close() the LR scheduler warned: {late}")
    h.check(opt.param_groups[0]["lr"] == 0.05, f"after close() the scheduler did not step: lr {opt.param_groups[0]['lr']}")
    lr_before = h.value(h.exposition(reg), "training_learning_rate", param_group=0)
    with mon.step():
        opt.step()
    h.check(h.value(h.exposition(reg), "training_learning_rate", param_group=0) == lr_before, "a closed instrumentation still exports")

    # No optimizer: the norm comes from the model's gradients at step end.
    mon2, reg2 = new_monitor(gpumon)
    gtorch.instrument(mon2, model=model)
    with mon2.step():
        model(torch.randn(5, 4)).pow(2).sum().backward()
        norm = float(torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.parameters())))
    got = h.value(h.exposition(reg2), "training_grad_norm")
    h.check(h.close(got, norm), f"model-only training_grad_norm = {got}, computed {norm}")
    mon.close()
    mon2.close()


def check_overlap_definition():
    """The documented overlap: 1 - sum over backward passes of (last done - last
    ready) / union of the bucket intervals (pass, ready, done)."""
    from gpumon.torch_comm import sync_and_overlap as _sync_and_overlap

    for intervals, want in (
        ([], (0.0, None)),
        ([(1, 0.0, 2.0)], (2.0, 0.0)),  # one bucket: nothing hidden
        ([(1, 0.0, 2.0), (1, 1.0, 3.0)], (3.0, 1 - 2.0 / 3.0)),
        ([(1, 0.0, 1.0), (1, 4.0, 4.5)], (1.5, 1 - 0.5 / 1.5)),  # first bucket done before the last was ready
        ([(1, 0.0, 2.0), (1, 1.0, 3.0), (2, 10.0, 11.0), (2, 10.5, 12.0)], (5.0, 1 - 3.5 / 5.0)),
    ):
        total, overlap = _sync_and_overlap(intervals)
        ok = h.close(total, want[0]) and (overlap is None if want[1] is None else h.close(overlap, want[1]))
        h.check(ok, f"_sync_and_overlap({intervals}) = {(total, overlap)}, expected {want}")


def check_bad_arguments(torch, gpumon, gtorch):
    mon, _ = new_monitor(gpumon)
    for call, exc in (
        (lambda: gtorch.instrument(mon, optimizer=object()), TypeError),
        (lambda: gtorch.instrument(mon, model="model"), TypeError),
        (lambda: gtorch.instrument(mon, model=torch.nn.Linear(1, 1), comm_hook=lambda s, b: None), ValueError),
        (lambda: gtorch.instrument(None), ValueError),
    ):
        try:
            call()
            h.check(False, f"expected {exc.__name__}")
        except exc:
            pass
    mon.close()


def check_ddp_hooks(torch, gpumon, gtorch):
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{h.free_port()}", rank=0, world_size=1)
    try:
        model = torch.nn.Linear(4, 4)
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
        mon, reg = new_monitor(gpumon)
        try:
            gtorch.instrument(mon, model=ddp)
            h.check(False, "instrumenting a DDP model with a hook already registered did not raise")
        except RuntimeError as e:
            h.check("comm_hook=" in str(e), f"the error does not say to pass comm_hook=: {e}")
        ddp2 = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
        inst = gtorch.instrument(mon, model=ddp2, comm_hook=default_hooks.fp16_compress_hook)
        for _ in range(2):
            with mon.step():
                ddp2(torch.randn(3, 4)).sum().backward()
        s = h.exposition(reg)
        sync = h.value(s, "training_grad_sync_seconds_total")
        h.check(sync is not None and sync > 0, f"a custom comm hook was not timed: grad sync {sync}")
        seq = [h.value(s, "training_collective_sequence", state=st) for st in ("started", "completed")]
        h.check(seq == [2, 2], f"custom hook: collective sequence {seq}, expected [2, 2] (one bucket per step)")
        inst.close()
        mon.close()

        # Gradient accumulation: no_sync() backward passes do not communicate;
        # two synced backward passes in one step are two rounds of buckets.
        mon3, reg3 = new_monitor(gpumon)
        ddp3 = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
        gtorch.instrument(mon3, model=ddp3)
        seqs = []
        for synced in (1, 2):
            with mon3.step():
                with ddp3.no_sync():
                    ddp3(torch.randn(3, 4)).sum().backward()
                for _ in range(synced):
                    ddp3(torch.randn(3, 4)).sum().backward()
            s = h.exposition(reg3)
            seqs.append([h.value(s, "training_collective_sequence", state=st) for st in ("started", "completed")])
            overlap = h.value(s, "training_comm_overlap_ratio")
            h.check(overlap is not None and 0.0 <= overlap <= 1.0, f"accumulation: overlap {overlap}")
        h.check(seqs == [[1, 1], [3, 3]], f"accumulation: collective sequence {seqs}, expected [[1, 1], [3, 3]]")
        mon3.close()
    finally:
        dist.destroy_process_group()


def check_cuda(torch, gpumon, gtorch):
    mon, reg = new_monitor(gpumon)
    model = torch.nn.Linear(64, 64)
    if torch.cuda.is_available():
        model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gtorch.instrument(mon, model=model, optimizer=opt)
    with mon.step():
        x = torch.randn(32, 64, device=next(model.parameters()).device)
        model(x).sum().backward()
        opt.step()
    s = h.exposition(reg)
    cuda = [n for n in h.names(s) if n.startswith("training_cuda_memory")]
    if not torch.cuda.is_available():
        h.check(not cuda, f"a CPU-only run exposes CUDA series: {cuda}")
        return "cpu"
    stats = torch.cuda.memory_stats()
    for name, key in (
        ("training_cuda_memory_allocated_peak_bytes", "allocated_bytes.all.peak"),
        ("training_cuda_memory_reserved_bytes", "reserved_bytes.all.current"),
    ):
        h.check(h.value(s, name) == stats[key], f"{name} = {h.value(s, name)}, memory_stats {key} = {stats[key]}")
    mon.close()
    return "cuda"


def body(args):
    torch, gpumon, gtorch = h.import_client(args.source_dir)
    torch.set_num_threads(1)
    check_import_isolation(args)
    with tempfile.TemporaryDirectory() as tmp:
        check_checkpoints(torch, gpumon, gtorch, tmp)
    check_grad_norm(torch, gtorch)
    check_optimizer_and_model(torch, gpumon, gtorch)
    check_bad_arguments(torch, gpumon, gtorch)
    check_overlap_definition()
    check_ddp_hooks(torch, gpumon, gtorch)
    print("memory path:", check_cuda(torch, gpumon, gtorch))


if __name__ == "__main__":
    h.run_main(body)
