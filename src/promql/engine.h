// The PromQL engine: evaluates instant and range queries over a Queryable
// (the TSDB) with Prometheus 3.x semantics.
//
// Contract:
// - Instant query at t: selectors look back `lookback_delta` (default 5m)
//   for the newest sample in (t - lookback, t]; a stale marker as newest
//   sample hides the series. Range selectors are left-open: (t - range, t].
// - Range query [start, end] step s: the result is a Matrix with one point
//   per step where the expression has a value; equal to evaluating the
//   instant query at every step.
// - Subqueries evaluate their inner expression at absolute times aligned
//   to multiples of the subquery step (default: options.default_eval_step).
// - @ start()/end() resolve to the query's start/end; @ and offset shift the
//   data, not the output timestamps.
// - Limits fail the query with Prometheus's error types: a query running
//   past `timeout` → kTimeout ("query timed out in <stage>"); a query whose
//   QueryOptions::cancel is raised → kCanceled ("query was canceled in
//   <stage>"); more than `max_samples` samples held at once → kExecution
//   ("query processing would load too many samples into memory in
//   <stage>"); more than `max_concurrent` queries at once wait (up to the
//   timeout, or until cancelled), as Prometheus's active query tracker
//   does. Stages: "query queue", "expression evaluation".
// - Limits bind inside the evaluation, not only between operations: every
//   loop over steps, series, samples or windows polls the deadline and the
//   cancellation (a clock read per few thousand iterations), and every
//   sample loaded from storage or point of an intermediate result is
//   counted as it is produced, so stats.peak_samples never exceeds
//   max_samples and memory stays proportional to it, whatever the step
//   count of a subquery ([100y:1ms]).
// - No exception leaves the engine: storage failures and std::exception
//   are kInternal, running out of memory (std::bad_alloc, length_error)
//   is kExecution.
// - Evaluation errors (e.g. "vector cannot contain metrics with the same
//   labelset") are kExecution; a parse error is kBadData.
// - Per-query QueryOptions override the engine's settings for one query,
//   as Prometheus's query options and request context do: the timeout is
//   min(query timeout, engine timeout) (0 fails at once); a lookback delta
//   > 0 replaces the engine's.
// - Native histograms are not supported; nothing in the store holds them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/cancellation.h"
#include "promql/ast.h"
#include "promql/value.h"
#include "tsdb/storage.h"

namespace gpumon::promql {

// Opens a querier covering [mint, maxt] (ms, inclusive).
using Queryable = std::function<std::unique_ptr<tsdb::Querier>(int64_t mint, int64_t maxt)>;

// Overrides for one query; unset fields keep the engine's options.
struct QueryOptions {
  std::optional<int64_t> timeout_ms;  // capped at EngineOptions::timeout_ms
  int64_t lookback_delta_ms = 0;      // <= 0: the engine's lookback delta
  // Raised by whoever waits for the result (the HTTP server when the
  // client hangs up) to stop the query; must outlive the call.
  const Cancellation* cancel = nullptr;
};

struct EngineOptions {
  int64_t lookback_delta_ms = 5 * 60 * 1000;
  int64_t default_eval_step_ms = 60 * 1000;  // subqueries without a step
  int64_t timeout_ms = 2 * 60 * 1000;
  int64_t max_samples = 50'000'000;
  int max_concurrent = 20;
};

// Error kinds, named as in Prometheus's HTTP API ("errorType").
enum class ErrorType { kNone, kTimeout, kCanceled, kExecution, kBadData, kInternal };
const char* ErrorTypeName(
    ErrorType t);  // "timeout", "canceled", "execution", "bad_data", "internal"

struct QueryStats {
  int64_t samples_loaded = 0;  // total samples read from storage
  int64_t peak_samples = 0;    // most samples held at once (<= max_samples)
};

struct QueryResult {
  ErrorType error_type = ErrorType::kNone;
  std::string error;  // message when error_type != kNone
  Value value;        // instant: Scalar/String/Vector/Matrix; range: Matrix
  Annotations annotations;
  QueryStats stats;
  bool ok() const { return error_type == ErrorType::kNone; }
};

class Engine {
 public:
  explicit Engine(EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  QueryResult Instant(const Queryable& q, std::string_view query, int64_t ts_ms,
                      const QueryOptions& qopts = {});
  QueryResult Range(const Queryable& q, std::string_view query, int64_t start_ms, int64_t end_ms,
                    int64_t step_ms, const QueryOptions& qopts = {});

  // Same, for an already parsed expression.
  QueryResult InstantExpr(const Queryable& q, const Expr& expr, int64_t ts_ms,
                          const QueryOptions& qopts = {});
  QueryResult RangeExpr(const Queryable& q, const Expr& expr, int64_t start_ms, int64_t end_ms,
                        int64_t step_ms, const QueryOptions& qopts = {});

  const EngineOptions& options() const { return opts_; }
  // The engine's options with `qopts` applied.
  EngineOptions Effective(const QueryOptions& qopts) const;

 private:
  struct Impl;
  EngineOptions opts_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpumon::promql
