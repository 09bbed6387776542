// Implementations of PromQL functions, looked up by name
// (function_table.h holds the signatures the parser checks).
//
// Calling convention (the engine's side):
// - An instant-vector function is called once per evaluation step with its
//   arguments evaluated at that step: Vector for vector arguments, Scalar
//   for scalars, String for string literals.
// - A function with a range-vector argument (matrix selector or subquery)
//   is called once per step *and per series*: that argument is a Matrix
//   holding one Series whose points lie in the window (range_start,
//   range_end] (left-open), other arguments as above. absent_over_time and
//   present_over_time get the same. The engine may instead hand the window
//   as a view (window_metric/window_points, below) with that Series
//   holding no points, which saves a copy of the window per step; the
//   functions read either through one accessor.
// - The function appends its results to `out` and may raise annotations.
//   It drops the metric name where Prometheus does (most functions;
//   not last_over_time, first_over_time, sort*, label_*, clamp*... — as in
//   Prometheus 3.x with delayed name removal off).
// - Errors (e.g. label_replace with an invalid regex or target label) are
//   returned as a Status and fail the query with that message.
#pragma once

#include <cstdint>
#include <span>

#include "common/status.h"
#include "promql/ast.h"
#include "promql/value.h"

namespace gpumon::promql {

struct FunctionArgs {
  std::span<const Value> args;  // one per argument of the call
  const Call* call = nullptr;   // the AST node (string args, selector matchers)
  int64_t ts = 0;               // evaluation time of this step (ms)
  // The window of the range argument (after offset and @), when there is
  // one: points are in (range_start, range_end].
  int64_t range_start = 0;
  int64_t range_end = 0;
  Annotations* annotations = nullptr;
  // When window_metric is set: the range argument's series labels and its
  // points in the window, viewing the engine's loaded series (valid for
  // this call only). Unset, the Matrix argument holds the window.
  const Labels* window_metric = nullptr;
  std::span<const FPoint> window_points;
};

using FunctionImpl = Status (*)(const FunctionArgs& args, Vector& out);

// nullptr for an unknown name (the engine reports "not implemented").
FunctionImpl FindFunctionImpl(std::string_view name);

// Batch form of a range function whose only other arguments are scalars:
// all windows of one series (a range query's steps) in one call, where
// evaluating windows together is cheaper. For each window it gives
// exactly the value the FunctionImpl gives, or none where that appends
// nothing; the result's labels are the series' without __name__, and no
// annotations are raised.
struct BatchWindow {
  int64_t ts = 0;    // evaluation time
  size_t begin = 0;  // the window: points[begin, end), non-empty
  size_t end = 0;
  double scalar = 0;       // the call's scalar argument at this step, if any
  bool has_value = false;  // out
  double value = 0;        // out
};
using BatchRangeImpl = void (*)(std::span<const FPoint> points, std::span<BatchWindow> windows);

// nullptr when the function has no batch form.
BatchRangeImpl FindBatchRangeImpl(std::string_view name);

}  // namespace gpumon::promql
