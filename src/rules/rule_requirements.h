// RuleRequirements: what a set of rules reads from storage — which metric
// names their selectors can match and how far back before an evaluation
// they look — so a replay (backtest) stores only the series the rules can
// see and keeps only the history they need.
//
// Contract:
// - Needs(name) is true when some selector of some rule can select a series
//   of that metric name: a selector whose __name__ matchers all accept the
//   name, or any selector without a __name__ matcher (any_name).
// - history_ms bounds how far before its evaluation time any rule reads a
//   sample: per selector its offset plus the lookback delta (instant
//   vectors) or its range (range vectors), subqueries adding their range,
//   offset and step to everything inside them, plus the group's query offset.
//   Negative offsets count as 0. A selector or subquery with an @ modifier
//   reads at an absolute time: history_ms is then kUnbounded.
// - HistoryFor(name) is the same bound over only the selectors that can
//   select that metric name (0 when none can), so a replay may keep each
//   metric's samples only as long as its own readers need.
// - Only the rules' expressions are read; nothing is evaluated.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "promql/ast.h"
#include "rules/group.h"
#include "tsdb/matcher.h"

namespace gpumon::rules {

struct RuleRequirements {
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

  struct Selector {
    std::vector<tsdb::Matcher> name_matchers;  // empty: any name
    int64_t history_ms = 0;
    bool Matches(std::string_view metric_name) const;
  };
  std::vector<Selector> selectors;
  bool any_name = false;  // some selector has no __name__ matcher
  int64_t history_ms = 0;

  bool Needs(std::string_view metric_name) const;
  int64_t HistoryFor(std::string_view metric_name) const;
};

// Adds one expression evaluated `query_offset_ms` before its evaluation time.
void AddExprRequirements(const promql::Expr& expr, int64_t query_offset_ms,
                         int64_t lookback_delta_ms, RuleRequirements* out);

RuleRequirements AnalyzeRules(const std::vector<std::shared_ptr<Group>>& groups,
                              int64_t lookback_delta_ms);

}  // namespace gpumon::rules
