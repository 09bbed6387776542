// Rule files: Prometheus's rule-file YAML, parsed and validated.
//
// Contract:
// - The accepted fields are those of `promtool check rules`:
//   groups[].{name, interval, limit, rules}, and for each rule
//   {record | alert, expr, for, keep_firing_for, labels, annotations}.
//   Two Prometheus 3.x group fields are accepted as well: query_offset and
//   labels (merged under each rule's labels). Unknown fields, duplicate keys
//   and values of the wrong YAML kind are errors.
// - Validation follows Prometheus's rulefmt: a group needs a name, unique
//   in its file; a rule sets exactly one of record/alert and a non-empty
//   expr that parses as PromQL; recording rules take no for,
//   keep_firing_for or annotations and their name must be a valid metric
//   name; label names must be valid (and not __name__), label values valid
//   UTF-8, annotation names valid; alert label and annotation templates
//   must parse (see template.h; unsupported constructs fail here).
// - Every error found is reported, one per line, each as
//   "<file>:<line>:<column>: [group "g", rule N "name": ]field "f": what".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::rules {

struct RuleSpec {
  std::string record;  // exactly one of record / alert is set
  std::string alert;
  std::string expr;
  int64_t for_ms = 0;
  int64_t keep_firing_for_ms = 0;
  Labels labels;
  Labels annotations;
  int line = 0;  // 1-based line of the rule in its file
};

struct RuleGroupSpec {
  std::string name;
  int64_t interval_ms = 0;  // 0: the global evaluation interval
  int64_t limit = 0;        // 0: no limit
  std::optional<int64_t> query_offset_ms;
  Labels labels;
  std::vector<RuleSpec> rules;
  int line = 0;
};

struct RuleFileSpec {
  std::string path;
  std::vector<RuleGroupSpec> groups;
};

Result<RuleFileSpec> LoadRuleFile(const std::string& path);
// `path` only names the source in errors.
Result<RuleFileSpec> ParseRuleFile(std::string_view yaml, const std::string& path);

// Prometheus's legacy name rules: [a-zA-Z_:][a-zA-Z0-9_:]* for metric names,
// [a-zA-Z_][a-zA-Z0-9_]* for label names.
bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);

}  // namespace gpumon::rules
