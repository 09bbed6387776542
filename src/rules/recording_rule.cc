#include "rules/recording_rule.h"

#include <algorithm>

namespace gpumon::rules {

std::string RecordingRule::Definition() const {
  return "record: " + name() + "\nexpr: " + query() + "\nlabels: " + labels().ToString();
}

Result<promql::Vector> RecordingRule::Eval(const EvalContext& ctx, int64_t ts) {
  auto res = QueryVector(ctx, expr(), ts);
  if (!res.ok()) return res.status();
  promql::Vector vec = std::move(res).value();
  Labels overrides = OverrideLabels(labels(), Labels{{std::string(kMetricName), name()}});
  for (auto& s : vec) s.metric = OverrideLabels(s.metric, overrides);
  std::vector<const Labels*> sorted;
  sorted.reserve(vec.size());
  for (const auto& s : vec) sorted.push_back(&s.metric);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return *a < *b; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (*sorted[i] == *sorted[i - 1]) {
      return Status::Error(
          "vector contains metrics with the same labelset after applying rule labels");
    }
  }
  if (ctx.limit > 0 && static_cast<int64_t>(vec.size()) > ctx.limit) {
    return Status::Error("exceeded limit of " + std::to_string(ctx.limit) + " with " +
                         std::to_string(vec.size()) + " series");
  }
  return vec;
}

}  // namespace gpumon::rules
