#!/usr/bin/env python3
"""gpumon.TrainingMonitor: every training metric of docs/jobs.md, checked
against what the test itself recorded (steps, sections, loss, tokens, FLOPs
and MFU, checkpoints, goodput, CUDA memory stats, the setters), labels from
arguments and environment, and per-monitor registries."""

import math
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clienttest  # noqa: E402

clienttest.setup_paths()
clienttest.require("prometheus_client")

import gpumon  # noqa: E402
from gpumon import flops, labels  # noqa: E402

LABELS = {"job": "unit", "rank": "3", "local_rank": "1", "node": "n1"}


def monitor(**kw):
    kw.setdefault("job", "unit")
    kw.setdefault("rank", 3)
    kw.setdefault("local_rank", 1)
    kw.setdefault("node", "n1")
    return gpumon.TrainingMonitor(**kw)


def value(mon, name, **extra):
    return mon.registry.get_sample_value(name, dict(LABELS, **extra))


class ZeroDimTensor:
    """What a 0-d tensor offers the client: .item()."""

    def __init__(self, v):
        self.v = v
        self.reads = 0

    def item(self):
        self.reads += 1
        return self.v


class SlowLoader:
    """A real iterable whose next() takes at least `delay` seconds."""

    def __init__(self, n, delay):
        self.n = n
        self.delay = delay

    def __iter__(self):
        for i in range(self.n):
            time.sleep(self.delay)
            yield i

    def __len__(self):
        return self.n


class StepTest(unittest.TestCase):
    def setUp(self):
        self.mon = monitor(flops_per_token=1000.0, peak_flops=1e9, dtype="bf16")
        self.records = []
        self.mon.add_step_observer(self.records.append)

    def tearDown(self):
        self.mon.close()

    def test_steps_sections_loss_tokens(self):
        mon = self.mon
        losses = [2.0, 1.5, 1.25, 1.0]
        before = time.time()
        for i, loss in enumerate(losses):
            with mon.step(samples=8, tokens=64) as step:
                with step.section("forward"):
                    time.sleep(0.002)
                with step.section("backward"):
                    time.sleep(0.001)
                with step.section("optimizer"):
                    pass
                step.loss(loss)
                step.metric("accuracy", 0.5 + i / 10)
        after = time.time()
        self.assertEqual(value(mon, "training_steps_total"), 4)
        self.assertEqual(mon.steps, 4)
        self.assertEqual(value(mon, "training_loss"), 1.0)
        self.assertAlmostEqual(value(mon, "training_metric", metric="accuracy"), 0.8)
        self.assertEqual(value(mon, "training_samples_total"), 32)
        self.assertEqual(value(mon, "training_tokens_total"), 256)
        self.assertEqual(value(mon, "training_model_flops_total"), 4 * 64 * 1000.0)
        self.assertEqual(value(mon, "training_nonfinite_loss_total"), 0)
        self.assertEqual(value(mon, "training_step_duration_seconds_count"), 4)
        total = sum(r.duration for r in self.records)
        self.assertAlmostEqual(value(mon, "training_step_duration_seconds_sum"), total,
                               places=9)
        last = value(mon, "training_last_step_timestamp_seconds")
        self.assertTrue(before <= last <= after, (before, last, after))
        self.assertEqual(self.records[-1].end_time, last)
        # Sections add up to the step; sleeps give lower bounds.
        for name in gpumon.SECTIONS:
            summed = sum(r.sections[name] for r in self.records)
            self.assertAlmostEqual(
                value(mon, "training_step_section_seconds_total", section=name), summed,
                places=9, msg=name)
        for r in self.records:
            self.assertAlmostEqual(sum(r.sections.values()), r.duration, places=9)
            self.assertGreaterEqual(r.sections["forward"], 0.002)
            self.assertGreaterEqual(r.sections["backward"], 0.001)
        # MFU of the last step = its FLOPs / (duration x peak).
        last_record = self.records[-1]
        self.assertEqual(value(mon, "training_peak_flops", dtype="bf16"), 1e9)
        self.assertAlmostEqual(value(mon, "training_model_flops_utilization_ratio"),
                               64 * 1000.0 / (last_record.duration * 1e9), places=12)
        self.assertEqual(last_record.mfu, value(mon, "training_model_flops_utilization_ratio"))
        # Goodput: no data wait, so productive is all step time.
        self.assertAlmostEqual(value(mon, "training_goodput_seconds_total",
                                     category="productive"), total, places=9)

    def test_tensor_loss_read_at_step_end_and_nonfinite(self):
        mon = self.mon
        t = ZeroDimTensor(0.25)
        with mon.step() as step:
            step.loss(t)
            self.assertEqual(t.reads, 0)
        self.assertEqual(t.reads, 1)
        self.assertEqual(value(mon, "training_loss"), 0.25)
        with mon.step() as step:
            step.loss(float("nan"))
        with mon.step() as step:
            step.loss(ZeroDimTensor(float("inf")))
        self.assertEqual(value(mon, "training_nonfinite_loss_total"), 2)
        self.assertTrue(math.isinf(value(mon, "training_loss")))
        self.assertEqual(self.records[0].loss, 0.25)

    def test_data_loader_wait_is_part_of_the_step(self):
        mon = self.mon
        loader = mon.data_loader(SlowLoader(3, 0.01))
        self.assertEqual(len(loader), 3)
        seen = []
        for batch in loader:
            with mon.step(samples=1) as step:
                with step.section("forward"):
                    seen.append(batch)
        self.assertEqual(seen, [0, 1, 2])
        self.assertEqual(len(self.records), 3)
        for r in self.records:
            self.assertGreaterEqual(r.sections["data_wait"], 0.01)
            self.assertGreaterEqual(r.duration, r.sections["data_wait"])
        wait = sum(r.data_wait for r in self.records)
        total = sum(r.duration for r in self.records)
        self.assertAlmostEqual(value(mon, "training_step_section_seconds_total",
                                     section="data_wait"), wait, places=9)
        self.assertAlmostEqual(value(mon, "training_goodput_seconds_total",
                                     category="data_loading"), wait, places=9)
        self.assertAlmostEqual(value(mon, "training_goodput_seconds_total",
                                     category="productive"), total - wait, places=9)

    def test_failed_step_not_counted_and_bad_section(self):
        mon = self.mon
        with self.assertRaises(KeyError):
            with mon.step():
                raise KeyError("boom")
        self.assertEqual(value(mon, "training_steps_total"), 0)
        with mon.step() as step:
            with self.assertRaisesRegex(ValueError, "unknown step section 'fwd'"):
                step.section("fwd")
        self.assertEqual(value(mon, "training_steps_total"), 1)
        with mon.step():
            with self.assertRaisesRegex(RuntimeError, "another step is active"):
                with mon.step():
                    pass

    def test_callback_style(self):
        mon = self.mon
        step = mon.start_step(samples=3)
        self.assertIs(mon.active_step, step)
        step.add_section("backward", 3600.0)  # more than the step's wall time
        step.loss(2.0)
        step.end()
        self.assertIsNone(mon.active_step)
        self.assertEqual(value(mon, "training_steps_total"), 1)
        self.assertEqual(value(mon, "training_samples_total"), 3)
        self.assertGreaterEqual(self.records[0].sections["backward"], 3600.0)
        # The step's duration stays its wall time; "other" never goes negative.
        self.assertLess(self.records[0].duration, 3600.0)
        self.assertEqual(self.records[0].sections["other"], 0.0)
        with self.assertRaisesRegex(RuntimeError, "not the active one"):
            step.end()
        mon.start_step().end(ok=False)  # dropped
        self.assertEqual(value(mon, "training_steps_total"), 1)
        with self.assertRaisesRegex(ValueError, "unknown step section"):
            mon.start_step().add_section("compile", 1.0)

    def test_observer_runs_before_export_and_failures_do_not_stop_training(self):
        mon = self.mon

        def broken(record):
            raise ZeroDivisionError("observer bug")

        def halve_loss(record):
            # Before export: the metric must not show this step yet.
            self.assertEqual(value(mon, "training_steps_total"), record.number - 1)
            record.loss = record.loss / 2

        mon.add_step_observer(broken)
        mon.add_step_observer(halve_loss)
        with self.assertLogs("gpumon", level="ERROR") as logs:
            for _ in range(3):
                with mon.step() as step:
                    step.loss(4.0)
        self.assertEqual(len(logs.records), 1)  # logged once
        self.assertEqual(value(mon, "training_loss"), 2.0)
        self.assertEqual(value(mon, "training_steps_total"), 3)


class FlopsTest(unittest.TestCase):
    def test_table_lookup_by_device_name(self):
        cases = {
            "NVIDIA A100-SXM4-80GB": "A100-SXM", "NVIDIA A100 80GB PCIe": "A100-PCIE",
            "NVIDIA H100 80GB HBM3": "H100-SXM", "NVIDIA H100 PCIe": "H100-PCIE",
            "NVIDIA H100 NVL": "H100-NVL", "NVIDIA H200": "H200-SXM",
            "NVIDIA H200 NVL": "H200-NVL", "NVIDIA B200": "B200", "NVIDIA GB200": "GB200",
            "NVIDIA L40S": "L40S", "NVIDIA L4": "L4", "NVIDIA A10": "A10",
            "Tesla V100-SXM2-16GB": "V100-SXM", "Tesla V100-PCIE-32GB": "V100-PCIE",
            "NVIDIA GeForce RTX 4090": "RTX-4090",
            "NVIDIA A10G": None, "NVIDIA L40": None, "": None,
        }
        for name, key in cases.items():
            self.assertEqual(flops.model_key(name), key, name)
        self.assertEqual(flops.peak_flops("NVIDIA H100 80GB HBM3", "torch.bfloat16"), 989.5e12)
        self.assertEqual(flops.peak_flops("NVIDIA A100-SXM4-40GB", "fp16"), 312e12)
        self.assertIsNone(flops.peak_flops("Tesla V100-SXM2-16GB", "bf16"))
        with self.assertRaisesRegex(ValueError, "unknown dtype 'int3'"):
            flops.normalize_dtype("int3")

    def test_monitor_peak_from_gpu_model_and_override(self):
        mon = monitor(gpu_model="NVIDIA H200", dtype="fp8", flops_per_sample=10.0)
        self.assertEqual(mon.peak_flops, 1979e12)
        self.assertEqual(value(mon, "training_peak_flops", dtype="fp8"), 1979e12)
        with mon.step(samples=5):
            pass
        self.assertEqual(value(mon, "training_model_flops_total"), 50.0)
        mon.close()
        mon = monitor(gpu_model="NVIDIA H200", peak_flops=5e12)
        self.assertEqual(mon.peak_flops, 5e12)
        mon.close()
        # No FLOPs figure and no known GPU: no MFU.
        mon = monitor(gpu_model="unknown thing")
        with mon.step(tokens=10):
            pass
        self.assertIsNone(value(mon, "training_model_flops_utilization_ratio"))
        mon.close()
        with self.assertRaisesRegex(ValueError, "flops_per_token must be positive"):
            monitor(flops_per_token=-1)


class CheckpointGoodputTest(unittest.TestCase):
    def setUp(self):
        self.mon = monitor()
        self.records = []
        self.mon.add_step_observer(self.records.append)

    def tearDown(self):
        self.mon.close()

    def test_checkpoint_save_and_load(self):
        mon = self.mon
        with mon.checkpoint_load(step=10) as ck:
            time.sleep(0.002)
            ck.bytes = 1000
        for _ in range(2):
            with mon.step():
                pass
        before = time.time()
        with mon.checkpoint_save(step=12) as ck:
            time.sleep(0.003)
            ck.bytes = 4096
        after = time.time()
        with mon.checkpoint_save() as ck:
            pass  # default step: the steps completed
        with self.assertRaises(OSError):
            with mon.checkpoint_save(step=99, bytes=1) as ck:
                raise OSError("disk full")
        self.assertEqual(value(mon, "training_checkpoint_save_seconds_count"), 2)
        self.assertEqual(value(mon, "training_checkpoint_load_seconds_count"), 1)
        self.assertGreaterEqual(value(mon, "training_checkpoint_load_seconds_sum"), 0.002)
        self.assertEqual(value(mon, "training_checkpoint_save_bytes_total"), 4096)
        self.assertEqual(value(mon, "training_checkpoint_load_bytes_total"), 1000)
        self.assertEqual(value(mon, "training_last_checkpoint_step"), 2)
        self.assertTrue(before <= value(mon, "training_last_checkpoint_timestamp_seconds"))
        self.assertGreaterEqual(after + 1, value(mon, "training_last_checkpoint_timestamp_seconds"))
        # The failed save's time still counts as checkpointing.
        ckpt = value(mon, "training_goodput_seconds_total", category="checkpointing")
        self.assertGreater(ckpt, value(mon, "training_checkpoint_save_seconds_sum") +
                           value(mon, "training_checkpoint_load_seconds_sum"))

    def test_checkpoint_inside_step_is_not_productive(self):
        mon = self.mon
        with mon.step():
            with mon.checkpoint_save(step=1) as ck:
                time.sleep(0.005)
                ck.bytes = 1
        saved = value(mon, "training_checkpoint_save_seconds_sum")
        productive = value(mon, "training_goodput_seconds_total", category="productive")
        self.assertAlmostEqual(productive + saved, self.records[0].duration, places=6)

    def test_restarted_with_figures(self):
        mon = self.mon
        mon.restarted(lost_steps=7, lost_seconds=42.0, restart_seconds=30.0)
        with mon.step():
            pass
        self.assertEqual(value(mon, "training_goodput_seconds_total", category="restart"), 30.0)
        self.assertEqual(value(mon, "training_goodput_seconds_total",
                               category="lost_progress"), 42.0)

    def test_restarted_estimates(self):
        mon = self.mon
        mon.restarted(lost_steps=5)
        with mon.checkpoint_load():
            time.sleep(0.002)
        with mon.step():
            time.sleep(0.001)
        with mon.step():
            pass
        first = self.records[0].duration
        self.assertAlmostEqual(value(mon, "training_goodput_seconds_total",
                                     category="lost_progress"), 5 * first, places=9)
        restart = value(mon, "training_goodput_seconds_total", category="restart")
        self.assertGreater(restart, 0)


class SetterTest(unittest.TestCase):
    def setUp(self):
        self.mon = monitor()

    def tearDown(self):
        self.mon.close()

    def test_cuda_memory(self):
        mon = self.mon
        stats = {
            "allocated_bytes.all.current": 100, "allocated_bytes.all.peak": 150,
            "reserved_bytes.all.current": 400, "reserved_bytes.all.peak": 500,
            "active_bytes.all.current": 120, "active_bytes.all.peak": 160,
            "inactive_split_bytes.all.current": 100,
            "num_alloc_retries": 2, "num_ooms": 1,
        }
        mon.set_cuda_memory(stats)
        self.assertEqual(value(mon, "training_cuda_memory_allocated_bytes"), 100)
        self.assertEqual(value(mon, "training_cuda_memory_allocated_peak_bytes"), 150)
        self.assertEqual(value(mon, "training_cuda_memory_reserved_bytes"), 400)
        self.assertEqual(value(mon, "training_cuda_memory_reserved_peak_bytes"), 500)
        self.assertEqual(value(mon, "training_cuda_memory_active_bytes"), 120)
        self.assertEqual(value(mon, "training_cuda_memory_active_peak_bytes"), 160)
        self.assertEqual(value(mon, "training_cuda_memory_fragmentation_ratio"), 0.25)
        self.assertEqual(value(mon, "training_cuda_alloc_retries_total"), 2)
        self.assertEqual(value(mon, "training_cuda_ooms_total"), 1)
        # torch's counts are cumulative: only the increase is added.
        mon.set_cuda_memory(dict(stats, num_alloc_retries=5, num_ooms=1))
        self.assertEqual(value(mon, "training_cuda_alloc_retries_total"), 5)
        self.assertEqual(value(mon, "training_cuda_ooms_total"), 1)
        # A reset of torch's counters: counting starts over, never backwards.
        mon.set_cuda_memory(dict(stats, num_alloc_retries=1, reserved_bytes_all=0))
        self.assertEqual(value(mon, "training_cuda_alloc_retries_total"), 6)
        mon.set_cuda_memory(dict(stats, **{"reserved_bytes.all.current": 0}))
        self.assertEqual(value(mon, "training_cuda_memory_fragmentation_ratio"), 0.0)
        mon.set_cuda_memory({})

    def test_distributed_setters(self):
        mon = self.mon
        mon.set_learning_rate(0, 1e-3)
        mon.set_learning_rate("head", ZeroDimTensor(5e-4))
        mon.set_learning_rate(0, 2e-3)
        self.assertEqual(value(mon, "training_learning_rate", param_group="0"), 2e-3)
        self.assertEqual(value(mon, "training_learning_rate", param_group="head"), 5e-4)
        mon.set_grad_norm(ZeroDimTensor(3.5))
        self.assertEqual(value(mon, "training_grad_norm"), 3.5)
        mon.set_grad_norm(None)  # ignored
        self.assertEqual(value(mon, "training_grad_norm"), 3.5)
        mon.record_grad_sync(0.25)
        mon.record_grad_sync(0.5)
        mon.record_grad_sync(-1)
        self.assertEqual(value(mon, "training_grad_sync_seconds_total"), 0.75)
        mon.set_comm_overlap(0.4)
        self.assertEqual(value(mon, "training_comm_overlap_ratio"), 0.4)
        mon.set_comm_overlap(1.7)
        self.assertEqual(value(mon, "training_comm_overlap_ratio"), 1.0)
        mon.set_pipeline_bubble(0, 0.2)
        mon.set_pipeline_bubble(1, 0.1)
        self.assertEqual(value(mon, "training_pipeline_bubble_ratio", stage="0"), 0.2)
        self.assertEqual(value(mon, "training_pipeline_bubble_ratio", stage="1"), 0.1)
        mon.collective_started(11)
        mon.collective_completed(10)
        self.assertEqual(value(mon, "training_collective_sequence", state="started"), 11)
        self.assertEqual(value(mon, "training_collective_sequence", state="completed"), 10)

    def test_training_info(self):
        mon = self.mon
        info = dict(world_size="1", backend="none", client_version=gpumon.__version__)
        torch = sys.modules.get("torch")
        info["torch_version"] = torch.__version__ if torch else "none"
        self.assertEqual(value(mon, "training_info", **info), 1)
        mon.set_training_info(world_size=4, backend="gloo", torch_version="2.1.0")
        self.assertIsNone(value(mon, "training_info", **info))
        self.assertEqual(value(mon, "training_info", world_size="4", backend="gloo",
                               torch_version="2.1.0", client_version=gpumon.__version__), 1)


class LabelTest(unittest.TestCase):
    def test_env_precedence(self):
        env = {"GPUMON_JOB": "a", "TORCHELASTIC_RUN_ID": "b", "SLURM_JOB_NAME": "c",
               "RANK": "5", "SLURM_PROCID": "9", "LOCAL_RANK": "1", "SLURM_LOCALID": "7",
               "GPUMON_NODE": "gpu-node-3"}
        got = labels.resolve(env=env)
        self.assertEqual(got.as_dict(), {"job": "a", "rank": "5", "local_rank": "1",
                                         "node": "gpu-node-3"})
        del env["GPUMON_JOB"], env["RANK"], env["LOCAL_RANK"]
        got = labels.resolve(env=env)
        self.assertEqual((got.job, got.rank, got.local_rank), ("b", "9", "7"))
        env["TORCHELASTIC_RUN_ID"] = "none"  # torchrun's default run id
        self.assertEqual(labels.resolve(env=env).job, "c")
        del env["TORCHELASTIC_RUN_ID"]
        self.assertEqual(labels.resolve(env=env).job, "c")
        got = labels.resolve(env={})
        self.assertEqual(got.job, os.path.splitext(os.path.basename(sys.argv[0]))[0])
        self.assertEqual((got.rank, got.local_rank), ("0", "0"))
        import socket
        self.assertEqual(got.node, socket.gethostname())
        got = labels.resolve(job="j", rank=2, local_rank=0, node="x", env=env)
        self.assertEqual(got.values(), ("j", "2", "0", "x"))
        self.assertEqual(got.grouping(), {"job": "j", "node": "x", "rank": "2"})

    def test_bad_values(self):
        with self.assertRaisesRegex(ValueError, r"rank from \$RANK is not an integer: 'x'"):
            labels.resolve(env={"RANK": "x"})
        with self.assertRaisesRegex(ValueError, "local_rank .* negative"):
            labels.resolve(local_rank=-1, env={})
        with self.assertRaisesRegex(ValueError, "job name is empty"):
            labels.resolve(job="", env={})

    def test_monitors_do_not_share_registries(self):
        a = monitor()
        b = monitor()  # same labels, same names: no clash
        with a.step():
            pass
        self.assertEqual(value(a, "training_steps_total"), 1)
        self.assertEqual(value(b, "training_steps_total"), 0)
        a.close()
        b.close()


if __name__ == "__main__":
    clienttest.main()
