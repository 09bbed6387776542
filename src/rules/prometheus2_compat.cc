#include "rules/prometheus2_compat.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <type_traits>

#include "promql/function_table.h"
#include "rules/rule_file.h"

namespace gpumon::rules {

namespace {

// Prometheus 2.42's promql/parser/functions.go, sorted.
constexpr std::string_view kPrometheus2Functions[] = {
    "abs",
    "absent",
    "absent_over_time",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "avg_over_time",
    "ceil",
    "changes",
    "clamp",
    "clamp_max",
    "clamp_min",
    "cos",
    "cosh",
    "count_over_time",
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "deg",
    "delta",
    "deriv",
    "exp",
    "floor",
    "histogram_count",
    "histogram_fraction",
    "histogram_quantile",
    "histogram_sum",
    "holt_winters",
    "hour",
    "idelta",
    "increase",
    "irate",
    "label_join",
    "label_replace",
    "last_over_time",
    "ln",
    "log10",
    "log2",
    "max_over_time",
    "min_over_time",
    "minute",
    "month",
    "pi",
    "predict_linear",
    "present_over_time",
    "quantile_over_time",
    "rad",
    "rate",
    "resets",
    "round",
    "scalar",
    "sgn",
    "sin",
    "sinh",
    "sort",
    "sort_desc",
    "sqrt",
    "stddev_over_time",
    "stdvar_over_time",
    "sum_over_time",
    "tan",
    "tanh",
    "time",
    "timestamp",
    "vector",
    "year",
};

bool IsPrometheus2Function(std::string_view name) {
  return std::binary_search(std::begin(kPrometheus2Functions), std::end(kPrometheus2Functions),
                            name);
}

// Functions whose value depends on the window's bounds, not only on the
// samples in it.
bool Extrapolates(const promql::Call& c) {
  std::string_view n = c.func != nullptr ? c.func->name : std::string_view();
  return n == "rate" || n == "increase" || n == "delta";
}

void Widen(promql::Expr& e, bool keep_range) {
  std::visit(
      [&](auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, promql::MatrixSelector>) {
          if (!keep_range) n.range_ms += 1;
        } else if constexpr (std::is_same_v<T, promql::Subquery>) {
          if (!keep_range) n.range_ms += 1;
          Widen(*n.expr, false);
        } else if constexpr (std::is_same_v<T, promql::Paren> || std::is_same_v<T, promql::Unary>) {
          Widen(*n.expr, false);
        } else if constexpr (std::is_same_v<T, promql::Binary>) {
          Widen(*n.lhs, false);
          Widen(*n.rhs, false);
        } else if constexpr (std::is_same_v<T, promql::Aggregate>) {
          Widen(*n.expr, false);
          if (n.param) Widen(*n.param, false);
        } else if constexpr (std::is_same_v<T, promql::Call>) {
          const bool keep = Extrapolates(n);
          for (auto& a : n.args) Widen(*a, keep);
        }
      },
      e.node);
}

std::string Check(const promql::Expr& e) {
  std::string out;
  auto sub = [&](const promql::Expr* child) {
    if (out.empty() && child != nullptr) out = Check(*child);
  };
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, promql::VectorSelector>) {
          if (!n.name.empty() && !IsValidMetricName(n.name)) {
            out = "metric name \"" + n.name + "\" is not a Prometheus 2.42 name";
          }
          for (const auto& m : n.matchers) {
            if (out.empty() && m.name() != kMetricName && !IsValidLabelName(m.name())) {
              out = "label name \"" + m.name() + "\" is not a Prometheus 2.42 name";
            }
          }
        } else if constexpr (std::is_same_v<T, promql::MatrixSelector>) {
          sub(n.selector.get());
        } else if constexpr (std::is_same_v<T, promql::Subquery> ||
                             std::is_same_v<T, promql::Paren> || std::is_same_v<T, promql::Unary>) {
          sub(n.expr.get());
        } else if constexpr (std::is_same_v<T, promql::Binary>) {
          sub(n.lhs.get());
          sub(n.rhs.get());
        } else if constexpr (std::is_same_v<T, promql::Aggregate>) {
          if (n.op == promql::AggregateOp::kLimitk || n.op == promql::AggregateOp::kLimitRatio) {
            out = std::string("aggregation ") + promql::AggregateOpName(n.op) +
                  " is not in Prometheus 2.42";
          }
          sub(n.expr.get());
          sub(n.param.get());
        } else if constexpr (std::is_same_v<T, promql::Call>) {
          std::string_view name = n.func != nullptr ? n.func->name : std::string_view();
          if (!IsPrometheus2Function(name)) {
            out = "unknown function with name \"" + std::string(name) + "\" in Prometheus 2.42";
          }
          for (const auto& a : n.args) sub(a.get());
        }
      },
      e.node);
  return out;
}

}  // namespace

void WidenWindowsForPrometheus2(promql::Expr& expr) { Widen(expr, false); }

std::string Prometheus2Incompatibility(const promql::Expr& expr) { return Check(expr); }

}  // namespace gpumon::rules
