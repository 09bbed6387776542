#include "web/api/query_api.h"

#include <chrono>
#include <exception>
#include <memory>
#include <new>
#include <optional>

#include "promql/parser.h"
#include "promql/printer.h"
#include "web/api/ast_json.h"
#include "web/api/json_values.h"

namespace gpumon::web::api {
namespace {

constexpr int64_t kMaxPointsPerSeries = 11000;

struct Executed {
  promql::QueryResult result;
  double seconds = 0;
};

// Truncates a vector or matrix result to `limit` series.
bool Truncate(promql::Value& v, int64_t limit) {
  if (limit <= 0) return false;
  size_t n = static_cast<size_t>(limit);
  if (auto* vec = std::get_if<promql::Vector>(&v); vec && vec->size() > n) {
    vec->resize(n);
    return true;
  }
  if (auto* m = std::get_if<promql::Matrix>(&v); m && m->size() > n) {
    m->resize(n);
    return true;
  }
  return false;
}

void WriteStats(JsonWriter& w, const Executed& e) {
  w.StartObject();
  w.Key("timings");
  w.StartObject();
  for (const char* key : {"evalTotalTime", "resultSortTime", "queryPreparationTime",
                          "innerEvalTime", "execQueueTime", "execTotalTime"}) {
    w.Key(key);
    bool total = std::string_view(key) == "evalTotalTime" ||
                 std::string_view(key) == "innerEvalTime" ||
                 std::string_view(key) == "execTotalTime";
    w.Double(total ? e.seconds : 0.0);
  }
  w.EndObject();
  w.Key("samples");
  w.StartObject();
  w.Key("totalQueryableSamples");
  w.Int64(e.result.stats.samples_loaded);
  w.Key("peakSamples");
  w.Int64(e.result.stats.peak_samples);
  w.EndObject();
  w.EndObject();
}

// The success response of an executed query; the result is shared with
// the data callback, which encodes it while the response streams.
ApiResponse QueryResponse(std::shared_ptr<Executed> e, const Params& p, int64_t limit) {
  ApiResponse r;
  r.warnings = e->result.annotations.warnings;
  r.infos = e->result.annotations.infos;
  if (Truncate(e->result.value, limit)) r.warnings.push_back("results truncated due to limit");
  std::string stats = p.Get("stats");
  if (!stats.empty() && stats != "true" && stats != "all") {
    r.warnings.push_back("value " + GoQuote(stats) +
                         " for parameter \"stats\" is deprecated and will be rejected in the "
                         "next major release, use \"true\" or \"all\"");
  }
  r.data = [e, with_stats = !stats.empty()](JsonWriter& w) {
    // Runs while the response streams, after the status line went out: a
    // failure can only end the body early (the writer reports it).
    try {
      w.StartObject();
      w.Key("resultType");
      w.String(ResultTypeName(e->result.value));
      w.Key("result");
      if (!WriteValue(w, e->result.value)) return false;
      if (with_stats) {
        w.Key("stats");
        WriteStats(w, *e);
      }
      return w.EndObject() && w.ok();
    } catch (const std::exception&) {
      return false;
    }
  };
  return r;
}

// The answer for an exception that got as far as the endpoint (the engine
// catches its own; this covers parsing, result handling and backends).
ApiResponse ExceptionFailure(const std::exception* e, bool out_of_memory) {
  if (out_of_memory) {
    return ApiResponse::Failure(
        {ErrorKind::kExecution, "query processing ran out of memory in query execution"});
  }
  return ApiResponse::Failure(
      {ErrorKind::kInternal, std::string("unexpected error in query execution") +
                                 (e ? std::string(": ") + e->what() : "")});
}

template <typename Fn>
ApiResponse Guarded(Fn fn) {
  try {
    return fn();
  } catch (const std::bad_alloc& e) {
    return ExceptionFailure(&e, true);
  } catch (const std::exception& e) {
    return ExceptionFailure(&e, false);
  } catch (...) {
    return ExceptionFailure(nullptr, false);
  }
}

ApiResponse EngineFailure(const promql::QueryResult& res) {
  return ApiResponse::Failure({FromEngine(res.error_type), res.error});
}

// Parses the query parameter; on failure fills *err.
promql::ExprPtr ParseQueryParam(const Params& p, ApiError* err) {
  auto parsed = promql::Parse(p.Get("query"));
  if (!parsed.ok()) {
    *err = InvalidParam("query", parsed.error->ToString());
    return nullptr;
  }
  return std::move(parsed.expr);
}

// The per-request `timeout` and `lookback_delta`, parsed with Prometheus's
// wording; the engine caps the timeout at its own.
Result<promql::QueryOptions> QueryOptionsOf(const Params& p) {
  promql::QueryOptions opts;
  if (std::string to = p.Get("timeout"); !to.empty()) {
    auto d = ParseDuration(to);
    if (!d.ok()) return Status::Error(InvalidParam("timeout", d.status().message()).message);
    opts.timeout_ms = *d;
  }
  if (std::string lb = p.Get("lookback_delta"); !lb.empty()) {
    auto d = ParseDuration(lb);
    if (!d.ok())
      return Status::Error("error parsing lookback delta duration: " + d.status().message());
    opts.lookback_delta_ms = *d;
  }
  return opts;
}

}  // namespace

ApiResponse QueryApi::Query(const Params& p, const Cancellation* cancel) {
  return Guarded([&] { return DoQuery(p, cancel); });
}

ApiResponse QueryApi::QueryRange(const Params& p, const Cancellation* cancel) {
  return Guarded([&] { return DoQueryRange(p, cancel); });
}

ApiResponse QueryApi::DoQuery(const Params& p, const Cancellation* cancel) {
  auto limit = ParseLimit(p.Get("limit"));
  if (!limit.ok()) return ApiResponse::Failure(InvalidParam("limit", limit.status().message()));
  int64_t ts = now_();
  if (std::string t = p.Get("time"); !t.empty()) {
    auto parsed = ParseTime(t);
    if (!parsed.ok()) {
      return ApiResponse::Failure(
          InvalidParam("time", "invalid time value for 'time': " + parsed.status().message()));
    }
    ts = *parsed;
  }
  auto qopts = QueryOptionsOf(p);
  if (!qopts.ok()) return ApiResponse::Failure({ErrorKind::kBadData, qopts.status().message()});
  qopts->cancel = cancel;
  ApiError err;
  promql::ExprPtr expr = ParseQueryParam(p, &err);
  if (!expr) return ApiResponse::Failure(err);

  auto e = std::make_shared<Executed>();
  auto start = std::chrono::steady_clock::now();
  e->result = backend_.InstantQuery(*expr, ts, *qopts);
  e->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!e->result.ok()) return EngineFailure(e->result);
  return QueryResponse(std::move(e), p, *limit);
}

ApiResponse QueryApi::DoQueryRange(const Params& p, const Cancellation* cancel) {
  auto limit = ParseLimit(p.Get("limit"));
  if (!limit.ok()) return ApiResponse::Failure(InvalidParam("limit", limit.status().message()));
  auto start = ParseTime(p.Get("start"));
  if (!start.ok()) return ApiResponse::Failure(InvalidParam("start", start.status().message()));
  auto end = ParseTime(p.Get("end"));
  if (!end.ok()) return ApiResponse::Failure(InvalidParam("end", end.status().message()));
  if (*end < *start) {
    return ApiResponse::Failure(InvalidParam("end", "end timestamp must not be before start time"));
  }
  auto step = ParseDuration(p.Get("step"));
  if (!step.ok()) return ApiResponse::Failure(InvalidParam("step", step.status().message()));
  if (*step <= 0) {
    return ApiResponse::Failure(InvalidParam(
        "step",
        "zero or negative query resolution step widths are not accepted. Try a positive integer"));
  }
  // Prometheus's safety limit: a week at 60 s or a year at 1 h. Wide, so
  // that the span of the extreme times cannot overflow.
  if ((static_cast<__int128>(*end) - *start) / *step > kMaxPointsPerSeries) {
    return ApiResponse::Failure(
        {ErrorKind::kBadData,
         "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query "
         "resolution (?step=XX)"});
  }
  auto qopts = QueryOptionsOf(p);
  if (!qopts.ok()) return ApiResponse::Failure({ErrorKind::kBadData, qopts.status().message()});
  qopts->cancel = cancel;
  ApiError err;
  promql::ExprPtr expr = ParseQueryParam(p, &err);
  if (!expr) return ApiResponse::Failure(err);

  auto e = std::make_shared<Executed>();
  auto t0 = std::chrono::steady_clock::now();
  e->result = backend_.RangeQuery(*expr, *start, *end, *step, *qopts);
  e->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!e->result.ok()) return EngineFailure(e->result);
  return QueryResponse(std::move(e), p, *limit);
}

ApiResponse QueryApi::FormatQuery(const Params& p) {
  ApiError err;
  promql::ExprPtr expr = ParseQueryParam(p, &err);
  if (!expr) return ApiResponse::Failure(err);
  auto text = std::make_shared<std::string>(promql::Format(*expr));
  return ApiResponse::Success([text](JsonWriter& w) { return w.Str(*text); });
}

ApiResponse QueryApi::ParseQuery(const Params& p) {
  ApiError err;
  std::shared_ptr<promql::Expr> expr = ParseQueryParam(p, &err);
  if (!expr) return ApiResponse::Failure(err);
  return ApiResponse::Success([expr](JsonWriter& w) { return WriteAstJson(w, *expr); });
}

ApiResponse QueryApi::QueryExemplars(const Params& p) {
  int64_t start = kMinTimeMs, end = kMaxTimeMs;
  if (std::string s = p.Get("start"); !s.empty()) {
    auto t = ParseTime(s);
    if (!t.ok()) {
      return ApiResponse::Failure(
          InvalidParam("start", "invalid time value for 'start': " + t.status().message()));
    }
    start = *t;
  }
  if (std::string s = p.Get("end"); !s.empty()) {
    auto t = ParseTime(s);
    if (!t.ok()) {
      return ApiResponse::Failure(
          InvalidParam("end", "invalid time value for 'end': " + t.status().message()));
    }
    end = *t;
  }
  if (end < start) {
    return ApiResponse::Failure(
        {ErrorKind::kBadData, "end timestamp must not be before start timestamp"});
  }
  auto parsed = promql::Parse(p.Get("query"));
  if (!parsed.ok()) return ApiResponse::Failure({ErrorKind::kBadData, parsed.error->ToString()});
  // No exemplars are stored.
  return ApiResponse::Success([](JsonWriter& w) {
    w.StartArray();
    return w.EndArray();
  });
}

}  // namespace gpumon::web::api
