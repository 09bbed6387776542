#!/usr/bin/env python3
"""`gpumon rules check|test` give the same verdicts as the real promtool.

For every rule file (tests/rules/testdata/*.rules.yml and the rule pack's
rules/*.rules.yml when present) `promtool check rules` and `gpumon rules
check` must exit with the same status, with and without --lint-fatal; for
every unit-test file (tests/rules/testdata/*.test.yml and the pack's
rules/tests/*.test.yml when present) `promtool test rules` and `gpumon rules
test` must too. The first line of each testdata file says what promtool is
expected to answer ("# expect: pass" or "# expect: fail"), so the table
itself is checked against promtool as well.
"""

import glob
import os
import subprocess

from harness import check, need_tool, run_test


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=120)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def expectation(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    if first.startswith("# expect: pass"):
        return 0
    if first.startswith("# expect: fail"):
        return 1
    return None


def compare(label, promtool_cmd, gpumon_cmd, cwd, expected, mismatches):
    prc, pout = run(promtool_cmd, cwd)
    grc, gout = run(gpumon_cmd, cwd)
    verdict = "ok" if prc == grc else "MISMATCH"
    print(f"{verdict:8} promtool {prc} gpumon {grc}  {label}")
    if prc != grc:
        mismatches.append(f"{label}: promtool exit {prc}, gpumon exit {grc}\n"
                          f"--- promtool:\n{pout}\n--- gpumon:\n{gout}")
    if expected is not None and prc != expected:
        mismatches.append(f"{label}: the table expects exit {expected} but promtool exits "
                          f"{prc}:\n{pout}")
    # The verdict text follows promtool's.
    if grc == 0:
        check("SUCCESS" in gout or "lint error" in gout,
              f"{label}: gpumon passed without SUCCESS:\n{gout}")
    elif grc in (1, 3):
        check("FAILED" in gout or "does not exist" in gout,
              f"{label}: gpumon failed without FAILED:\n{gout}")
    return grc, gout


def body(args):
    promtool = need_tool("promtool")
    gpumon = os.path.abspath(args.gpumon)
    testdata = os.path.join(args.source_dir, "tests", "rules", "testdata")
    pack_rules = sorted(glob.glob(os.path.join(args.source_dir, "rules", "*.rules.yml")))
    pack_tests = sorted(glob.glob(os.path.join(args.source_dir, "rules", "tests", "*.test.yml")))
    if not pack_rules and not pack_tests:
        print("note: no rule pack under rules/ yet; comparing the testdata table only")

    rule_files = [(f, expectation(f)) for f in sorted(glob.glob(os.path.join(testdata,
                                                                               "*.rules.yml")))]
    rule_files += [(f, None) for f in pack_rules]
    test_files = [(f, expectation(f)) for f in sorted(glob.glob(os.path.join(testdata,
                                                                              "*.test.yml")))]
    test_files += [(f, None) for f in pack_tests]
    check(len(rule_files) >= 10 and len(test_files) >= 20,
          f"testdata table is missing: {len(rule_files)} rule files, {len(test_files)} tests")
    for f, e in rule_files + test_files:
        if f.startswith(testdata):
            check(e is not None, f"{f}: first line must be '# expect: pass' or '# expect: fail'")

    mismatches = []
    seen = {"pass": 0, "fail": 0}
    for f, expected in rule_files:
        d, name = os.path.dirname(f), os.path.basename(f)
        rc, _ = compare(f"check rules {os.path.relpath(f, args.source_dir)}",
                        [promtool, "check", "rules", name],
                        [gpumon, "rules", "check", name], d, expected, mismatches)
        seen["pass" if rc == 0 else "fail"] += 1
        compare(f"check rules --lint-fatal {os.path.relpath(f, args.source_dir)}",
                [promtool, "check", "rules", "--lint-fatal", name],
                [gpumon, "rules", "check", "--lint-fatal", name], d, None, mismatches)
    for f, expected in test_files:
        d, name = os.path.dirname(f), os.path.basename(f)
        rc, _ = compare(f"test rules {os.path.relpath(f, args.source_dir)}",
                        [promtool, "test", "rules", name],
                        [gpumon, "rules", "test", name], d, expected, mismatches)
        seen["pass" if rc == 0 else "fail"] += 1

    # Several files in one call: one failing file fails the call.
    names = [os.path.basename(f) for f, _ in rule_files if f.startswith(testdata)]
    compare("check rules (all testdata files at once)", [promtool, "check", "rules"] + names,
            [gpumon, "rules", "check"] + names, testdata, 1, mismatches)
    passing = [os.path.basename(f) for f, e in test_files if e == 0]
    compare("test rules (all passing testdata tests at once)",
            [promtool, "test", "rules"] + passing, [gpumon, "rules", "test"] + passing, testdata,
            0, mismatches)
    compare("test rules (passing and failing at once)",
            [promtool, "test", "rules"] + passing + ["wrong_value.test.yml"],
            [gpumon, "rules", "test"] + passing + ["wrong_value.test.yml"], testdata, 1,
            mismatches)
    # A missing file.
    compare("check rules (missing file)", [promtool, "check", "rules", "nope.yml"],
            [gpumon, "rules", "check", "nope.yml"], testdata, 1, mismatches)
    compare("test rules (missing file)", [promtool, "test", "rules", "nope.yml"],
            [gpumon, "rules", "test", "nope.yml"], testdata, 1, mismatches)

    # Flags: lint selection and usage errors.
    compare("check rules --lint=none (duplicates)",
            [promtool, "check", "rules", "--lint=none", "--lint-fatal", "duplicate_rule.rules.yml"],
            [gpumon, "rules", "check", "--lint=none", "--lint-fatal", "duplicate_rule.rules.yml"],
            testdata, 0, mismatches)
    compare("check rules (unknown flag)", [promtool, "check", "rules", "--bogus", "good.rules.yml"],
            [gpumon, "rules", "check", "--bogus", "good.rules.yml"], testdata, 1, mismatches)

    # Errors name the file and line.
    _, out = run([gpumon, "rules", "check", "bad_promql.rules.yml"], testdata)
    check("bad_promql.rules.yml:6:" in out and 'field "expr"' in out,
          f"check error does not name file:line and field:\n{out}")
    _, out = run([gpumon, "rules", "test", "unknown_field.test.yml"], testdata)
    check("unknown_field.test.yml:" in out and "exp_alert" in out,
          f"test-file error does not name file:line and field:\n{out}")

    print(f"{len(rule_files)} rule files, {len(test_files)} test files "
          f"({seen['pass']} passing, {seen['fail']} failing verdicts)")
    check(seen["pass"] > 0 and seen["fail"] > 0, "the table needs passing and failing files")
    check(not mismatches, "verdicts differ from promtool:\n\n" + "\n\n".join(mismatches))


if __name__ == "__main__":
    run_test(body)
