#!/usr/bin/env python3
"""Injected GPU faults show up in the agent's metrics.

GPUMON_SIM_FAULTS drives the simulator's fault scenarios:
- "lost:gpu=3:at=2s": GPU 3 falls off the bus. gpu_lost{gpu="3"} becomes 1,
  GPU 3 no longer reports a temperature (it cannot be read), every other GPU
  keeps reporting temperatures with gpu_lost 0, and NVML itself stays up.
- "xid:gpu=2:code=79:at=1s": gpu_xid_errors_total{gpu="2",xid="79"} becomes 1
  and no other GPU counts an XID error.
"""

import time

from harness import Agent, check, parse_exposition, run_test, series, wait_until

ALL_GPUS = [str(i) for i in range(8)]


def scrape(agent):
    return parse_exposition(agent.metrics().text)[0]


def lost_gpu(args):
    with Agent(args.gpumon, ["--simulate", "h200x8"],
               env={"GPUMON_SIM_FAULTS": "lost:gpu=3:at=2s"}) as agent:
        def gpu3_lost():
            samples = scrape(agent)
            lost = series(samples, "gpu_lost", gpu="3")
            return samples if lost and lost[0].value == 1 else None

        samples = wait_until(gpu3_lost, timeout=30, what='gpu_lost{gpu="3"} == 1')
        # Two more scrapes, so "keep reporting" covers collections after the loss.
        for _ in range(2):
            samples = scrape(agent)
            temps = {s.labels["gpu"]: s.value for s in series(samples, "gpu_temperature_celsius")}
            others = [g for g in ALL_GPUS if g != "3"]
            check(all(g in temps for g in others),
                  f"GPUs other than 3 must keep reporting temperature, have {sorted(temps)}")
            check(all(0 < temps[g] < 120 for g in others), f"implausible temperatures {temps}")
            check("3" not in temps, f"lost GPU 3 still reports a temperature {temps.get('3')}")
            for g in others:
                lost = series(samples, "gpu_lost", gpu=g)
                check(not lost or lost[0].value == 0, f"GPU {g} reported lost: {lost}")
            lost3 = series(samples, "gpu_lost", gpu="3")
            check(lost3 and lost3[0].value == 1, f'gpu_lost{{gpu="3"}} went back: {lost3}')
            up = series(samples, "gpumon_nvml_up")
            check(up and up[0].value == 1, f"one lost GPU must not take NVML down: {up}")
            time.sleep(1.5)
        print("lost GPU 3 reported; 7 other GPUs keep reporting")


def xid(args):
    with Agent(args.gpumon, ["--simulate", "h200x8"],
               env={"GPUMON_SIM_FAULTS": "xid:gpu=2:code=79:at=1s"}) as agent:
        def xid_counted():
            samples = scrape(agent)
            hit = series(samples, "gpu_xid_errors_total", gpu="2", xid="79")
            return samples if hit and hit[0].value >= 1 else None

        samples = wait_until(xid_counted, timeout=30,
                             what='gpu_xid_errors_total{gpu="2",xid="79"} >= 1')
        hit = series(samples, "gpu_xid_errors_total", gpu="2", xid="79")
        check(len(hit) == 1 and hit[0].value == 1,
              f"one injected XID 79 must count exactly 1, got {hit}")
        others = [s for s in series(samples, "gpu_xid_errors_total")
                  if s.value != 0 and not (s.labels.get("gpu") == "2"
                                           and s.labels.get("xid") == "79")]
        check(not others, f"XID errors counted where none were injected: {others}")
        check(all(s.labels.get("simulated") == "true"
                  for s in series(samples, "gpu_xid_errors_total")),
              "XID series must be labelled simulated")
        # XID 79 means "fell off the bus", so GPU 2 itself may go quiet; the
        # others must not.
        temps = {s.labels["gpu"] for s in series(samples, "gpu_temperature_celsius")}
        check(temps >= set(ALL_GPUS) - {"2"}, f"other GPUs stopped reporting: have {temps}")
        print("XID 79 on GPU 2 counted once")


def body(args):
    lost_gpu(args)
    xid(args)


if __name__ == "__main__":
    run_test(body)
