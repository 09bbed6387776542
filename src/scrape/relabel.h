// Relabeling: Prometheus's relabel_configs rules applied to a label set,
// for targets (relabel_configs) and scraped samples (metric_relabel_configs).
//
// Contract:
// - RelabelConfig carries Prometheus's defaults (separator ";", regex
//   "(.*)", replacement "$1", action replace). Compile() validates a rule
//   the way Prometheus does (action-specific required and forbidden fields,
//   label-name checks) and compiles its regex, fully anchored, with RE2.
//   Relabel() must only be given compiled rules.
// - Relabel() applies the rules in order and returns the resulting labels,
//   or std::nullopt when a keep/drop rule dropped the set. Labels whose
//   value becomes empty are removed (absent and empty are the same).
// - Replacement templates expand $1, ${1} and ${name} (named groups); a
//   reference to a missing group expands to "".
#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::scrape {

enum class RelabelAction {
  kReplace,
  kKeep,
  kDrop,
  kKeepEqual,
  kDropEqual,
  kHashMod,
  kLabelMap,
  kLabelDrop,
  kLabelKeep,
  kLowercase,
  kUppercase,
};

// "replace", "keep", ... as written in configuration files.
std::optional<RelabelAction> RelabelActionFromName(std::string_view name);
const char* RelabelActionName(RelabelAction action);

struct RelabelConfig {
  std::vector<std::string> source_labels;
  std::string separator = ";";
  std::string regex = "(.*)";
  uint64_t modulus = 0;
  std::string target_label;
  std::string replacement = "$1";
  RelabelAction action = RelabelAction::kReplace;

  // Set by Compile(); shared so that configs stay cheap to copy.
  std::shared_ptr<const RE2> compiled;

  // Validates the rule and compiles its regex. Error messages follow
  // Prometheus's wording.
  Status Compile();
};

// Applies compiled rules; std::nullopt means the label set was dropped.
std::optional<Labels> Relabel(const Labels& labels, std::span<const RelabelConfig> rules);

// Whether `name` is a valid label name ([a-zA-Z_][a-zA-Z0-9_]*).
bool IsValidLabelName(std::string_view name);

}  // namespace gpumon::scrape
