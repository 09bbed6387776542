#!/usr/bin/env python3
"""The GPU rule pack (rules/) passes promtool, and its conventions hold.

- `promtool check rules --lint=all --lint-fatal` on every rules/*.rules.yml;
- `promtool test rules` on every rules/tests/*.test.yml, and a deliberately
  broken copy of one rule that its test must catch (the tests can fail);
- `vmalert -dryRun` on every rule file when vmalert is installed;
- every alert: CamelCase name prefixed Gpu/Gpumon (Training for the training
  job rules), severity critical, warning
  or info, summary, description, runbook_url pointing at
  docs/runbooks/<AlertName>.md, which exists with Meaning, Impact, Diagnosis
  and Mitigation sections; a unit test where it fires and one where it stays
  silent; recording rules named level:metric:operations;
- the Alertmanager example passes `amtool check-config` and, in a real
  Alertmanager, routes by severity and inhibits as documented.

Needs promtool (exit 77 without it); vmalert, amtool and Alertmanager parts
are skipped, with a note, where those are not installed. The gpumon binary is
not used.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

from harness import (SKIP, Skip, TestFailure, check, free_port, http_get, need_tool,
                     parse_args, start_on_free_port)

RUNBOOK_BASE = "https://github.com/gpumon/gpumon/blob/main/docs/runbooks/"
SEVERITIES = {"critical", "warning", "info"}
RUNBOOK_SECTIONS = ("## Meaning", "## Impact", "## Diagnosis", "## Mitigation")
ALERT_NAME_RE = re.compile(r"^(Gpu(mon)?|Training)[A-Z][A-Za-z0-9]*$")
RECORD_NAME_RE = re.compile(r"^[a-z_]+:[a-z0-9_]+:[a-z0-9_]+$")


def run(argv, timeout=120):
    p = subprocess.run([str(a) for a in argv], capture_output=True, timeout=timeout)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


# ------------------------------------------------------------ rule files
# A light reader for the pack's own layout (stdlib only, no YAML parser):
# one rule per "- alert:" / "- record:" item, keys indented below it.

def split_rules(text):
    """Yields (kind, name, block) for each rule item of a rule file."""
    starts = [m for m in re.finditer(r"^(\s*)- \{?(alert|record): ([^,}\s]+)", text, re.M)]
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        block = text[m.start():end]
        # A rule ends where a new group starts.
        group = re.search(r"^\s*- name: ", block, re.M)
        if group:
            block = block[:group.start()]
        yield m.group(2), m.group(3), block


def check_rule_conventions(path, alerts):
    text = open(path, encoding="utf-8").read()
    for kind, name, block in split_rules(text):
        where = f"{os.path.basename(path)}: {kind} {name}"
        if kind == "record":
            check(RECORD_NAME_RE.match(name), f"{where}: not named level:metric:operations")
            continue
        check(ALERT_NAME_RE.match(name),
              f"{where}: not CamelCase with the Gpu/Gpumon/Training prefix")
        sev = re.search(r"^\s*severity: (\S+)\s*$", block, re.M)
        check(sev and sev.group(1) in SEVERITIES,
              f"{where}: severity must be one of {sorted(SEVERITIES)}, got "
              f"{sev.group(1) if sev else 'none'}")
        for key in ("summary", "description"):
            check(re.search(rf"^\s*{key}: ", block, re.M), f"{where}: no {key} annotation")
        url = re.search(r"^\s*runbook_url: (\S+)\s*$", block, re.M)
        check(url, f"{where}: no runbook_url annotation")
        check(url.group(1) == f"{RUNBOOK_BASE}{name}.md",
              f"{where}: runbook_url {url.group(1)} is not {RUNBOOK_BASE}{name}.md")
        alerts.setdefault(name, set()).add(sev.group(1))


def check_runbooks(source, alerts):
    for name in sorted(alerts):
        path = os.path.join(source, "docs", "runbooks", f"{name}.md")
        check(os.path.isfile(path), f"alert {name} has no runbook {path}")
        text = open(path, encoding="utf-8").read()
        for section in RUNBOOK_SECTIONS:
            check(re.search(rf"^{re.escape(section)}\s*$", text, re.M),
                  f"runbook {path} lacks a '{section}' section")


def test_cases(test_files):
    """{alertname: (firing cases, silent cases)} over the unit test files."""
    cases = {}
    for path in test_files:
        lines = open(path, encoding="utf-8").read().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^\s*alertname: (\S+)\s*$", line)
            if not m:
                continue
            exp = next((l for l in lines[i + 1:i + 3] if "exp_alerts:" in l), None)
            if exp is None:
                continue
            counts = cases.setdefault(m.group(1), [0, 0])
            counts[1 if exp.strip().endswith("[]") else 0] += 1
    return cases


def check_broken_rule_is_caught(promtool, source, tmp):
    """A test must be able to fail: move the HBM warning threshold in a copy
    and expect its unit test to fail."""
    rules = os.path.join(tmp, "rules")
    shutil.copytree(os.path.join(source, "rules"), rules)
    path = os.path.join(rules, "gpumon-thermal.rules.yml")
    text = open(path, encoding="utf-8").read()
    needle = "(gpu_memory_max_operating_temperature_celsius > 0) - 5"
    check(needle in text, f"cannot find the HBM warning threshold in {path}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(needle, "(gpu_memory_max_operating_temperature_celsius > 0) - 6"))
    rc, out = run([promtool, "test", "rules",
                   os.path.join(rules, "tests", "gpumon-thermal.test.yml")])
    check(rc != 0, "the thermal unit test still passes with the HBM warning threshold moved:\n"
          + out)


# ---------------------------------------------------------- Alertmanager

def post_json(url, payload, timeout=10.0):
    check(url.startswith("http://127.0.0.1:"), f"refusing non-loopback URL {url}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with opener.open(req, timeout=timeout) as r:
        return r.status


def am_alert(alertname, severity, **labels):
    labels.update(alertname=alertname, severity=severity)
    return {"labels": labels, "annotations": {"summary": alertname},
            "startsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))}


def check_alertmanager_inhibition(alertmanager, amtool, config_path, tmp):
    """Posts the pack's kind of alerts to a real Alertmanager running the
    example configuration and reads back which ones it inhibits and where
    it routes them."""
    # Point the example's placeholder receivers at a port nothing listens on.
    config = open(config_path, encoding="utf-8").read()
    config = re.sub(r"http://127\.0\.0\.1:\d+", f"http://127.0.0.1:{free_port()}", config)
    local = os.path.join(tmp, "alertmanager.yml")
    with open(local, "w", encoding="utf-8") as f:
        f.write(config)

    if amtool:
        for labels, receiver in (
                (["severity=critical", "alertname=GpuLost", "hostname=a", "gpu=1"], "gpu-oncall"),
                (["severity=warning", "alertname=GpuNvlinkDown"], "gpu-team"),
                (["severity=info", "alertname=GpuPowerCapped"], "gpu-digest")):
            rc, out = run([amtool, "config", "routes", "test", f"--config.file={local}"]
                          + labels)
            got = [l for l in out.splitlines() if l and not l.startswith("Warning")]
            check(rc == 0 and got == [receiver],
                  f"amtool routes {labels} to {got} (exit {rc}), want {receiver}:\n{out}")

    gpu_a3 = dict(instance="node-a:9400", job="gpu", hostname="node-a", gpu="3", uuid="GPU-A3")
    gpu_a2 = dict(instance="node-a:9400", job="gpu", hostname="node-a", gpu="2", uuid="GPU-A2")
    gpu_b0 = dict(instance="node-b:9400", job="gpu", hostname="node-b", gpu="0", uuid="GPU-B0")
    gpu_c1 = dict(instance="node-c:9400", job="gpu", hostname="node-c", gpu="1", uuid="GPU-C1")
    posted = {
        # A lost GPU silences its other alerts and the node's missing-GPU alert.
        "lost": am_alert("GpuLost", "critical", **gpu_a3),
        "lost_hbm": am_alert("GpuMemoryTemperatureHigh", "critical", **gpu_a3),
        "lost_xid": am_alert("GpuXidResetRequired", "critical", xid="48", **gpu_a3),
        "missing": am_alert("GpuMissingFromNode", "warning", instance="node-a:9400",
                            job="gpu", hostname="node-a"),
        # Critical silences the warning of the same alert on the same GPU.
        "hbm_crit": am_alert("GpuMemoryTemperatureHigh", "critical", **gpu_a2),
        "hbm_warn": am_alert("GpuMemoryTemperatureHigh", "warning", **gpu_a2),
        # A target that is down silences its GPUs' alerts.
        "down": am_alert("GpumonTargetDown", "warning", instance="node-b:9400", job="gpu"),
        "down_temp": am_alert("GpuTemperatureHigh", "warning", **gpu_b0),
        # Unrelated: not silenced.
        "other": am_alert("GpuXidResetRequired", "critical", xid="79", **gpu_c1),
        "other_warn": am_alert("GpuTemperatureHigh", "warning", **gpu_c1),
    }
    want_inhibited = {"lost_hbm", "lost_xid", "missing", "hbm_warn", "down_temp"}

    am, port = start_on_free_port(
        lambda p: [alertmanager, f"--config.file={local}",
                   f"--storage.path={os.path.join(tmp, 'am')}",
                   f"--web.listen-address=127.0.0.1:{p}", "--cluster.listen-address="],
        "/-/ready", "alertmanager")
    with am:
        base = f"http://127.0.0.1:{port}"
        check(post_json(f"{base}/api/v2/alerts", list(posted.values())) == 200,
              "Alertmanager refused the alerts")

        def key(labels):
            return tuple(sorted(labels.items()))

        by_labels = {key(a["labels"]): name for name, a in posted.items()}
        deadline = time.monotonic() + 20
        last = None
        while time.monotonic() < deadline:
            r = http_get(f"{base}/api/v2/alerts?active=true&inhibited=true&silenced=true")
            check(r.status == 200, f"GET /api/v2/alerts: HTTP {r.status}")
            got = {}
            for a in json.loads(r.text):
                name = by_labels.get(key(a["labels"]))
                if name:
                    got[name] = bool(a["status"]["inhibitedBy"])
            last = got
            if len(got) == len(posted) and {n for n, i in got.items() if i} == want_inhibited:
                break
            time.sleep(0.2)
        inhibited = {n for n, i in (last or {}).items() if i}
        check(len(last or {}) == len(posted),
              f"Alertmanager holds {sorted(last or {})}, want all of {sorted(posted)}")
        check(inhibited == want_inhibited,
              f"inhibited {sorted(inhibited)}, want {sorted(want_inhibited)}\n{am.describe()}")


# ------------------------------------------------------------------ main

def body(args):
    promtool = need_tool("promtool")
    source = args.source_dir
    rule_files = sorted(glob.glob(os.path.join(source, "rules", "*.rules.yml")))
    test_files = sorted(glob.glob(os.path.join(source, "rules", "tests", "*.test.yml")))
    check(rule_files, f"no rule files in {source}/rules")
    check(test_files, f"no unit test files in {source}/rules/tests")

    rc, out = run([promtool, "check", "rules", "--lint=all", "--lint-fatal"] + rule_files)
    check(rc == 0, f"promtool check rules exited {rc}:\n{out}")
    print(f"promtool check rules: {len(rule_files)} files clean")

    rc, out = run([promtool, "test", "rules"] + test_files, timeout=300)
    check(rc == 0 and "FAILED" not in out, f"promtool test rules exited {rc}:\n{out}")
    print(f"promtool test rules: {len(test_files)} files pass")

    vmalert = shutil.which("vmalert")
    if vmalert:
        for path in rule_files:
            rc, out = run([vmalert, "-dryRun", f"-rule={path}"])
            check(rc == 0, f"vmalert -dryRun -rule={path} exited {rc}:\n{out[-3000:]}")
        print(f"vmalert -dryRun: {len(rule_files)} files accepted")
    else:
        print("note: vmalert not installed, VictoriaMetrics check skipped")

    alerts = {}
    for path in rule_files:
        check_rule_conventions(path, alerts)
    check_runbooks(source, alerts)
    cases = test_cases(test_files)
    for name in sorted(alerts):
        firing, silent = cases.get(name, (0, 0))
        check(firing > 0, f"alert {name} has no unit test where it fires")
        check(silent > 0, f"alert {name} has no unit test where it stays silent")
    print(f"{len(alerts)} alerts: conventions, runbooks and unit test coverage hold")

    with tempfile.TemporaryDirectory() as tmp:
        check_broken_rule_is_caught(promtool, source, tmp)
    print("a broken threshold fails its unit test")

    am_config = os.path.join(source, "deploy", "alertmanager", "alertmanager.example.yml")
    check(os.path.isfile(am_config), f"missing {am_config}")
    amtool = shutil.which("amtool")
    if amtool:
        rc, out = run([amtool, "check-config", am_config])
        check(rc == 0, f"amtool check-config exited {rc}:\n{out}")
        print("amtool check-config: clean")
    else:
        print("note: amtool not installed, Alertmanager config check skipped")
    alertmanager = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    if alertmanager:
        with tempfile.TemporaryDirectory() as tmp:
            check_alertmanager_inhibition(alertmanager, amtool, am_config, tmp)
        print("Alertmanager routes and inhibits as documented")
    else:
        print("note: Alertmanager not installed, inhibition check skipped")


def main():
    # Like harness.run_test, without requiring the gpumon binary.
    args = parse_args()
    name = os.path.basename(sys.argv[0])
    try:
        body(args)
    except Skip as e:
        print(f"SKIP {name}: {e}")
        sys.exit(SKIP)
    except TestFailure as e:
        print(f"FAIL {name}: {e}")
        sys.exit(1)
    except Exception:  # noqa: BLE001 - any crash of the test is a failure
        traceback.print_exc()
        print(f"FAIL {name}: unexpected error")
        sys.exit(1)
    print(f"PASS {name}")
    sys.exit(0)


if __name__ == "__main__":
    main()
