// Loading series for selectors: one Select per selector over the whole time
// range the evaluator needs, then per-step lookups with monotonic cursors.
// Instant selectors take the newest sample in (ref - lookback, ref] unless
// it is a stale marker; range windows are left-open (ref - range, ref].
#include <algorithm>

#include "promql/engine/evaluator.h"
#include "promql/functions.h"
#include "tsdb/sample.h"

namespace gpumon::promql::engine_internal {

std::optional<int64_t> Evaluator::ResolveAt(AtModifier at, int64_t at_ms) const {
  switch (at) {
    case AtModifier::kNone:
      return std::nullopt;
    case AtModifier::kTimestamp:
      return at_ms;
    case AtModifier::kStart:
      return ctx_.query_start;
    case AtModifier::kEnd:
      return ctx_.query_end;
  }
  return std::nullopt;
}

Matrix Evaluator::LoadSeries(const VectorSelector& vs, int64_t mint, int64_t maxt,
                             bool drop_stale) {
  ctx_.CheckDeadline();
  Matrix out;
  if (maxt < mint) return out;
  if (ctx_.querier == nullptr) Fail(ErrorType::kInternal, "no storage to select series from");
  auto set = ctx_.querier->Select(vs.matchers, tsdb::SelectHints{});
  if (!set) return out;
  int64_t loaded = 0;
  size_t size_hint = 0;  // series of one selector tend to have alike sizes
  while (set->Next()) {
    ctx_.MaybeCheckDeadline();
    Series s;
    s.metric = set->labels();
    s.points.reserve(size_hint);
    auto it = set->Iterator();
    if (it && it->Seek(mint)) {
      do {
        const tsdb::Sample smp = it->At();
        if (smp.t > maxt) break;
        if (drop_stale && tsdb::IsStaleNaN(smp.v)) continue;
        s.points.push_back(FPoint{smp.t, smp.v});
      } while (it->Next());
    }
    if (it && !it->status().ok()) Fail(ErrorType::kInternal, it->status().message());
    loaded += static_cast<int64_t>(s.points.size());
    size_hint = s.points.size() + 1;
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  if (!set->status().ok()) Fail(ErrorType::kInternal, set->status().message());
  ctx_.stats.samples_loaded += loaded;
  return out;
}

Matrix Evaluator::EvalVectorSelector(const VectorSelector& vs) {
  const auto at = ResolveAt(vs.at, vs.at_ms);
  const int64_t lookback = ctx_.opts.lookback_delta_ms;
  const int64_t ref_lo = (at ? *at : start_) - vs.offset_ms;
  const int64_t ref_hi = (at ? *at : end_) - vs.offset_ms;
  const int64_t mint = ref_lo - lookback + 1;
  ctx_.CheckDeadline();
  Matrix out;
  if (ref_hi < mint) return out;
  if (ctx_.querier == nullptr) Fail(ErrorType::kInternal, "no storage to select series from");
  auto set = ctx_.querier->Select(vs.matchers, tsdb::SelectHints{});
  if (!set) return out;
  const size_t steps = static_cast<size_t>(NumSteps());
  int64_t emitted = 0, loaded = 0;
  // Samples stream from the iterator straight into step values: each step
  // takes the newest sample at or before its reference time.
  while (set->Next()) {
    ctx_.MaybeCheckDeadline();
    auto it = set->Iterator();
    if (!it) continue;
    bool has = it->Seek(mint);
    tsdb::Sample cur = has ? it->At() : tsdb::Sample{};
    tsdb::Sample last;
    bool has_last = false;
    Series o;
    for (int64_t ts = start_; ts <= end_; ts += interval_) {
      const int64_t ref = (at ? *at : ts) - vs.offset_ms;
      while (has && cur.t <= ref) {
        last = cur;
        has_last = true;
        ++loaded;
        has = it->Next();
        if (has) cur = it->At();
      }
      if (!has_last || last.t <= ref - lookback || tsdb::IsStaleNaN(last.v)) continue;
      if (o.points.empty()) o.points.reserve(steps);
      o.points.push_back(FPoint{ts, last.v});
    }
    if (!it->status().ok()) Fail(ErrorType::kInternal, it->status().message());
    if (!o.points.empty()) {
      emitted += static_cast<int64_t>(o.points.size());
      o.metric = set->labels();
      out.push_back(std::move(o));
    }
  }
  if (!set->status().ok()) Fail(ErrorType::kInternal, set->status().message());
  ctx_.stats.samples_loaded += loaded;
  ctx_.AddSamples(emitted);
  return out;
}

Matrix Evaluator::EvalTimestampOfSelector(const Call& c, const VectorSelector& vs) {
  const FunctionImpl fn = FindFunctionImpl("timestamp");
  if (fn == nullptr) FailExec("function \"timestamp\" is not implemented");
  const auto at = ResolveAt(vs.at, vs.at_ms);
  const int64_t lookback = ctx_.opts.lookback_delta_ms;
  const int64_t ref_lo = (at ? *at : start_) - vs.offset_ms;
  const int64_t ref_hi = (at ? *at : end_) - vs.offset_ms;
  Matrix raw = LoadSeries(vs, ref_lo - lookback + 1, ref_hi, /*drop_stale=*/false);
  std::vector<size_t> pos(raw.size(), 0);
  std::vector<Value> args(1, Vector{});
  Vector out;
  SeriesCollector col(NumSteps());
  for (int64_t ts = start_; ts <= end_; ts += interval_) {
    ctx_.CheckDeadline();
    const int64_t ref = (at ? *at : ts) - vs.offset_ms;
    Vector& in = std::get<Vector>(args[0]);
    in.clear();
    for (size_t i = 0; i < raw.size(); ++i) {
      const auto& pts = raw[i].points;
      size_t& p = pos[i];
      while (p < pts.size() && pts[p].t <= ref) ++p;
      if (p == 0) continue;
      const FPoint& last = pts[p - 1];
      if (last.t <= ref - lookback || tsdb::IsStaleNaN(last.f)) continue;
      in.push_back(Sample{raw[i].metric, last.t, last.f});
    }
    ctx_.AddSamples(static_cast<int64_t>(in.size()));
    ctx_.current_samples -= static_cast<int64_t>(in.size());
    out.clear();
    FunctionArgs fa;
    fa.args = args;
    fa.call = &c;
    fa.ts = ts;
    fa.annotations = &ctx_.annotations;
    Status st = fn(fa, out);
    if (!st.ok()) FailExec(st.message());
    for (const auto& s : out) col.Add(s.metric, ts, s.f);
  }
  Matrix m = col.Take();
  ctx_.AddSamples(TotalPoints(m));
  return m;
}

RangeInput Evaluator::LoadMatrixSelector(const MatrixSelector& ms) {
  const auto& vs = std::get<VectorSelector>(ms.selector->node);
  RangeInput in;
  in.range_ms = ms.range_ms;
  in.offset_ms = vs.offset_ms;
  in.at_ms = ResolveAt(vs.at, vs.at_ms);
  const int64_t ref_lo = (in.at_ms ? *in.at_ms : start_) - vs.offset_ms;
  const int64_t ref_hi = (in.at_ms ? *in.at_ms : end_) - vs.offset_ms;
  in.series = LoadSeries(vs, ref_lo - ms.range_ms + 1, ref_hi, /*drop_stale=*/true);
  return in;
}

Matrix Evaluator::EvalMatrixSelectorInstant(const MatrixSelector& ms) {
  RangeInput in = LoadMatrixSelector(ms);
  // The load already restricted every series to the single window.
  ctx_.AddSamples(TotalPoints(in.series));
  return std::move(in.series);
}

namespace {

struct PathState {
  int64_t sub_offset = 0;
  int64_t sub_range = 0;
  std::optional<int64_t> sub_at;
};

struct MinMax {
  int64_t start, end, lookback;
  int64_t mint = INT64_MAX;
  int64_t maxt = INT64_MIN;

  std::optional<int64_t> Resolve(AtModifier at, int64_t at_ms) const {
    switch (at) {
      case AtModifier::kNone:
        return std::nullopt;
      case AtModifier::kTimestamp:
        return at_ms;
      case AtModifier::kStart:
        return start;
      case AtModifier::kEnd:
        return end;
    }
    return std::nullopt;
  }

  void Walk(const Expr& e, const PathState& st, int64_t eval_range) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, VectorSelector>) {
            int64_t s = start, en = end;
            if (st.sub_at) s = en = *st.sub_at;
            if (auto at = Resolve(n.at, n.at_ms)) {
              s = en = *at;
            } else {
              s -= st.sub_offset + st.sub_range;
              en -= st.sub_offset;
            }
            s -= (eval_range == 0 ? lookback : eval_range) - 1;
            s -= n.offset_ms;
            en -= n.offset_ms;
            mint = std::min(mint, s);
            maxt = std::max(maxt, en);
          } else if constexpr (std::is_same_v<T, MatrixSelector>) {
            Walk(*n.selector, st, n.range_ms);
          } else if constexpr (std::is_same_v<T, Subquery>) {
            PathState inner = st;
            inner.sub_offset += n.offset_ms;
            inner.sub_range += n.range_ms;
            if (auto at = Resolve(n.at, n.at_ms)) {
              inner.sub_offset = n.offset_ms;
              inner.sub_range = n.range_ms;
              inner.sub_at = at;
            }
            Walk(*n.expr, inner, 0);
          } else if constexpr (std::is_same_v<T, Paren> || std::is_same_v<T, Unary>) {
            Walk(*n.expr, st, 0);
          } else if constexpr (std::is_same_v<T, Binary>) {
            Walk(*n.lhs, st, 0);
            Walk(*n.rhs, st, 0);
          } else if constexpr (std::is_same_v<T, Aggregate>) {
            Walk(*n.expr, st, 0);
            if (n.param) Walk(*n.param, st, 0);
          } else if constexpr (std::is_same_v<T, Call>) {
            for (const auto& a : n.args) Walk(*a, st, 0);
          }
        },
        e.node);
  }
};

}  // namespace

void FindMinMaxTime(const Expr& e, int64_t start, int64_t end, int64_t lookback_ms, int64_t* mint,
                    int64_t* maxt) {
  MinMax mm{start, end, lookback_ms};
  mm.Walk(e, PathState{}, 0);
  if (mm.maxt == INT64_MIN) {
    *mint = 0;
    *maxt = 0;
    return;
  }
  *mint = mm.mint;
  *maxt = mm.maxt;
}

}  // namespace gpumon::promql::engine_internal
