#!/usr/bin/env python3
"""promtool accepts the agent's exposition.

Native names must pass `promtool check metrics` with no lint problems at all.
DCGM-compatible names copy dcgm-exporter's (e.g. a counter without _total),
so for them lint problems are accepted, but the text must parse.
"""

import subprocess

from harness import Agent, check, need_tool, parse_exposition, run_test, series

# promtool check metrics: 0 = clean, 3 = lint problems, 1 = parse error.
PROMTOOL_LINT_PROBLEMS = 3


def promtool_check(promtool, body):
    p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                       timeout=60)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def body(args):
    promtool = need_tool("promtool")
    for names_mode in ("native", "dcgm", "both"):
        with Agent(args.gpumon, ["--simulate", "h200x8", "--names", names_mode]) as agent:
            r = agent.metrics()
        samples, _ = parse_exposition(r.text)
        if names_mode != "dcgm":
            check(len(series(samples, "gpu_temperature_celsius")) == 8,
                  f"--names {names_mode}: expected 8 gpu_temperature_celsius series")
        if names_mode != "native":
            check(len(series(samples, "DCGM_FI_DEV_GPU_TEMP")) == 8,
                  f"--names {names_mode}: expected 8 DCGM_FI_DEV_GPU_TEMP series")
        rc, out = promtool_check(promtool, r.body)
        if names_mode == "native":
            check(rc == 0, f"promtool check metrics on native names exited {rc}:\n{out}")
        else:
            check(rc in (0, PROMTOOL_LINT_PROBLEMS) and "error while linting" not in out,
                  f"promtool could not parse --names {names_mode} output (exit {rc}):\n{out}")
        print(f"--names {names_mode}: promtool exit {rc}, {len(samples)} samples")


if __name__ == "__main__":
    run_test(body)
