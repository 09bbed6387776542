// Checking rule files as `promtool check rules` (2.42) does: validation,
// the Prometheus 2.x field set, and the duplicate-rule lint.
//
// Contract:
// - CheckRuleFile loads `path` with LoadRuleFile (rule_file.h: every error
//   with file, line, column and field). Unless `prometheus3` is set, the
//   Prometheus 3.x group fields gpumon's loader also accepts (query_offset,
//   labels) are errors too, since promtool 2.42 rejects them, and so are
//   expressions using PromQL that 2.42 does not know (Prometheus 3
//   functions and names; prometheus2_compat.h).
// - With `lint_duplicates` and a valid file, rules with the same name
//   (alert or record) and the same own labels are a lint problem, reported
//   in promtool's words ("N duplicate rule(s) found. ..."). A lint problem
//   is not an error: promtool still exits 0 unless --lint-fatal (3).
// - `rules` counts the rules of a valid file without lint problems (0
//   otherwise, as promtool prints no count then).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "rules/rule_file.h"

namespace gpumon::rules {

struct RuleCheckOptions {
  bool prometheus3 = false;     // accept query_offset and group labels
  bool lint_duplicates = true;  // promtool's default --lint=duplicate-rules
};

struct RuleCheckResult {
  int rules = 0;
  std::vector<std::string> errors;  // each may span lines
  std::string lint;                 // lint report; "" when clean
  bool ok() const { return errors.empty() && lint.empty(); }
};

RuleCheckResult CheckRuleFile(const std::string& path, const RuleCheckOptions& opts);

// Loads a rule file as promtool 2.42 would accept it (see CheckRuleFile):
// LoadRuleFile plus, unless `prometheus3`, the 2.x field check. Used by the
// unit-test runner for its rule_files.
Result<RuleFileSpec> LoadRuleFileChecked(const std::string& path, bool prometheus3);

// Errors for Prometheus 3.x-only group fields in rule-file text, one per
// field, each naming file, line, column and field; "" when none.
std::string Prometheus3OnlyFields(std::string_view yaml, const std::string& path);

// Errors for rule expressions Prometheus 2.42's parser rejects (functions,
// aggregations and names it does not know; prometheus2_compat.h); "" when
// none.
std::string Prometheus3OnlyPromql(const RuleFileSpec& spec);

// promtool's duplicate-rule lint over a parsed file; "" when there are none.
std::string DuplicateRulesLint(const RuleFileSpec& spec);

}  // namespace gpumon::rules
