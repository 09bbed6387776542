// The query of a Grafana Prometheus template variable: `label_values(label)`,
// `label_values(selector, label)`, `query_result(expr)`, `label_names()`,
// `metrics(regex)`, as Grafana's Prometheus data source parses them.
//
// Contract:
// - ParseVariableQuery() splits the text into its function and arguments
//   (leading and trailing spaces ignored); the selector and expression are
//   returned as written (with their Grafana variables), the label must be a
//   label name. Any other text is an error naming what was expected.
// - FormatVariableQuery() writes a VariableQuery back in the same form.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace gpumon::cli {

struct VariableQuery {
  enum class Kind { kLabelValues, kQueryResult, kLabelNames, kMetrics };
  Kind kind = Kind::kLabelValues;
  std::string selector;  // label_values's series selector ("" when absent)
  std::string label;     // label_values's label
  std::string argument;  // query_result's expression, label_names's or metrics's argument
};

Result<VariableQuery> ParseVariableQuery(std::string_view text);
std::string FormatVariableQuery(const VariableQuery& q);

}  // namespace gpumon::cli
