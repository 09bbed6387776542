// Runs rule unit-test files (unit_test_file.h) the way `promtool test rules`
// (2.42) does, and reports promtool's verdict with its failure messages.
//
// Contract (Prometheus cmd/promtool/unittest.go):
// - rule_files are relative to the test file's folder and may be globs; a
//   pattern matching nothing is a warning. evaluation_interval defaults to
//   1m; a group named twice in group_eval_order fails the file.
// - Each test group gets a fresh in-memory TSDB and fresh rule groups
//   (alerting rules count as restored, so ALERTS series are written). Input
//   series points lie at multiples of `interval` from t=0, a later item for
//   the same series replacing an earlier one, and are appended lazily: before
//   the evaluation at ts, every point <= ts.
// - Rule groups evaluate at 0, evaluation_interval, ... up to the largest
//   eval_time of the group's tests, in group_eval_order (groups not named
//   keep their file order, first). After each evaluation any rule in error
//   fails the test group and ends it. An alert_rule_test at eval_time t is
//   checked after the evaluation at the last step <= t: the firing alerts of
//   every rule named `alertname` (labels: series labels, rule labels and
//   alertname; annotations expanded) must equal exp_alerts as a set
//   (alertname is added to each expected alert's labels).
// - promql_expr_test queries run after the last evaluation, as instant
//   queries at eval_time; a scalar result is a sample without labels; the
//   result must equal exp_samples as a set, values compared exactly.
// - The engine is set up as promtool's: lookback 5m, at most 10000 samples
//   per query, subqueries without a step use evaluation_interval. Unless
//   `prometheus3`, selection windows are Prometheus 2.x's
//   (prometheus2_compat.h) and rule files may not use 3.x group fields.
// - Failure messages follow promtool's text (test name, eval time,
//   "exp:" / "got:" lists).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/unit_test_file.h"

namespace gpumon::rules {

struct UnitTestOptions {
  bool prometheus3 = false;
};

struct UnitTestReport {
  std::vector<std::string> warnings;  // e.g. a rule_files pattern matching nothing
  std::vector<std::string> errors;    // each one failure (may span lines)
  bool ok() const { return errors.empty(); }
};

// Reads, decodes and runs one test file.
UnitTestReport RunUnitTestFile(const std::string& path, const UnitTestOptions& opts = {});
// Runs an already decoded file; rule_files resolve against file.path's folder.
UnitTestReport RunUnitTests(const UnitTestFile& file, const UnitTestOptions& opts = {});

// Go's formatting, as promtool's messages use it.
std::string GoLabelsString(const Labels& l);  // {a="b", c="d"} (__name__ included)
std::string GoFloatE(double v);               // strconv.FormatFloat(v, 'E', -1, 64)
std::string GoTimeDuration(int64_t ms);       // time.Duration.String(): 1m0s, 1.5s, 0s

}  // namespace gpumon::rules
