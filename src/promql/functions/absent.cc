// absent() and absent_over_time(): one sample of value 1 when the argument
// has nothing, labelled from the selector's equality matchers as
// Prometheus does (a label matched by `=` exactly once and by no other
// matcher; never __name__).
#include <map>
#include <string>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

const VectorSelector* SelectorOf(const Expr& e) {
  if (const auto* vs = std::get_if<VectorSelector>(&e.node)) return vs;
  if (const auto* ms = std::get_if<MatrixSelector>(&e.node); ms != nullptr && ms->selector) {
    return std::get_if<VectorSelector>(&ms->selector->node);
  }
  return nullptr;
}

Labels AbsentLabels(const FunctionArgs& a) {
  if (a.call == nullptr || a.call->args.empty() || !a.call->args[0]) return Labels();
  const VectorSelector* vs = SelectorOf(*a.call->args[0]);
  if (vs == nullptr) return Labels();
  // Replays Prometheus's label builder: the first `=` sets the label, any
  // later matcher on the same name (or any non-`=` one) deletes it.
  std::map<std::string, std::string> set;
  std::map<std::string, bool> seen_equal;
  for (const auto& m : vs->matchers) {
    if (m.name() == kMetricName) continue;
    if (m.type() == tsdb::MatchType::kEqual && !seen_equal[m.name()]) {
      set[m.name()] = m.value();
      seen_equal[m.name()] = true;
    } else {
      set.erase(m.name());
    }
  }
  std::vector<Label> items;
  for (auto& [name, value] : set) {
    if (!value.empty()) items.push_back(Label{name, value});
  }
  return Labels::FromSorted(std::move(items));
}

}  // namespace

Status Absent(const FunctionArgs& a, Vector& out) {
  const Vector* in = VectorArg(a, 0);
  if (in != nullptr && !in->empty()) return Status::Ok();
  out.push_back(Sample{AbsentLabels(a), a.ts, 1});
  return Status::Ok();
}

// Called once per step with every selected series' window (see
// functions.h): absent when no series has a point in its window.
Status AbsentOverTime(const FunctionArgs& a, Vector& out) {
  if (const Matrix* m = MatrixArg(a, 0)) {
    for (const Series& s : *m) {
      if (!s.points.empty()) return Status::Ok();
    }
  }
  out.push_back(Sample{AbsentLabels(a), a.ts, 1});
  return Status::Ok();
}

}  // namespace gpumon::promql::fn
