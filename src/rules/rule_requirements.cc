#include "rules/rule_requirements.h"

#include <algorithm>
#include <type_traits>

namespace gpumon::rules {
namespace {

// The engine's default subquery step (promql::EngineOptions).
constexpr int64_t kDefaultSubqueryStepMs = 60 * 1000;

int64_t AddSat(int64_t a, int64_t b) {
  if (a == RuleRequirements::kUnbounded || b == RuleRequirements::kUnbounded) {
    return RuleRequirements::kUnbounded;
  }
  return a > RuleRequirements::kUnbounded - b ? RuleRequirements::kUnbounded : a + b;
}

void Need(RuleRequirements* out, int64_t ms) { out->history_ms = std::max(out->history_ms, ms); }

void AddSelector(const promql::VectorSelector& vs, int64_t before_ms, int64_t window_ms,
                 RuleRequirements* out) {
  RuleRequirements::Selector sel;
  for (const auto& m : vs.matchers) {
    if (m.name() == kMetricName) sel.name_matchers.push_back(m);
  }
  if (sel.name_matchers.empty()) out->any_name = true;
  sel.history_ms = vs.at != promql::AtModifier::kNone
                       ? RuleRequirements::kUnbounded
                       : AddSat(AddSat(before_ms, std::max<int64_t>(vs.offset_ms, 0)), window_ms);
  Need(out, sel.history_ms);
  out->selectors.push_back(std::move(sel));
}

// `before_ms`: how far before the evaluation time this expression is
// evaluated (offsets and ranges of enclosing subqueries).
void Walk(const promql::Expr& e, int64_t before_ms, int64_t lookback_ms, RuleRequirements* out) {
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, promql::VectorSelector>) {
          AddSelector(n, before_ms, lookback_ms, out);
        } else if constexpr (std::is_same_v<T, promql::MatrixSelector>) {
          const auto& vs = std::get<promql::VectorSelector>(n.selector->node);
          AddSelector(vs, before_ms, n.range_ms, out);
        } else if constexpr (std::is_same_v<T, promql::Subquery>) {
          // One step more: the first inner evaluation is aligned down to it.
          const int64_t inner =
              n.at != promql::AtModifier::kNone
                  ? RuleRequirements::kUnbounded
                  : AddSat(AddSat(AddSat(before_ms, std::max<int64_t>(n.offset_ms, 0)), n.range_ms),
                           n.step_ms > 0 ? n.step_ms : kDefaultSubqueryStepMs);
          Walk(*n.expr, inner, lookback_ms, out);
        } else if constexpr (std::is_same_v<T, promql::Paren> || std::is_same_v<T, promql::Unary>) {
          Walk(*n.expr, before_ms, lookback_ms, out);
        } else if constexpr (std::is_same_v<T, promql::Binary>) {
          Walk(*n.lhs, before_ms, lookback_ms, out);
          Walk(*n.rhs, before_ms, lookback_ms, out);
        } else if constexpr (std::is_same_v<T, promql::Aggregate>) {
          Walk(*n.expr, before_ms, lookback_ms, out);
          if (n.param) Walk(*n.param, before_ms, lookback_ms, out);
        } else if constexpr (std::is_same_v<T, promql::Call>) {
          for (const auto& a : n.args) Walk(*a, before_ms, lookback_ms, out);
        }
      },
      e.node);
}

}  // namespace

bool RuleRequirements::Selector::Matches(std::string_view metric_name) const {
  return std::all_of(name_matchers.begin(), name_matchers.end(),
                     [&](const tsdb::Matcher& m) { return m.Matches(metric_name); });
}

bool RuleRequirements::Needs(std::string_view metric_name) const {
  return std::any_of(selectors.begin(), selectors.end(),
                     [&](const Selector& s) { return s.Matches(metric_name); });
}

int64_t RuleRequirements::HistoryFor(std::string_view metric_name) const {
  int64_t h = 0;
  for (const auto& s : selectors) {
    if (s.Matches(metric_name)) h = std::max(h, s.history_ms);
  }
  return h;
}

void AddExprRequirements(const promql::Expr& expr, int64_t query_offset_ms,
                         int64_t lookback_delta_ms, RuleRequirements* out) {
  Walk(expr, std::max<int64_t>(query_offset_ms, 0), lookback_delta_ms, out);
}

RuleRequirements AnalyzeRules(const std::vector<std::shared_ptr<Group>>& groups,
                              int64_t lookback_delta_ms) {
  RuleRequirements out;
  for (const auto& g : groups) {
    for (const auto& r : g->rules()) {
      AddExprRequirements(r->expr(), g->query_offset_ms(), lookback_delta_ms, &out);
    }
  }
  return out;
}

}  // namespace gpumon::rules
