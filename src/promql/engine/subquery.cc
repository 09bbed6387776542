// Subqueries: the inner expression runs in a child evaluator whose steps
// are absolute multiples of the subquery step, covering every window the
// outer steps need: (start - offset - range, end - offset], or the one
// window ending at the @ time.
#include "promql/engine/evaluator.h"

namespace gpumon::promql::engine_internal {

RangeInput Evaluator::EvalSubqueryInput(const Subquery& sq) {
  const auto at = ResolveAt(sq.at, sq.at_ms);
  const int64_t step = sq.step_ms > 0 ? sq.step_ms : ctx_.opts.default_eval_step_ms;
  int64_t ref_start, ref_end;
  if (at) {
    ref_start = ref_end = *at - sq.offset_ms;
  } else {
    // The outer loop never goes past its last aligned step.
    const int64_t parent_end = start_ + ((end_ - start_) / interval_) * interval_;
    ref_start = start_ - sq.offset_ms;
    ref_end = parent_end - sq.offset_ms;
  }
  // First multiple of the step strictly after the earliest window start.
  const int64_t lo = ref_start - sq.range_ms;
  int64_t first = step * (lo / step);
  if (first <= lo) first += step;

  RangeInput in;
  in.range_ms = sq.range_ms;
  in.offset_ms = sq.offset_ms;
  in.at_ms = at;
  Evaluator child(ctx_, first, ref_end, step);
  in.series = child.Eval(*sq.expr);
  return in;
}

Matrix Evaluator::EvalSubqueryValue(const Subquery& sq) {
  // As a value (instant queries only), the result is the inner expression's
  // points inside the single window.
  RangeInput in = EvalSubqueryInput(sq);
  return std::move(in.series);
}

}  // namespace gpumon::promql::engine_internal
