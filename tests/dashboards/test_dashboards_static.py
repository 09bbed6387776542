#!/usr/bin/env python3
"""The shipped Grafana dashboards are generated, well-formed and consistent.

- dashboards/native and dashboards/dcgm are exactly what dashboards/generate.py
  writes from dashboards/src (the dcgm variant through `gpumon dashboards
  convert`), so nobody edits a generated file by hand;
- structure, checked here on the JSON (what Grafana's schema types cannot
  say): unique uids across all dashboards, unique panel ids and non-overlapping
  grid positions within each, panels inside the 24-column grid, only current
  panel types (no Angular graph/singlestat/table-old), every panel's data source
  the ${datasource} variable of type prometheus, a unit and thresholds on
  every data panel, template variables from label_values with multi-select
  and "All" as `.*`, `$__rate_interval` (never a literal window) in rate() and
  increase() of per-interval panels, tags, links between the dashboards, and
  schemaVersion 39 or later;
- the thresholds dashboards/src/thresholds.py colours with are still the rule
  pack's (each is looked up in the rule file it comes from);
- the dcgm variant has the same panels as the native one, each either
  converted (DCGM names only) or a text panel saying why not;
- the provisioning files are Grafana's apiVersion 1 and point at the
  generated folders;
- `gpumon dashboards check` accepts every file and reports a broken query by
  file, panel and target; `gpumon dashboards convert --check` notices a file
  edited by hand.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import TestFailure, check, run_test  # noqa: E402

CURRENT_TYPES = {"timeseries", "stat", "gauge", "bargauge", "table", "heatmap",
                 "state-timeline", "text", "row"}
DEPRECATED = {"graph", "singlestat", "table-old", "grafana-piechart-panel",
              "grafana-worldmap-panel", "heatmap-old"}
NATIVE_ONLY_NAMES = re.compile(r"\b(gpu_[a-z_]+|hostname|uuid|model)\b")


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def load_all(root):
    out = {}
    for scheme in ("native", "dcgm"):
        folder = os.path.join(root, "dashboards", scheme)
        names = sorted(f for f in os.listdir(folder) if f.endswith(".json"))
        check(names, f"no dashboards in {folder}")
        for f in names:
            with open(os.path.join(folder, f), encoding="utf-8") as fh:
                out[f"{scheme}/{f}"] = json.load(fh)
    return out


def all_panels(doc):
    for p in doc.get("panels", []):
        yield p
        yield from p.get("panels", [])


def check_structure(label, doc, problems):
    def bad(msg):
        problems.append(f"{label}: {msg}")

    if not isinstance(doc.get("schemaVersion"), int) or doc["schemaVersion"] < 39:
        bad(f"schemaVersion {doc.get('schemaVersion')!r} (want 39 or later)")
    for key in ("uid", "title", "tags", "links", "templating", "time"):
        if not doc.get(key):
            bad(f"no {key}")
    if len(doc.get("uid", "")) > 40:
        bad("uid longer than Grafana's 40 characters")
    variables = {v["name"]: v for v in doc.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        bad("no datasource variable of type datasource for prometheus")
    for v in variables.values():
        if v["type"] != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        if not q.startswith("label_values("):
            bad(f"variable {v['name']}: query {q!r} is not label_values(...)")
        if not (v.get("multi") and v.get("includeAll") and v.get("allValue") == ".*"):
            bad(f"variable {v['name']}: not multi-select with All = .*")
        if v.get("datasource", {}).get("uid") != "${datasource}":
            bad(f"variable {v['name']}: data source is not ${{datasource}}")
    ids = set()
    cells = {}
    for p in all_panels(doc):
        where = f"panel {p.get('id')} {p.get('title')!r}"
        if p.get("id") in ids:
            bad(f"{where}: duplicate id")
        ids.add(p.get("id"))
        kind = p.get("type")
        if kind in DEPRECATED or kind not in CURRENT_TYPES:
            bad(f"{where}: panel type {kind!r} is not a current core panel")
        gp = p.get("gridPos", {})
        if not all(isinstance(gp.get(k), int) for k in "xywh") or gp["x"] + gp["w"] > 24:
            bad(f"{where}: gridPos {gp} outside the 24-column grid")
            continue
        for x in range(gp["x"], gp["x"] + gp["w"]):
            for y in range(gp["y"], gp["y"] + gp["h"]):
                if (x, y) in cells:
                    bad(f"{where}: overlaps {cells[(x, y)]} at column {x}, row {y}")
                    break
                cells[(x, y)] = where
            else:
                continue
            break
        if kind in ("row", "text"):
            continue
        if p.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}:
            bad(f"{where}: data source {p.get('datasource')} is not the ${{datasource}} variable")
        defaults = p.get("fieldConfig", {}).get("defaults", {})
        if not defaults.get("unit"):
            bad(f"{where}: no unit")
        if not defaults.get("thresholds", {}).get("steps"):
            bad(f"{where}: no thresholds")
        if not p.get("targets"):
            bad(f"{where}: no targets")
        if not p.get("description"):
            bad(f"{where}: no description")
        for t in p.get("targets", []):
            if t.get("datasource", {}).get("uid") != "${datasource}":
                bad(f"{where}: target {t.get('refId')} does not use ${{datasource}}")
            expr = t.get("expr", "")
            # Per-interval rates use $__rate_interval; whole-range figures use
            # $__range; fixed windows are the rule pack's (10m) or trends (1d).
            for m in re.finditer(r"\b(rate|irate|increase)\(", expr):
                window = re.search(r"\[([^\]]+)\]", expr[m.end():])
                if window and window.group(1) not in ("$__rate_interval", "$__range", "10m",
                                                      "1d", "1h"):
                    bad(f"{where}: {m.group(1)}(...[{window.group(1)}]): use $__rate_interval")


def check_thresholds(root, problems):
    sys.path.insert(0, os.path.join(root, "dashboards"))
    try:
        from src import thresholds  # noqa: WPS433 - the dashboards' own source
    finally:
        sys.path.pop(0)
    for rule_file, fragment in thresholds.RULE_TEXT:
        with open(os.path.join(root, "rules", rule_file), encoding="utf-8") as f:
            text = re.sub(r"\s+", " ", f.read())
        if re.sub(r"\s+", " ", fragment) not in text:
            problems.append(f"threshold {fragment!r} is no longer in rules/{rule_file}: "
                            "update dashboards/src/thresholds.py")


def check_dcgm_variant(docs, problems):
    for label, doc in docs.items():
        if not label.startswith("dcgm/"):
            continue
        native = docs.get("native/" + label[len("dcgm/"):])
        if native is None:
            problems.append(f"{label}: no native dashboard of the same name")
            continue
        np_ = {p["id"]: p for p in all_panels(native)}
        dp = {p["id"]: p for p in all_panels(doc)}
        if set(np_) != set(dp):
            problems.append(f"{label}: panel ids differ from the native dashboard's")
        for pid, p in dp.items():
            n = np_.get(pid)
            if not n or n.get("gridPos") != p.get("gridPos") or n.get("title") != p.get("title"):
                problems.append(f"{label}: panel {pid} moved or was renamed")
            if p["type"] == "text" and n and n["type"] != "text":
                if "dcgm-exporter" not in p.get("description", ""):
                    problems.append(f"{label}: panel {pid} dropped without saying why")
                continue
            for t in p.get("targets", []):
                body = re.sub(r'"(?:[^"\\]|\\.)*"', '""', t["expr"])  # ignore strings
                found = [m for m in NATIVE_ONLY_NAMES.findall(body)]
                if found:
                    problems.append(f"{label}: panel {pid} target {t['refId']} still uses "
                                    f"native names {sorted(set(found))}")
                if "{{hostname}}" in t.get("legendFormat", ""):
                    problems.append(f"{label}: panel {pid}: legend uses {{{{hostname}}}}")
        if not doc["uid"].startswith("gpumon-dcgm-") or "gpumon-dcgm" not in doc["tags"]:
            problems.append(f"{label}: uid/tags do not mark the dcgm variant")


def check_cli(gpumon, root, problems):
    files = [os.path.join(root, "dashboards", s, f) for s in ("native", "dcgm")
             for f in sorted(os.listdir(os.path.join(root, "dashboards", s)))]
    rc, out = run([gpumon, "dashboards", "check", *files])
    if rc != 0:
        problems.append(f"gpumon dashboards check exited {rc}:\n{out}")
    with tempfile.TemporaryDirectory() as tmp:
        with open(files[0], encoding="utf-8") as f:
            doc = json.load(f)
        panel = next(p for p in all_panels(doc) if p.get("targets"))
        panel["targets"][0]["expr"] = "sum(rate(gpu_temperature_celsius[$__rate_interval])"
        broken = os.path.join(tmp, "broken.json")
        with open(broken, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        rc, out = run([gpumon, "dashboards", "check", broken])
        want = f"broken.json: panel {panel['id']} \"{panel['title']}\": target A:"
        if rc != 1 or want not in out:
            problems.append(f"a broken query: check exited {rc}, want 1 naming {want!r}:\n{out}")
        # convert --check notices an edit of the generated file.
        native = os.path.join(tmp, "native.json")
        shutil.copy(os.path.join(root, "dashboards", "native", "operations.json"), native)
        out_file = os.path.join(tmp, "dcgm.json")
        rules = os.path.join(root, "rules", "*.rules.yml")
        rc, out = run([gpumon, "dashboards", "convert", "--names", "dcgm", "--rules", rules,
                       native, out_file])
        if rc != 0 or "not converted" not in out or "gpu_xid_errors_total" not in out:
            problems.append(f"convert exited {rc} without listing what it left out:\n{out}")
        rc, out = run([gpumon, "dashboards", "convert", "--names", "dcgm", "--rules", rules,
                       "--check", native, out_file])
        if rc != 0:
            problems.append(f"convert --check right after converting exited {rc}:\n{out}")
        with open(out_file, "a", encoding="utf-8") as f:
            f.write(" ")
        rc, out = run([gpumon, "dashboards", "convert", "--names", "dcgm", "--rules", rules,
                       "--check", native, out_file])
        if rc != 1 or "differs" not in out:
            problems.append(f"convert --check after an edit exited {rc}:\n{out}")


def check_provisioning(root, problems):
    """The provisioning files (YAML, read as text: the standard library has
    no YAML parser) say apiVersion 1 and point at the generated folders."""
    prov = os.path.join(root, "deploy", "grafana", "provisioning")
    for rel in ("datasources/gpumon.yml", "dashboards/gpumon.yml"):
        path = os.path.join(prov, rel)
        if not os.path.exists(path):
            problems.append(f"deploy/grafana/provisioning/{rel} is missing")
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not re.search(r"^apiVersion: 1$", text, re.M):
            problems.append(f"{rel}: not apiVersion 1")
        if rel.startswith("datasources") and "type: prometheus" not in text:
            problems.append(f"{rel}: no prometheus data source")
        for path_value in re.findall(r"^\s+path: (\S+)$", text, re.M):
            local = path_value.replace("/etc/grafana/provisioning", prov)
            if not os.path.isdir(local) or not any(f.endswith(".json")
                                                   for f in os.listdir(local)):
                problems.append(f"{rel}: path {path_value} has no dashboards in the repository")


def body(args):
    root = args.source_dir
    problems = []
    rc, out = run([sys.executable, "-B", os.path.join(root, "dashboards", "generate.py"),
                   "--gpumon", args.gpumon, "--check"])
    if rc != 0:
        problems.append("dashboards/ is not what dashboards/generate.py writes; run `python3 "
                        f"dashboards/generate.py` (exit {rc}):\n{out}")
    docs = load_all(root)
    uids = {}
    for label, doc in docs.items():
        check_structure(label, doc, problems)
        if doc.get("uid") in uids:
            problems.append(f"{label}: uid {doc['uid']} also used by {uids[doc['uid']]}")
        uids[doc.get("uid")] = label
    check_thresholds(root, problems)
    check_dcgm_variant(docs, problems)
    check_cli(args.gpumon, root, problems)
    check_provisioning(root, problems)
    print(f"{len(docs)} dashboards, "
          f"{sum(len(list(all_panels(d))) for d in docs.values())} panels checked")
    if problems:
        raise TestFailure(f"{len(problems)} problem(s):\n" + "\n".join(problems))


if __name__ == "__main__":
    run_test(body)
