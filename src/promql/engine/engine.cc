// Query lifecycle: parse, admission through the concurrency gate, querier
// set-up, evaluation under the deadline and sample limit, and conversion of
// the evaluator's matrix into the result type of the query.
#include "promql/engine.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <stdexcept>

#include "promql/engine/evaluator.h"
#include "promql/parser.h"

namespace gpumon::promql {

using engine_internal::EvalError;
using engine_internal::Evaluator;
using engine_internal::QueryContext;

const char* ErrorTypeName(ErrorType t) {
  switch (t) {
    case ErrorType::kNone:
      return "";
    case ErrorType::kTimeout:
      return "timeout";
    case ErrorType::kCanceled:
      return "canceled";
    case ErrorType::kExecution:
      return "execution";
    case ErrorType::kBadData:
      return "bad_data";
    case ErrorType::kInternal:
      return "internal";
  }
  return "internal";
}

namespace {

QueryResult Error(ErrorType type, std::string msg) {
  QueryResult r;
  r.error_type = type;
  r.error = std::move(msg);
  return r;
}

class GateSlot {
 public:
  GateSlot(std::mutex& mu, std::condition_variable& cv, int& active)
      : mu_(mu), cv_(cv), active_(active) {}
  ~GateSlot() {
    if (!held_) return;
    {
      std::lock_guard<std::mutex> l(mu_);
      --active_;
    }
    cv_.notify_all();
  }
  void set_held() { held_ = true; }

 private:
  std::mutex& mu_;
  std::condition_variable& cv_;
  int& active_;
  bool held_ = false;
};

}  // namespace

Engine::Engine(EngineOptions options) : opts_(options), impl_(std::make_unique<Impl>()) {}
Engine::~Engine() = default;

QueryResult Engine::Instant(const Queryable& q, std::string_view query, int64_t ts_ms,
                            const QueryOptions& qopts) {
  ParseResult p = Parse(query);
  if (!p.ok()) return Error(ErrorType::kBadData, p.error->ToString());
  return InstantExpr(q, *p.expr, ts_ms, qopts);
}

QueryResult Engine::Range(const Queryable& q, std::string_view query, int64_t start_ms,
                          int64_t end_ms, int64_t step_ms, const QueryOptions& qopts) {
  ParseResult p = Parse(query);
  if (!p.ok()) return Error(ErrorType::kBadData, p.error->ToString());
  return RangeExpr(q, *p.expr, start_ms, end_ms, step_ms, qopts);
}

namespace {

// Evaluates `expr` over [start, end] (instant when interval == 0) with the
// gate already passed. Fills `res` on success and on failure. Nothing
// thrown below (storage errors, allocation failures) leaves: the caller may
// be an HTTP handler, whose server must answer with a JSON error.
void Execute(const EngineOptions& opts, const Queryable& q, const Expr& expr, int64_t start,
             int64_t end, int64_t interval, std::chrono::steady_clock::time_point deadline,
             const Cancellation* cancel, QueryResult& res) {
  QueryContext ctx;
  ctx.opts = opts;
  ctx.query_start = start;
  ctx.query_end = end;
  ctx.query_step = interval;
  ctx.deadline = deadline;
  ctx.cancel = cancel;

  try {
    int64_t mint = 0, maxt = 0;
    engine_internal::FindMinMaxTime(expr, start, end, opts.lookback_delta_ms, &mint, &maxt);
    // Without a queryable only expressions that select nothing can run.
    std::unique_ptr<tsdb::Querier> querier;
    if (q) querier = q(mint, maxt);
    ctx.querier = querier.get();

    const bool instant = interval == 0;
    Evaluator ev(ctx, start, end, instant ? 1 : interval);
    std::string str;
    Matrix mat = ev.Eval(expr, &str);
    ctx.CheckInterrupt();
    const ValueType type = expr.Type();
    if (instant) {
      switch (type) {
        case ValueType::kString:
          res.value = String{start, std::move(str)};
          break;
        case ValueType::kScalar:
          res.value =
              Scalar{start, mat.empty() || mat[0].points.empty() ? 0.0 : mat[0].points[0].f};
          break;
        case ValueType::kVector: {
          Vector vec;
          vec.reserve(mat.size());
          for (auto& s : mat) {
            if (s.points.empty()) continue;
            vec.push_back(Sample{std::move(s.metric), start, s.points[0].f});
          }
          res.value = std::move(vec);
          break;
        }
        default:
          std::sort(mat.begin(), mat.end(),
                    [](const Series& a, const Series& b) { return a.metric < b.metric; });
          res.value = std::move(mat);
          break;
      }
    } else {
      if (type == ValueType::kScalar) {
        // A scalar range result is one series without labels.
        for (auto& s : mat) s.metric = Labels();
      }
      std::sort(mat.begin(), mat.end(),
                [](const Series& a, const Series& b) { return a.metric < b.metric; });
      res.value = std::move(mat);
    }
  } catch (const EvalError& e) {
    res.error_type = e.type;
    res.error = e.message;
  } catch (const std::bad_alloc&) {
    // What the sample limit is meant to prevent, reached anyway (a limit
    // set above the memory there is, or memory the budget does not see).
    res.error_type = ErrorType::kExecution;
    res.error = "query processing ran out of memory in query execution";
  } catch (const std::length_error& e) {
    res.error_type = ErrorType::kExecution;
    res.error =
        std::string("query processing would need too much memory in query execution: ") + e.what();
  } catch (const std::exception& e) {
    res.error_type = ErrorType::kInternal;
    res.error = std::string("unexpected error in query execution: ") + e.what();
  } catch (...) {
    res.error_type = ErrorType::kInternal;
    res.error = "unexpected error in query execution";
  }
  if (!res.ok()) res.value = Value{};
  ctx.NotePeak();
  res.annotations = std::move(ctx.annotations);
  res.stats = ctx.stats;
}

}  // namespace

// Admission gate: at most max_concurrent queries evaluate at once; the rest
// wait until a slot frees up, their deadline passes or they are cancelled.
struct Engine::Impl {
  // How often a waiting query looks at its cancellation flag, which has no
  // way to wake the wait.
  static constexpr auto kCancelPoll = std::chrono::milliseconds(10);

  std::mutex mu;
  std::condition_variable cv;
  int active = 0;

  QueryResult Run(const EngineOptions& opts, const Queryable& q, const Expr& expr, int64_t start,
                  int64_t end, int64_t interval, const Cancellation* cancel) {
    Impl& gate = *this;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(opts.timeout_ms);
    GateSlot slot(gate.mu, gate.cv, gate.active);
    if (cancel != nullptr && cancel->cancelled()) {
      return Error(ErrorType::kCanceled, "query was canceled in query queue");
    }
    if (opts.max_concurrent > 0) {
      std::unique_lock<std::mutex> l(gate.mu);
      auto has_slot = [&] { return gate.active < opts.max_concurrent; };
      while (!has_slot()) {
        if (cancel != nullptr && cancel->cancelled()) {
          return Error(ErrorType::kCanceled, "query was canceled in query queue");
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) return Error(ErrorType::kTimeout, "query timed out in query queue");
        auto until = deadline;
        if (cancel != nullptr) until = std::min(until, now + kCancelPoll);
        gate.cv.wait_until(l, until, has_slot);
      }
      ++gate.active;
      slot.set_held();
    }
    QueryResult res;
    Execute(opts, q, expr, start, end, interval, deadline, cancel, res);
    return res;
  }
};

EngineOptions Engine::Effective(const QueryOptions& qopts) const {
  EngineOptions o = opts_;
  // A request's own deadline can only shorten the server's, as a Go
  // context deadline nested in the engine's does.
  if (qopts.timeout_ms)
    o.timeout_ms = std::max<int64_t>(0, std::min(*qopts.timeout_ms, o.timeout_ms));
  if (qopts.lookback_delta_ms > 0) o.lookback_delta_ms = qopts.lookback_delta_ms;
  return o;
}

QueryResult Engine::InstantExpr(const Queryable& q, const Expr& expr, int64_t ts_ms,
                                const QueryOptions& qopts) {
  return impl_->Run(Effective(qopts), q, expr, ts_ms, ts_ms, 0, qopts.cancel);
}

QueryResult Engine::RangeExpr(const Queryable& q, const Expr& expr, int64_t start_ms,
                              int64_t end_ms, int64_t step_ms, const QueryOptions& qopts) {
  const ValueType t = expr.Type();
  if (t != ValueType::kScalar && t != ValueType::kVector) {
    return Error(ErrorType::kBadData,
                 std::string("invalid expression type \"") +
                     (t == ValueType::kMatrix ? "range vector" : ValueTypeName(t)) +
                     "\" for range query, must be Scalar or instant Vector");
  }
  if (step_ms <= 0) {
    return Error(ErrorType::kBadData,
                 "zero or negative query resolution step widths are not accepted. Try a positive "
                 "integer");
  }
  if (end_ms < start_ms) {
    return Error(ErrorType::kBadData, "end timestamp must not be before start time");
  }
  return impl_->Run(Effective(qopts), q, expr, start_ms, end_ms, step_ms, qopts.cancel);
}

}  // namespace gpumon::promql
