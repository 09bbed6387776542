#!/usr/bin/env python3
"""On a machine with an NVIDIA driver, the agent reads the real GPUs.

Skips (77) where libnvidia-ml.so.1 is not installed. Otherwise the agent,
started without --simulate, must report gpumon_nvml_up 1 and one
gpu_temperature_celsius series per GPU that nvidia-smi lists (when nvidia-smi
is available), none of them labelled simulated.
"""

import ctypes
import shutil
import subprocess

from harness import Agent, Skip, check, parse_exposition, run_test, series


def driver_present():
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        return False


def body(args):
    if not driver_present():
        raise Skip("no NVIDIA driver (libnvidia-ml.so.1) on this machine")
    expected = None
    if shutil.which("nvidia-smi"):
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        if p.returncode == 0:
            expected = len([l for l in p.stdout.splitlines() if l.startswith("GPU ")])
    with Agent(args.gpumon, [], ready_path="/metrics") as agent:
        samples = parse_exposition(agent.metrics().text)[0]
    up = series(samples, "gpumon_nvml_up")
    check(up and up[0].value == 1, f"gpumon_nvml_up {up}, want 1 with a driver installed")
    temps = series(samples, "gpu_temperature_celsius")
    check(temps, "no gpu_temperature_celsius from a real GPU")
    if expected is not None:
        check(len(temps) == expected, f"{len(temps)} GPUs reported, nvidia-smi lists {expected}")
    check(not [s for s in samples if s.labels.get("simulated") == "true"],
          "real GPUs must not be labelled simulated")
    check(all(0 < s.value < 120 for s in temps), f"implausible temperatures {temps}")
    print(f"{len(temps)} real GPUs: {sorted({s.labels.get('model') for s in temps})}")


if __name__ == "__main__":
    run_test(body)
