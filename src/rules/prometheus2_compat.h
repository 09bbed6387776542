// Prometheus 2.x (promtool 2.42) semantics on gpumon's Prometheus 3.x
// PromQL: the language subset and the selection windows.
//
// gpumon's engine selects as Prometheus 3.x does: an instant selector looks
// back over (t - lookback, t] and a range selector or subquery covers
// (t - range, t]. Prometheus 2.x closes both windows on the left:
// [t - lookback, t] and [t - range, t]. A sample exactly one lookback or
// range old therefore counts in 2.x and not in 3.x, which changes verdicts
// of rule unit tests (a series "still present" 5m after its last sample,
// count_over_time over a whole number of intervals).
//
// Contract:
// - Timestamps are integer milliseconds, so [t - r, t] equals
//   (t - r - 1ms, t]: WidenWindowsForPrometheus2 adds 1ms to the range of
//   every matrix selector and subquery of `expr`, and engines meant to
//   behave like 2.x use kPrometheus2LookbackMs as their lookback delta.
// - Exception: the direct range argument of rate, increase and delta keeps
//   its range, because those functions extrapolate to the window's bounds
//   and a wider window would change their value. For them the sample at
//   exactly t - range is not selected (3.x behaviour); see docs/rules-tool.md.
// - Prometheus2Incompatibility names the first part of `expr` that
//   Prometheus 2.42's parser rejects although gpumon's accepts it: a
//   function 2.42 does not have (every 3.x addition), the limitk and
//   limit_ratio aggregations, and metric or label names outside the legacy
//   character set (3.x's quoted UTF-8 names). "" when there is none. The
//   message reads like 2.42's parse error.
#pragma once

#include <cstdint>
#include <string>

#include "promql/ast.h"

namespace gpumon::rules {

inline constexpr int64_t kPrometheus2LookbackMs = 5 * 60 * 1000 + 1;

void WidenWindowsForPrometheus2(promql::Expr& expr);

std::string Prometheus2Incompatibility(const promql::Expr& expr);

}  // namespace gpumon::rules
