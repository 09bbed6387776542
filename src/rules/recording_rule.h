// RecordingRule: evaluates its query and records the result under a new
// metric name.
//
// Contract (Prometheus's RecordingRule.Eval): every sample gets __name__ =
// the record name and the rule's labels (an empty value removes the
// label). Two samples with the same resulting labels fail the evaluation
// ("vector contains metrics with the same labelset after applying rule
// labels"); more samples than the group's limit fail it too.
#pragma once

#include "rules/rule.h"

namespace gpumon::rules {

class RecordingRule : public Rule {
 public:
  RecordingRule(std::string name, promql::ExprPtr expr, Labels labels)
      : Rule(std::move(name), std::move(expr), std::move(labels)) {}

  bool alerting() const override { return false; }
  std::string Definition() const override;
  Result<promql::Vector> Eval(const EvalContext& ctx, int64_t ts) override;
};

}  // namespace gpumon::rules
