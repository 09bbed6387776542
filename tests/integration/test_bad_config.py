#!/usr/bin/env python3
"""Bad agent configs fail fast with a precise message; good ones start.

For each broken config (YAML syntax error, unknown field, bad duration,
unknown metric group, value of the wrong kind) `gpumon agent --config FILE`
must exit non-zero within a few seconds, and its stderr must name the file
and the line of the mistake (and, where there is one, the offending field or
value). A valid config, and every example config shipped under configs/, must
start an agent that serves /metrics.
"""

import glob
import os
import re
import subprocess
import tempfile

from harness import Agent, check, free_port, parse_exposition, run_test, series

GOOD = """\
# A valid agent configuration.
names: native
hostname: config-host-01
groups:
  temperature: 1s
  power: 500ms
  nvlink: off
"""

# (case, config text, 1-based line of the mistake, words stderr must contain)
BAD = [
    ("syntax-error", """\
names: native
groups:
  temperature: [1s
  power: 1s
""", None, []),
    ("unknown-field", """\
names: native
groups:
  temperature: 1s
no_such_setting: 3
""", 4, ["no_such_setting"]),
    ("bad-duration", """\
names: native
groups:
  temperature: 1s
  power: soon
""", 4, ["power"]),
    ("unknown-group", """\
names: native
groups:
  temperature: 1s
  warp_drive: 1s
""", 4, ["warp_drive"]),
    ("wrong-kind", """\
names:
  - native
""", 2, ["names"]),
]

EXIT_WITHIN_S = 10


def mentions_line(text, line):
    return re.search(rf"(:{line}\b|\bline {line}\b)", text) is not None


def run_bad(args, tmp, case, text, line, words):
    path = os.path.join(tmp, f"{case}.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    port = free_port()
    argv = [args.gpumon, "agent", "--config", path, "--listen", f"127.0.0.1:{port}",
            "--simulate", "h200x1"]
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=EXIT_WITHIN_S)
    except subprocess.TimeoutExpired:
        check(False, f"{case}: agent still running after {EXIT_WITHIN_S} s with a bad config")
    err = p.stderr
    check(p.returncode != 0, f"{case}: exited 0 with a bad config; stderr: {err!r}")
    check(os.path.basename(path) in err,
          f"{case}: stderr does not name the file {os.path.basename(path)}: {err!r}")
    if line is not None:
        check(mentions_line(err, line), f"{case}: stderr does not name line {line}: {err!r}")
    else:
        check(re.search(r"(:\d+\b|\bline \d+\b)", err),
              f"{case}: stderr names no line number: {err!r}")
    for w in words:
        check(w in err, f"{case}: stderr does not mention {w!r}: {err!r}")
    print(f"{case}: exit {p.returncode}: {err.strip().splitlines()[-1] if err.strip() else ''}")


def run_good(args, path):
    with Agent(args.gpumon, ["--config", path, "--simulate", "h200x2"]) as agent:
        samples = parse_exposition(agent.metrics().text)[0]
    check(series(samples, "gpu_temperature_celsius"),
          f"agent with {path} serves no gpu_temperature_celsius")
    return samples


def body(args):
    with tempfile.TemporaryDirectory(prefix="gpumon-config-") as tmp:
        for case, text, line, words in BAD:
            run_bad(args, tmp, case, text, line, words)
        good = os.path.join(tmp, "good.yaml")
        with open(good, "w", encoding="utf-8") as f:
            f.write(GOOD)
        samples = run_good(args, good)
        check(not [s for s in samples if s.name.startswith("gpu_nvlink_")],
              "nvlink is off in the config, yet gpu_nvlink_* is exported")
        hosts = {s.labels.get("hostname") for s in series(samples, "gpu_temperature_celsius")}
        check(hosts == {"config-host-01"}, f"config hostname not applied: {hosts}")
        print("good config starts; its hostname is used and the group it turns off is absent")
    for example in sorted(glob.glob(os.path.join(args.source_dir, "configs", "*agent*.y*ml"))):
        run_good(args, example)
        print(f"example config {os.path.relpath(example, args.source_dir)} starts")


if __name__ == "__main__":
    run_test(body)
