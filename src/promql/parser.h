// PromQL parsing: query text → type-checked AST.
//
// Contract:
// - Parse accepts the whole PromQL language of Prometheus 3.x (float
//   samples): literals (decimal, hex, exponent, Inf/NaN, durations such as
//   1h30m where a number is expected), strings ("", '', `` with Go escapes),
//   selectors with all matcher kinds (including {"metric.name"} quoted
//   names), ranges, offset (also negative), @ (number, start(), end()),
//   subqueries, unary and binary operators with Prometheus's precedence and
//   associativity (^ is right-associative), bool, on/ignoring,
//   group_left/group_right, all aggregations with by/without before or
//   after the arguments, function calls, comments (#...).
// - Errors are ParseError values: message in Prometheus's wording where it
//   has one, and the position as line:column (1-based), e.g.
//   "1:8: parse error: unexpected end of input in aggregation".
// - Native-histogram literal syntax ({{...}}) is rejected with a clear
//   "not supported" error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "promql/ast.h"

namespace gpumon::promql {

struct ParseError {
  PosRange pos;
  int line = 1;         // 1-based
  int column = 1;       // 1-based, in bytes
  std::string message;  // without the position prefix
  // "line:column: parse error: message" (Prometheus's formatting).
  std::string ToString() const;
};

struct ParseResult {
  ExprPtr expr;                     // set on success
  std::optional<ParseError> error;  // set on failure
  bool ok() const { return !error.has_value(); }
};

ParseResult Parse(std::string_view query);

// A series description `metric{a="b"}` / `{__name__="m",a="b"}` as used by
// the test-script language and match[] parameters that name one series:
// only equality matchers allowed; returns the label set.
Result<Labels> ParseMetric(std::string_view text);

// A match[] selector: `up`, `{job=~"a.*"}`, ... → its matchers. Fails when
// the selector matches everything (every matcher matches the empty string),
// as Prometheus does.
Result<std::vector<tsdb::Matcher>> ParseMetricSelector(std::string_view text);

// Parses a duration such as 1h30m, 5m, 1.5 (seconds, when allow_float) in
// PromQL syntax; milliseconds.
Result<int64_t> ParseDuration(std::string_view text);

}  // namespace gpumon::promql
