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

Matrix Evaluator::LoadSeries(const VectorSelector& vs, int64_t mint, int64_t maxt, bool drop_stale,
                             int64_t window_ms) {
  ctx_.CheckInterrupt();
  Matrix out;
  if (maxt < mint) return out;
  if (ctx_.querier == nullptr) Fail(ErrorType::kInternal, "no storage to select series from");
  auto set = ctx_.querier->Select(vs.matchers, tsdb::SelectHints{});
  if (!set) return out;
  // Windows with gaps between them (step > window): the first window ends
  // at mint + window - 1, the next ones a step later each.
  const bool gaps = window_ms > 0 && vs.at == AtModifier::kNone && interval_ > window_ms;
  const int64_t first_end = mint + window_ms - 1;
  int64_t loaded = 0;
  size_t size_hint = 0;  // series of one selector tend to have alike sizes
  LoopMeter meter(ctx_);
  while (set->Next()) {
    meter.Tick();
    Series s;
    s.metric = set->labels();
    s.points.reserve(size_hint);
    auto it = set->Iterator();
    // Loaded points are held for the whole evaluation of the selector's
    // parent: charged as they are decoded.
    int64_t window_end = first_end;
    bool more = it && it->Seek(mint);
    while (more) {
      const tsdb::Sample smp = it->At();
      if (smp.t > maxt) break;
      if (gaps && smp.t > window_end) {
        // The first window ending at or after the sample; samples before
        // its start are in no window: seek past them.
        window_end = first_end + ((smp.t - first_end + interval_ - 1) / interval_) * interval_;
        const int64_t window_start = window_end - window_ms + 1;
        if (smp.t < window_start) {
          meter.Tick();
          more = it->Seek(window_start);
          continue;
        }
      }
      if (!drop_stale || !tsdb::IsStaleNaN(smp.v)) {
        meter.Tick(1);
        s.points.push_back(FPoint{smp.t, smp.v});
      } else {
        meter.Tick();
      }
      more = it->Next();
    }
    meter.Flush();
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
  ctx_.CheckInterrupt();
  Matrix out;
  if (ref_hi < mint) return out;
  if (ctx_.querier == nullptr) Fail(ErrorType::kInternal, "no storage to select series from");
  auto set = ctx_.querier->Select(vs.matchers, tsdb::SelectHints{});
  if (!set) return out;
  const int64_t steps = NumSteps();
  int64_t loaded = 0;
  // Samples stream from the iterator straight into step values: each step
  // takes the newest sample at or before its reference time.
  LoopMeter meter(ctx_);
  while (set->Next()) {
    meter.Tick();
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
      if (!has_last || last.t <= ref - lookback || tsdb::IsStaleNaN(last.v)) {
        // No value at this step. With @ every step is alike, and with no
        // sample left none can follow; otherwise jump to the first step
        // that sees the next sample, which keeps sparse series cheap under
        // fine subquery grids ([30d:1ms]).
        meter.Tick();
        if (at || !has) break;
        const int64_t next = cur.t + vs.offset_ms;
        if (next > ts + interval_) ts = start_ + ((next - start_ - 1) / interval_) * interval_;
        continue;
      }
      if (o.points.empty()) o.points.reserve(ReserveFor(steps));
      meter.Tick(1);
      o.points.push_back(FPoint{ts, last.v});
    }
    meter.Flush();
    if (!it->status().ok()) Fail(ErrorType::kInternal, it->status().message());
    if (!o.points.empty()) {
      o.metric = set->labels();
      out.push_back(std::move(o));
    }
  }
  if (!set->status().ok()) Fail(ErrorType::kInternal, set->status().message());
  ctx_.stats.samples_loaded += loaded;
  return out;
}

Matrix Evaluator::EvalTimestampOfSelector(const Call& c, const VectorSelector& vs) {
  const FunctionImpl fn = FindFunctionImpl("timestamp");
  if (fn == nullptr) FailExec("function \"timestamp\" is not implemented");
  const auto at = ResolveAt(vs.at, vs.at_ms);
  const int64_t lookback = ctx_.opts.lookback_delta_ms;
  const int64_t ref_lo = (at ? *at : start_) - vs.offset_ms;
  const int64_t ref_hi = (at ? *at : end_) - vs.offset_ms;
  const int64_t before = ctx_.current_samples;
  Matrix raw = LoadSeries(vs, ref_lo - lookback + 1, ref_hi, /*drop_stale=*/false, lookback);
  std::vector<size_t> pos(raw.size(), 0);
  std::vector<Value> args(1, Vector{});
  Vector out;
  SeriesCollector col(ctx_, NumSteps());
  for (int64_t ts = start_; ts <= end_; ts += interval_) {
    ctx_.Poll(1 + static_cast<int64_t>(raw.size()));
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
  ctx_.SetSamples(before + TotalPoints(m));
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
  in.series = LoadSeries(vs, ref_lo - ms.range_ms + 1, ref_hi, /*drop_stale=*/true, ms.range_ms);
  return in;
}

Matrix Evaluator::EvalMatrixSelectorInstant(const MatrixSelector& ms) {
  // The load already restricted every series to the single window (and
  // charged its points).
  RangeInput in = LoadMatrixSelector(ms);
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
