#include "promql/promqltest/at_variants.h"

#include <array>
#include <string_view>

#include "promql/function_table.h"
#include "promql/printer.h"

namespace gpumon::promql::promqltest {

namespace {

bool AtUnsafe(std::string_view fn) {
  static constexpr std::array<std::string_view, 15> kUnsafe = {
      "days_in_month", "day_of_month", "day_of_week", "day_of_year", "end",
      "hour",          "minute",       "month",       "year",        "predict_linear",
      "range",         "start",        "step",        "time",        "timestamp"};
  for (std::string_view u : kUnsafe) {
    if (u == fn) return true;
  }
  return false;
}

// Children of a node, for the generic walks below.
template <typename E, typename Fn>
void ForEachChild(E& e, Fn&& fn) {
  std::visit(
      [&](auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, MatrixSelector>) {
          fn(*n.selector);
        } else if constexpr (std::is_same_v<T, Subquery> || std::is_same_v<T, Paren> ||
                             std::is_same_v<T, Unary>) {
          fn(*n.expr);
        } else if constexpr (std::is_same_v<T, Binary>) {
          fn(*n.lhs);
          fn(*n.rhs);
        } else if constexpr (std::is_same_v<T, Aggregate>) {
          if (n.param) fn(*n.param);
          fn(*n.expr);
        } else if constexpr (std::is_same_v<T, Call>) {
          for (auto& a : n.args) fn(*a);
        }
      },
      e.node);
}

// Pins @ ts; returns whether an @-unsafe function was seen outside pinned
// subqueries.
bool Pin(Expr& e, int64_t ts, bool under_pinned_subquery) {
  bool unsafe = false;
  if (!under_pinned_subquery) {
    if (auto* vs = std::get_if<VectorSelector>(&e.node)) {
      if (vs->at != AtModifier::kTimestamp) {
        vs->at = AtModifier::kTimestamp;
        vs->at_ms = ts;
      }
    } else if (auto* sq = std::get_if<Subquery>(&e.node)) {
      if (sq->at != AtModifier::kTimestamp) {
        sq->at = AtModifier::kTimestamp;
        sq->at_ms = ts;
      }
      under_pinned_subquery = true;
    } else if (auto* call = std::get_if<Call>(&e.node)) {
      unsafe = call->func != nullptr && AtUnsafe(call->func->name);
    }
  }
  ForEachChild(e, [&](Expr& child) { unsafe = Pin(child, ts, under_pinned_subquery) || unsafe; });
  return unsafe;
}

}  // namespace

std::vector<AtVariant> AtModifierVariants(const Expr& expr, int64_t ts_ms) {
  ExprPtr copy = Clone(expr);
  if (Pin(*copy, ts_ms, false)) return {};
  std::string text = Print(*copy);
  std::vector<int64_t> times = {-10 * ts_ms, 0, ts_ms / 5, ts_ms, 10 * ts_ms};
  if (ts_ms == 0) times = {-1000, 0, 1000};
  std::vector<AtVariant> out;
  for (int64_t t : times) out.push_back({text, t});
  return out;
}

void ForEachVectorSelector(const Expr& expr, const std::function<void(const VectorSelector&)>& fn) {
  if (const auto* vs = std::get_if<VectorSelector>(&expr.node)) fn(*vs);
  ForEachChild(expr, [&](const Expr& child) { ForEachVectorSelector(child, fn); });
}

}  // namespace gpumon::promql::promqltest
