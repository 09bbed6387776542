// The tree walk: dispatch per node type, literals, unary minus and function
// calls (per step for instant-vector arguments; per series and step with a
// sliding window for range-vector arguments).
#include "promql/engine/evaluator.h"

#include <cmath>
#include <limits>

#include "promql/function_table.h"
#include "promql/functions.h"

namespace gpumon::promql::engine_internal {
namespace {

const Expr& Unparen(const Expr& e) {
  const Expr* p = &e;
  while (const auto* paren = std::get_if<Paren>(&p->node)) p = paren->expr.get();
  return *p;
}

FunctionImpl MustFindImpl(std::string_view name) {
  FunctionImpl fn = FindFunctionImpl(name);
  if (fn == nullptr) {
    if (name == "info") FailExec("function \"info\" is not supported");
    FailExec("function \"" + std::string(name) + "\" is not implemented");
  }
  return fn;
}

bool IsSortFunction(std::string_view name) {
  return name == "sort" || name == "sort_desc" || name == "sort_by_label" ||
         name == "sort_by_label_desc";
}

// Labels absent()/absent_over_time() give their result: the equality
// matchers of the selector (a label matched twice is left out).
Labels AbsentLabels(const Expr& arg) {
  const Expr& e = Unparen(arg);
  const VectorSelector* vs = std::get_if<VectorSelector>(&e.node);
  if (const auto* ms = std::get_if<MatrixSelector>(&e.node)) {
    vs = std::get_if<VectorSelector>(&ms->selector->node);
  }
  if (vs == nullptr) return Labels();
  std::vector<Label> items;
  std::vector<std::string> seen;
  for (const auto& m : vs->matchers) {
    if (m.name() == kMetricName) continue;
    const bool has = std::find(seen.begin(), seen.end(), m.name()) != seen.end();
    if (m.type() == tsdb::MatchType::kEqual && !has) {
      items.push_back(Label{m.name(), m.value()});
      seen.push_back(m.name());
    } else {
      std::erase_if(items, [&](const Label& l) { return l.name == m.name(); });
    }
  }
  return Labels::FromUnsorted(std::move(items));
}

}  // namespace

Matrix Evaluator::Eval(const Expr& e, std::string* str) {
  ctx_.CheckInterrupt();
  if (end_ < start_) return {};
  return std::visit(
      [&](const auto& n) -> Matrix {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, NumberLiteral>) {
          return EvalNumber(n.value);
        } else if constexpr (std::is_same_v<T, StringLiteral>) {
          if (str != nullptr) *str = n.value;
          return {};
        } else if constexpr (std::is_same_v<T, VectorSelector>) {
          return EvalVectorSelector(n);
        } else if constexpr (std::is_same_v<T, MatrixSelector>) {
          if (!IsInstant())
            Fail(ErrorType::kInternal, "cannot do range evaluation of matrix selector");
          return EvalMatrixSelectorInstant(n);
        } else if constexpr (std::is_same_v<T, Subquery>) {
          return EvalSubqueryValue(n);
        } else if constexpr (std::is_same_v<T, Paren>) {
          return Eval(*n.expr, str);
        } else if constexpr (std::is_same_v<T, Unary>) {
          return EvalUnary(n);
        } else if constexpr (std::is_same_v<T, Binary>) {
          return EvalBinary(n);
        } else if constexpr (std::is_same_v<T, Aggregate>) {
          return EvalAggregate(n);
        } else {
          static_assert(std::is_same_v<T, Call>);
          return EvalCall(e, n);
        }
      },
      e.node);
}

Matrix Evaluator::EvalNumber(double v) {
  // The size is known up front: charge it before allocating anything, so
  // vector(1)[1d:1ms] fails at once instead of after filling memory.
  const int64_t n = NumSteps();
  ctx_.AddSamples(n);
  Matrix m(1);
  auto& pts = m[0].points;
  pts.reserve(ReserveFor(n));
  LoopMeter meter(ctx_);
  for (int64_t ts = start_; ts <= end_; ts += interval_) {
    meter.Tick();
    pts.push_back(FPoint{ts, v});
  }
  meter.Flush();
  return m;
}

std::vector<double> Evaluator::EvalScalarSteps(const Expr& e) {
  const int64_t before = ctx_.current_samples;
  // The dense per-step array holds a value per step, as the scalar's
  // matrix does; it stays charged until the caller releases its inputs.
  const int64_t n = NumSteps();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (const auto* num = std::get_if<NumberLiteral>(&Unparen(e).node)) {
    ctx_.AddSamples(n);
    return std::vector<double>(static_cast<size_t>(n), num->value);
  }
  Matrix m = Eval(e);
  ctx_.AddSamples(n);
  std::vector<double> v(static_cast<size_t>(n), kNaN);
  if (!m.empty()) {
    for (const auto& p : m[0].points) v[static_cast<size_t>((p.t - start_) / interval_)] = p.f;
  }
  ctx_.SetSamples(before + n);
  return v;
}

Matrix Evaluator::EvalUnary(const Unary& u) {
  Matrix m = Eval(*u.expr);
  if (!u.negate) return m;
  for (auto& s : m) {
    s.metric = DropMetricName(s.metric);
    for (auto& p : s.points) p.f = -p.f;
  }
  return MergeSameLabelset(std::move(m));
}

Matrix Evaluator::EvalCall(const Expr& e, const Call& c) {
  const std::string_view name = c.func->name;
  // Functions of the query itself, constant over the whole query (as
  // Prometheus folds them into literals before evaluation).
  if (c.args.empty() && FindFunctionImpl(name) == nullptr) {
    if (name == "start") return EvalNumber(static_cast<double>(ctx_.query_start) / 1000);
    if (name == "end") return EvalNumber(static_cast<double>(ctx_.query_end) / 1000);
    if (name == "range") {
      return EvalNumber(static_cast<double>(ctx_.query_end - ctx_.query_start) / 1000);
    }
    if (name == "step") return EvalNumber(static_cast<double>(ctx_.query_step) / 1000);
  }
  if (name == "timestamp" && !c.args.empty()) {
    if (const auto* vs = std::get_if<VectorSelector>(&Unparen(*c.args[0]).node)) {
      return EvalTimestampOfSelector(c, *vs);
    }
  }
  for (size_t i = 0; i < c.args.size(); ++i) {
    const auto& node = Unparen(*c.args[i]).node;
    if (std::holds_alternative<MatrixSelector>(node) || std::holds_alternative<Subquery>(node)) {
      return EvalRangeCall(c, static_cast<int>(i));
    }
  }
  return EvalInstantCall(e, c);
}

Matrix Evaluator::EvalInstantCall(const Expr& e, const Call& c) {
  const std::string_view name = c.func->name;
  const FunctionImpl fn = MustFindImpl(name);
  if (IsSortFunction(name) && !IsInstant()) {
    ctx_.annotations.AddWarning(
        "PromQL warning: sort is ineffective for range queries since results are always ordered "
        "by labels");
  }
  const int64_t before = ctx_.current_samples;
  const size_t nargs = c.args.size();
  std::vector<Value> args(nargs);
  std::vector<Matrix> vec_args(nargs);
  std::vector<std::vector<double>> scalar_args(nargs);
  std::vector<ValueType> types(nargs);
  for (size_t i = 0; i < nargs; ++i) {
    types[i] = c.args[i]->Type();
    switch (types[i]) {
      case ValueType::kString: {
        std::string s;
        Eval(*c.args[i], &s);
        args[i] = String{start_, std::move(s)};
        break;
      }
      case ValueType::kScalar:
        scalar_args[i] = EvalScalarSteps(*c.args[i]);
        args[i] = Scalar{};
        break;
      default:
        vec_args[i] = Eval(*c.args[i]);
        args[i] = Vector{};
        break;
    }
  }
  std::vector<StepCursor> cursors;
  cursors.reserve(nargs);
  for (size_t i = 0; i < nargs; ++i) cursors.emplace_back(vec_args[i]);

  const bool scalar_result = e.Type() == ValueType::kScalar;
  Matrix scalar_out(scalar_result ? 1 : 0);
  if (scalar_result) scalar_out[0].points.reserve(ReserveFor(NumSteps()));
  SeriesCollector col(ctx_, NumSteps());
  Vector out;
  FunctionArgs fa;
  fa.args = args;
  fa.call = &c;
  fa.annotations = &ctx_.annotations;
  size_t step = 0;
  int64_t arg_series = 0;
  for (const auto& m : vec_args) arg_series += static_cast<int64_t>(m.size());
  for (int64_t ts = start_; ts <= end_; ts += interval_, ++step) {
    ctx_.Poll(1 + arg_series);
    for (size_t i = 0; i < nargs; ++i) {
      if (types[i] == ValueType::kScalar) {
        args[i] = Scalar{ts, scalar_args[i][step]};
      } else if (types[i] == ValueType::kString) {
        std::get<String>(args[i]).t = ts;
      } else if (types[i] != ValueType::kString) {
        Vector& v = std::get<Vector>(args[i]);
        v.clear();
        const Matrix& m = vec_args[i];
        double f;
        for (size_t s = 0; s < m.size(); ++s) {
          if (cursors[i].At(s, ts, &f)) v.push_back(Sample{m[s].metric, ts, f});
        }
      }
    }
    out.clear();
    fa.ts = ts;
    Status st = fn(fa, out);
    if (!st.ok()) FailExec(st.message());
    if (scalar_result) {
      ctx_.AddSample();
      scalar_out[0].points.push_back(
          FPoint{ts, out.empty() ? std::numeric_limits<double>::quiet_NaN() : out[0].f});
    } else {
      for (const auto& s : out) col.Add(s.metric, ts, s.f);
    }
  }
  Matrix res = scalar_result ? std::move(scalar_out) : col.Take();
  ctx_.SetSamples(before + TotalPoints(res));
  return res;
}

Matrix Evaluator::EvalRangeCall(const Call& c, int range_arg) {
  const std::string_view name = c.func->name;
  const int64_t before = ctx_.current_samples;
  const Expr& arg = Unparen(*c.args[static_cast<size_t>(range_arg)]);
  RangeInput in = std::holds_alternative<MatrixSelector>(arg.node)
                      ? LoadMatrixSelector(std::get<MatrixSelector>(arg.node))
                      : EvalSubqueryInput(std::get<Subquery>(arg.node));
  if (name == "absent_over_time") {
    Matrix m = EvalAbsentOverTime(c, in);
    ctx_.SetSamples(before + TotalPoints(m));
    return m;
  }
  const FunctionImpl fn = MustFindImpl(name);

  const size_t nargs = c.args.size();
  std::vector<Value> args(nargs);
  std::vector<std::vector<double>> scalar_args(nargs);
  std::vector<ValueType> types(nargs);
  for (size_t i = 0; i < nargs; ++i) {
    if (static_cast<int>(i) == range_arg) {
      args[i] = Matrix(1);
      types[i] = ValueType::kMatrix;
      continue;
    }
    types[i] = c.args[i]->Type();
    if (types[i] == ValueType::kString) {
      std::string s;
      Eval(*c.args[i], &s);
      args[i] = String{start_, std::move(s)};
    } else if (types[i] == ValueType::kScalar) {
      scalar_args[i] = EvalScalarSteps(*c.args[i]);
      args[i] = Scalar{};
    } else {
      FailExec("unsupported argument type for function " + std::string(name));
    }
  }
  Series& window = std::get<Matrix>(args[static_cast<size_t>(range_arg)])[0];

  const int64_t steps = NumSteps();
  Matrix res;
  // Functions with a batch form (deriv, predict_linear) take all windows
  // of a series in one call.
  const BatchRangeImpl batch = FindBatchRangeImpl(name);
  const bool use_batch = batch != nullptr && range_arg == 0 && nargs <= 2 &&
                         (nargs < 2 || types[1] == ValueType::kScalar);
  std::vector<BatchWindow> windows;
  LoopMeter meter(ctx_);
  for (auto& s : in.series) {
    if (!use_batch) break;
    const auto& pts = s.points;
    windows.clear();
    size_t lo = 0, hi = 0;
    size_t step = 0;
    for (int64_t ts = start_; ts <= end_; ts += interval_, ++step) {
      const int64_t ref = (in.at_ms ? *in.at_ms : ts) - in.offset_ms;
      while (hi < pts.size() && pts[hi].t <= ref) ++hi;
      while (lo < hi && pts[lo].t <= ref - in.range_ms) ++lo;
      if (lo >= hi) {
        meter.Tick();
        continue;
      }
      // The window descriptors are held until the batch call returns; the
      // points they view were charged when loaded.
      meter.Tick(1);
      BatchWindow w;
      w.ts = ts;
      w.begin = lo;
      w.end = hi;
      if (nargs == 2) w.scalar = scalar_args[1][step];
      windows.push_back(w);
    }
    meter.Flush();
    ctx_.Poll(static_cast<int64_t>(pts.size()));
    batch(pts, windows);
    Series o;
    for (const BatchWindow& w : windows) {
      if (!w.has_value) continue;
      if (o.points.empty()) o.points.reserve(windows.size());
      meter.Tick(1);
      o.points.push_back(FPoint{w.ts, w.value});
    }
    meter.Flush();
    ctx_.ReleaseSamples(static_cast<int64_t>(windows.size()));
    if (!o.points.empty()) {
      o.metric = DropMetricName(s.metric);
      res.push_back(std::move(o));
    }
  }
  Vector out;
  FunctionArgs fa;
  fa.args = args;
  fa.call = &c;
  fa.annotations = &ctx_.annotations;
  fa.window_metric = &window.metric;
  for (auto& s : in.series) {
    if (use_batch) break;
    const auto& pts = s.points;
    window.metric = s.metric;
    bool name_dropped_by_fn = false;  // learnt from the first output
    Series o;
    size_t lo = 0, hi = 0;
    size_t step = 0;
    for (int64_t ts = start_; ts <= end_; ts += interval_, ++step) {
      const int64_t ref = (in.at_ms ? *in.at_ms : ts) - in.offset_ms;
      const int64_t from = ref - in.range_ms;
      while (hi < pts.size() && pts[hi].t <= ref) ++hi;
      while (lo < hi && pts[lo].t <= from) ++lo;
      if (lo >= hi) {
        meter.Tick();
        continue;
      }
      // The function sees the window as a view into the loaded points
      // (functions.h), not a per-step copy, so it costs no more samples.
      fa.window_points = std::span<const FPoint>(pts.data() + lo, hi - lo);
      for (size_t i = 0; i < nargs; ++i) {
        if (types[i] == ValueType::kScalar) {
          args[i] = Scalar{ts, scalar_args[i][step]};
        } else if (types[i] == ValueType::kString) {
          std::get<String>(args[i]).t = ts;
        }
      }
      out.clear();
      fa.ts = ts;
      fa.range_start = from;
      fa.range_end = ref;
      Status st = fn(fa, out);
      if (!st.ok()) FailExec(st.message());
      // Most functions walk the whole window.
      const int64_t work = 1 + static_cast<int64_t>(hi - lo);
      if (out.empty()) {
        meter.Tick(0, work);
        continue;
      }
      if (o.points.empty()) {
        o.metric = out[0].metric;
        o.points.reserve(ReserveFor(steps - static_cast<int64_t>(step)));
        // Once a function is seen to drop the metric name, hand it the
        // series without one: the result is the same and the function
        // need not build a new label set per step.
        if (!name_dropped_by_fn && s.metric.Has(kMetricName) && !o.metric.Has(kMetricName)) {
          name_dropped_by_fn = true;
          window.metric = o.metric == DropMetricName(s.metric) ? o.metric : s.metric;
        }
      }
      meter.Tick(1, work);
      o.points.push_back(FPoint{ts, out[0].f});
    }
    meter.Flush();
    if (!o.points.empty()) res.push_back(std::move(o));
  }
  // Different input series may map to the same output series.
  LabelsIndex idx;
  for (const auto& s : res) {
    bool inserted = false;
    idx.FindOrInsert(s.metric, &inserted);
    if (!inserted) FailExec("vector cannot contain metrics with the same labelset");
  }
  ctx_.SetSamples(before + TotalPoints(res));
  return res;
}

Matrix Evaluator::EvalAbsentOverTime(const Call& c, const RangeInput& in) {
  // One window cursor per series, advanced step by step. A cursor skipped
  // at a step (once a window was found non-empty) catches up later: both
  // bounds only move forward as the reference time grows.
  const size_t n = in.series.size();
  std::vector<size_t> lo(n, 0), hi(n, 0);
  Series o;
  for (int64_t ts = start_; ts <= end_; ts += interval_) {
    ctx_.Poll(1 + static_cast<int64_t>(n));
    const int64_t ref = (in.at_ms ? *in.at_ms : ts) - in.offset_ms;
    bool present = false;
    for (size_t i = 0; i < n && !present; ++i) {
      const auto& pts = in.series[i].points;
      while (hi[i] < pts.size() && pts[hi[i]].t <= ref) ++hi[i];
      while (lo[i] < hi[i] && pts[lo[i]].t <= ref - in.range_ms) ++lo[i];
      present = lo[i] < hi[i];
    }
    if (present) continue;
    ctx_.AddSample();
    o.points.push_back(FPoint{ts, 1});
  }
  Matrix m;
  if (!o.points.empty()) {
    o.metric = AbsentLabels(*c.args[0]);
    m.push_back(std::move(o));
  }
  return m;
}

}  // namespace gpumon::promql::engine_internal
