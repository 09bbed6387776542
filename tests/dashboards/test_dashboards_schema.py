#!/usr/bin/env python3
"""Every shipped dashboard validates against Grafana's published schema.

@grafana/schema (npm, pinned in tests/dashboards/package.json) publishes the
dashboard model and each core panel's options as TypeScript types generated
from Grafana's CUE schema; it has no JSON Schema. schema_check.py turns each
dashboard into TypeScript object literals checked with `satisfies` against
those types and runs tsc (see its docstring for what is checked and
docs/dashboards.md for what cannot be). The check is shown to bite: copies of
a dashboard with a misspelt option, an enum value the schema lacks, a
deprecated panel type and a missing grid field must each fail it.

Needs node and `npm ci` in tests/dashboards (tried offline from npm's cache
when node_modules is missing); skips otherwise.
"""

import copy
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
from harness import Skip, TestFailure, check, run_test  # noqa: E402
import schema_check  # noqa: E402


def ensure_packages():
    if schema_check.tsc_available():
        return
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise Skip("node/npm not installed")
    p = subprocess.run(["npm", "ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"],
                       cwd=HERE, capture_output=True, text=True, timeout=300)
    if p.returncode != 0 or not schema_check.tsc_available():
        raise Skip("@grafana/schema and typescript are not installed: run `npm ci` in "
                   f"tests/dashboards ({p.stderr.strip()[-300:]})")


def mutants(doc):
    """(what, broken copy) pairs the check must reject."""
    def first(kind):
        return next(p for p in doc["panels"] if p["type"] == kind)

    out = []
    d = copy.deepcopy(doc)
    next(p for p in d["panels"] if p["type"] == "timeseries")["options"]["legend"]["placment"] = \
        "bottom"
    out.append(("a misspelt legend option", d))
    d = copy.deepcopy(doc)
    next(p for p in d["panels"] if p["type"] == "timeseries")["fieldConfig"]["defaults"][
        "custom"]["drawStyle"] = "curve"
    out.append(("a drawStyle the schema does not list", d))
    d = copy.deepcopy(doc)
    next(p for p in d["panels"] if p["type"] == "stat")["type"] = "singlestat"
    out.append(("the deprecated singlestat panel", d))
    d = copy.deepcopy(doc)
    del next(p for p in d["panels"] if p["type"] == "row")["gridPos"]["w"]
    out.append(("a row without gridPos.w", d))
    first("row")  # the dashboard has the panel kinds used above
    return out


def body(args):
    ensure_packages()
    docs = {}
    for path in sorted(glob.glob(os.path.join(args.source_dir, "dashboards", "*", "*.json"))):
        with open(path, encoding="utf-8") as f:
            docs[os.path.relpath(path, os.path.join(args.source_dir, "dashboards"))] = json.load(f)
    check(len(docs) >= 8, f"expected the 8 shipped dashboards, found {sorted(docs)}")
    ok, messages = schema_check.check(docs)
    if not ok:
        raise TestFailure("dashboards do not match @grafana/schema:\n" + "\n".join(messages))
    print(f"{len(docs)} dashboards match @grafana/schema's types")
    base = docs["native/operations.json"]
    broken = {f"mutant {i}: {what}": d for i, (what, d) in enumerate(mutants(base))}
    ok, messages = schema_check.check(broken)
    check(not ok, "the schema check accepted broken dashboards")
    for label in broken:
        check(any(m.startswith(label) for m in messages),
              f"{label} was not rejected:\n" + "\n".join(messages))
    print(f"{len(broken)} broken copies rejected")


if __name__ == "__main__":
    run_test(body)
