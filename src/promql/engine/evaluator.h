// Internal to the engine: the evaluator that walks an AST over a grid of
// steps [start, end] with a fixed interval, as Prometheus's evaluator does.
//
// Contract:
// - Every instant-vector or scalar expression evaluates to a Matrix whose
//   points lie on the evaluator's step grid (a scalar is one series without
//   labels and a point at every step). A string evaluates to a String.
//   Matrix-typed expressions (selectors, subqueries) are only evaluated
//   directly for instant queries and as function arguments.
// - Evaluation failures (limits, timeouts, Prometheus's runtime errors) are
//   thrown as EvalError and caught by Engine at the query boundary, the way
//   Prometheus's evaluator panics and recovers; they never leave the engine.
// - Samples are read once per selector for the whole evaluated range and
//   then walked per step with monotonic cursors.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/cancellation.h"
#include "common/labels.h"
#include "promql/ast.h"
#include "promql/engine.h"
#include "promql/value.h"
#include "tsdb/storage.h"

namespace gpumon::promql::engine_internal {

struct EvalError {
  ErrorType type = ErrorType::kExecution;
  std::string message;
};

[[noreturn]] void Fail(ErrorType type, std::string message);
[[noreturn]] inline void FailExec(std::string message) {
  Fail(ErrorType::kExecution, std::move(message));
}

// State shared by every evaluator of one query (subqueries spawn children).
//
// Limits are enforced where the work happens, so a query stops within a
// bounded amount of work after crossing one: every loop whose trip count
// the query controls (steps, series, samples, windows) calls Poll(), which
// reads the clock and the cancellation flag once per kPollWork units of
// work; every point or window materialised is charged to the sample budget
// as it is produced, not after the operation.
struct QueryContext {
  static constexpr int64_t kPollWork = 4096;

  const tsdb::Querier* querier = nullptr;
  EngineOptions opts;
  int64_t query_start = 0;  // resolves @ start()
  int64_t query_end = 0;    // resolves @ end()
  int64_t query_step = 0;   // 0 for instant queries
  std::chrono::steady_clock::time_point deadline;
  const Cancellation* cancel = nullptr;
  Annotations annotations;
  QueryStats stats;
  // Samples held by live intermediate results and inputs. The peak is
  // folded into stats.peak_samples whenever the count drops (and at the
  // end, NotePeak()), so charging one sample is an add and a compare.
  int64_t current_samples = 0;
  int64_t poll_budget = kPollWork;

  // Throws kCanceled once the query is cancelled, kTimeout once the
  // deadline has passed; `stage` names where, as in Prometheus's messages.
  void CheckInterrupt(const char* stage = "expression evaluation");
  // Cheap variant for loops: `work` is a rough count of elementary steps
  // done since the last call.
  void Poll(int64_t work = 1) {
    poll_budget -= work;
    if (poll_budget < 0) {
      poll_budget = kPollWork;
      CheckInterrupt();
    }
  }

  // Charges `n` more samples; throws (without charging) when that would go
  // over max_samples, so a refused charge never allocates.
  void AddSamples(int64_t n) {
    if (n > opts.max_samples - current_samples) FailTooManySamples();
    current_samples += n;
  }
  // One sample, for per-point loops.
  void AddSample() {
    if (current_samples >= opts.max_samples) FailTooManySamples();
    ++current_samples;
  }
  // Releases `n` samples charged earlier.
  void ReleaseSamples(int64_t n) {
    NotePeak();
    current_samples -= n;
  }
  // Sets the count (an operation keeping only its result); throws when
  // the new count is over the limit.
  void SetSamples(int64_t n);
  void NotePeak() {
    if (current_samples > stats.peak_samples) stats.peak_samples = current_samples;
  }
  [[noreturn]] void FailTooManySamples();
};

// Batches the polling and sample charging of a hot loop in local counters,
// handed to the context once per kBatch units of work, so each iteration
// costs an add and a compare. Points of a tick must not exceed its work.
// Call Flush() when the loop ends; until then up to kBatch points may be
// held uncharged (the slack of the sample limit, per loop).
class LoopMeter {
 public:
  static constexpr int64_t kBatch = 1024;
  explicit LoopMeter(QueryContext& ctx) : ctx_(ctx) {}
  // One iteration of about `work` elementary steps producing `points`.
  void Tick(int64_t points = 0, int64_t work = 1) {
    points_ += points;
    work_ += work;
    if (work_ >= kBatch) Flush();
  }
  void Flush() {
    ctx_.AddSamples(points_);
    points_ = 0;
    ctx_.Poll(work_);
    work_ = 0;
  }

 private:
  QueryContext& ctx_;
  int64_t points_ = 0;
  int64_t work_ = 0;
};

// Capacity to reserve for a series expected to get up to `n` points: all
// of them for ordinary range queries, a bounded amount for huge subquery
// grids (the vector grows as points are charged, so memory follows the
// sample budget rather than the step count).
inline size_t ReserveFor(int64_t n) {
  constexpr int64_t kMaxReserve = 16384;
  return static_cast<size_t>(std::clamp<int64_t>(n, 0, kMaxReserve));
}

// Maps label sets to dense indices, preserving insertion order; hash
// collisions are resolved by comparing the labels.
class LabelsIndex {
 public:
  // Returns the index of `l`, inserting it when new (*inserted says which).
  int FindOrInsert(const Labels& l, bool* inserted = nullptr);
  int Find(const Labels& l) const;
  const std::vector<Labels>& keys() const { return keys_; }
  size_t size() const { return keys_.size(); }

 private:
  std::unordered_map<uint64_t, int> head_;
  std::vector<int> next_;
  std::vector<Labels> keys_;
};

// Collects the per-step output of an operation into series, in first-seen
// order, and fails on two samples with the same labels at the same step.
// Every point added is charged to the query's sample budget.
class SeriesCollector {
 public:
  SeriesCollector(QueryContext& ctx, int64_t num_steps) : ctx_(ctx), num_steps_(num_steps) {}
  void Add(const Labels& metric, int64_t t, double f) { AddAt(IndexOf(metric), t, f); }
  // The output series for `metric`, created when new.
  int IndexOf(const Labels& metric);
  void AddAt(int i, int64_t t, double f);
  const Labels& metric(int i) const { return out_[static_cast<size_t>(i)].metric; }
  // The collected series, without those that never got a point.
  Matrix Take();

 private:
  QueryContext& ctx_;
  int64_t num_steps_;
  LabelsIndex index_;
  Matrix out_;
  std::vector<int64_t> last_t_;
};

// The series of a range argument (matrix selector or subquery) with the
// window each step sees: (ref - range, ref] where ref = (@ or step) - offset.
struct RangeInput {
  Matrix series;  // points ascending, stale markers removed
  int64_t range_ms = 0;
  int64_t offset_ms = 0;
  std::optional<int64_t> at_ms;
};

class Evaluator {
 public:
  Evaluator(QueryContext& ctx, int64_t start, int64_t end, int64_t interval)
      : ctx_(ctx), start_(start), end_(end), interval_(interval > 0 ? interval : 1) {}

  // Evaluates `e`; for a string expression `*str` receives the value and the
  // returned Matrix is empty.
  Matrix Eval(const Expr& e, std::string* str = nullptr);

  int64_t start() const { return start_; }
  int64_t end() const { return end_; }
  int64_t interval() const { return interval_; }
  // May exceed any memory for fine-grained subqueries ([100y:1ms]): size
  // nothing by it without charging the sample budget first.
  int64_t NumSteps() const {
    if (end_ < start_) return 0;
    return static_cast<int64_t>((static_cast<__int128>(end_) - start_) / interval_) + 1;
  }
  bool IsInstant() const { return start_ == end_; }
  QueryContext& ctx() { return ctx_; }

 private:
  // evaluator.cc
  Matrix EvalCall(const Expr& e, const Call& c);
  Matrix EvalInstantCall(const Expr& e, const Call& c);
  Matrix EvalRangeCall(const Call& c, int range_arg);
  Matrix EvalAbsentOverTime(const Call& c, const RangeInput& in);
  Matrix EvalUnary(const Unary& u);
  Matrix EvalNumber(double v);
  // Per-step scalar values of a scalar expression (NaN where missing).
  std::vector<double> EvalScalarSteps(const Expr& e);

  // selectors.cc
  // Resolves @ start()/end() to a timestamp.
  std::optional<int64_t> ResolveAt(AtModifier at, int64_t at_ms) const;
  // Reads the selected series over [mint, maxt]; stale markers are kept
  // unless drop_stale. With window_ms > 0, only samples some step sees in
  // its window (ref - window_ms, ref] (ref = step - offset; mint is the
  // first step's window start) are read: when steps are further apart than
  // the window, the gaps are skipped, so a coarse range query loads (and
  // charges) about steps x window, not the whole range.
  Matrix LoadSeries(const VectorSelector& vs, int64_t mint, int64_t maxt, bool drop_stale,
                    int64_t window_ms = 0);
  Matrix EvalVectorSelector(const VectorSelector& vs);
  // timestamp(selector): the sample times, not the step times.
  Matrix EvalTimestampOfSelector(const Call& c, const VectorSelector& vs);
  RangeInput LoadMatrixSelector(const MatrixSelector& ms);
  // Instant evaluation of a matrix-typed expression (raw points).
  Matrix EvalMatrixSelectorInstant(const MatrixSelector& ms);

  // subquery.cc
  RangeInput EvalSubqueryInput(const Subquery& sq);
  Matrix EvalSubqueryValue(const Subquery& sq);

  // binary.cc
  Matrix EvalBinary(const Binary& b);
  Matrix EvalVectorVector(const Binary& b, Matrix lhs, Matrix rhs);
  Matrix EvalVectorScalar(const Binary& b, Matrix vec, const std::vector<double>& scalar,
                          bool scalar_left);

  // aggregate.cc
  Matrix EvalAggregate(const Aggregate& a);
  Matrix EvalCountValues(const Aggregate& a, Matrix in);
  Matrix EvalAggregateK(const Aggregate& a, Matrix in, const std::vector<double>& params);

  QueryContext& ctx_;
  int64_t start_;
  int64_t end_;
  int64_t interval_;
};

// Walks a matrix whose points lie on a step grid, yielding per step the
// value of each series that has one.
class StepCursor {
 public:
  explicit StepCursor(const Matrix& m) : m_(m), pos_(m.size(), 0) {}
  // Value of series i at step t, if any; must be called with ascending t.
  bool At(size_t i, int64_t t, double* f) {
    const auto& pts = m_[i].points;
    size_t& p = pos_[i];
    while (p < pts.size() && pts[p].t < t) ++p;
    if (p < pts.size() && pts[p].t == t) {
      *f = pts[p].f;
      return true;
    }
    return false;
  }

 private:
  const Matrix& m_;
  std::vector<size_t> pos_;
};

// The label set `l` without __name__.
Labels DropMetricName(const Labels& l);
// Keeps (on) or drops (!on, also dropping __name__) the given labels.
Labels MatchLabels(const Labels& l, bool on, const std::vector<std::string>& names);
// Fails when two series share a label set; merges them first when their
// points do not overlap (Prometheus's behaviour after name dropping).
Matrix MergeSameLabelset(Matrix m);
int64_t TotalPoints(const Matrix& m);
// Go's strconv.Quote (invalid UTF-8 bytes as \xNN).
std::string GoQuote(std::string_view s);
// Prometheus's Labels.String(): {__name__="x", a="b"}.
std::string LabelsString(const Labels& l);
bool IsValidUtf8(std::string_view s);
// The time range [*mint, *maxt] that evaluating `e` over [start, end] may
// read, as Prometheus's FindMinMaxTime computes it; (0, 0) without
// selectors.
void FindMinMaxTime(const Expr& e, int64_t start, int64_t end, int64_t lookback_ms, int64_t* mint,
                    int64_t* maxt);
// Prometheus's Kahan-Neumaier increment.
inline void KahanInc(double inc, double& sum, double& c) {
  double t = sum + inc;
  if (__builtin_isinf(t)) {
    c = 0;
  } else if (__builtin_fabs(sum) >= __builtin_fabs(inc)) {
    c += (sum - t) + inc;
  } else {
    c += (inc - t) + sum;
  }
  sum = t;
}

}  // namespace gpumon::promql::engine_internal
