#include "rules/rule.h"

#include <map>

#include "promql/printer.h"

namespace gpumon::rules {

const char* RuleHealthName(RuleHealth h) {
  switch (h) {
    case RuleHealth::kGood:
      return "ok";
    case RuleHealth::kBad:
      return "err";
    default:
      return "unknown";
  }
}

Result<promql::Vector> QueryVector(const EvalContext& ctx, const promql::Expr& expr, int64_t ts) {
  return InstantVector(ctx, expr, ts - ctx.query_offset_ms);
}

Result<promql::Vector> InstantVector(const EvalContext& ctx, const promql::Expr& expr, int64_t t) {
  promql::QueryResult r = ctx.engine->InstantExpr(*ctx.queryable, expr, t);
  if (!r.ok()) return Status::Error(r.error);
  if (auto* v = std::get_if<promql::Vector>(&r.value)) return std::move(*v);
  if (auto* s = std::get_if<promql::Scalar>(&r.value)) {
    return promql::Vector{promql::Sample{Labels(), s->t, s->v}};
  }
  return Status::Error("rule result is not a vector or scalar");
}

Labels OverrideLabels(const Labels& base, const Labels& overrides) {
  if (overrides.empty()) return base;
  std::map<std::string, std::string> m;
  for (const auto& l : base) m[l.name] = l.value;
  for (const auto& l : overrides) {
    if (l.value.empty()) {
      m.erase(l.name);
    } else {
      m[l.name] = l.value;
    }
  }
  std::vector<Label> out;
  out.reserve(m.size());
  for (auto& [k, v] : m) out.push_back({k, v});
  return Labels::FromSorted(std::move(out));
}

Rule::Rule(std::string name, promql::ExprPtr expr, Labels labels)
    : name_(std::move(name)),
      expr_(std::move(expr)),
      query_(promql::Print(*expr_)),
      labels_(std::move(labels)) {}

RuleStatus Rule::status() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

void Rule::SetHealth(RuleHealth h, std::string last_error) {
  std::lock_guard<std::mutex> l(mu_);
  status_.health = h;
  status_.last_error = std::move(last_error);
}

void Rule::SetEvaluation(int64_t started_ms, double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  status_.last_evaluation_ms = started_ms;
  status_.evaluation_seconds = seconds;
}

}  // namespace gpumon::rules
