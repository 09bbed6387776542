// Rule: what recording and alerting rules share — a name, a parsed query,
// labels, and the health of the last evaluation.
//
// Contract:
// - Eval(ctx, ts) runs the query as an instant query at ts - query offset
//   and returns the samples to append (already labelled); it is called by
//   one thread at a time (its group's), while the accessors may be called
//   from any thread.
// - A query result that is a scalar becomes a one-sample vector without
//   labels; strings and matrices are errors, as in Prometheus.
// - Health: unknown until evaluated, then ok or err with the last error.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "common/labels.h"
#include "common/status.h"
#include "promql/ast.h"
#include "promql/engine.h"
#include "promql/value.h"

namespace gpumon::rules {

inline constexpr int64_t kNoTime = INT64_MIN;

enum class RuleHealth { kUnknown, kGood, kBad };
const char* RuleHealthName(RuleHealth h);  // "unknown", "ok", "err"

struct EvalContext {
  promql::Engine* engine = nullptr;
  const promql::Queryable* queryable = nullptr;
  int64_t query_offset_ms = 0;
  int64_t limit = 0;  // 0: none
  // Template functions of alerting rules (see AlertingRule): applied to each
  // query a template's `query` runs, after parsing; it may rewrite the
  // expression or reject it with an error. Empty: none.
  std::function<Status(promql::Expr&)> adapt_template_query;
  // Whether the externalURL and pathPrefix template functions see the
  // rule's external URL; promtool test rules runs rules without one.
  bool template_external_url = true;
};

// The rule's query as a vector at `ts` (evaluated at ts - query offset).
Result<promql::Vector> QueryVector(const EvalContext& ctx, const promql::Expr& expr, int64_t ts);
// `expr` as a vector at exactly `t`, with the same conversion.
Result<promql::Vector> InstantVector(const EvalContext& ctx, const promql::Expr& expr, int64_t t);

// Sets (or, for an empty value, removes) `overrides` on `base`.
Labels OverrideLabels(const Labels& base, const Labels& overrides);

struct RuleStatus {
  RuleHealth health = RuleHealth::kUnknown;
  std::string last_error;
  int64_t last_evaluation_ms = kNoTime;  // wall-clock start of the last evaluation
  double evaluation_seconds = 0;
};

class Rule {
 public:
  Rule(std::string name, promql::ExprPtr expr, Labels labels);
  virtual ~Rule() = default;

  const std::string& name() const { return name_; }
  const promql::Expr& expr() const { return *expr_; }
  // The query as Prometheus prints it (the expression's String()).
  const std::string& query() const { return query_; }
  const Labels& labels() const { return labels_; }
  virtual bool alerting() const = 0;
  // Everything that defines the rule; equal definitions mean an unchanged
  // rule across reloads.
  virtual std::string Definition() const = 0;

  virtual Result<promql::Vector> Eval(const EvalContext& ctx, int64_t ts) = 0;

  RuleStatus status() const;
  void SetHealth(RuleHealth h, std::string last_error);
  void SetEvaluation(int64_t started_ms, double seconds);

 protected:
  mutable std::mutex mu_;

 private:
  std::string name_;
  promql::ExprPtr expr_;
  std::string query_;
  Labels labels_;
  RuleStatus status_;
};

}  // namespace gpumon::rules
