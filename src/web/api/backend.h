// What the HTTP API needs from the server: storage to read series and
// labels from, an engine to evaluate parsed queries, and a summary of the
// in-memory head. Tests implement it over an in-memory head, or fake it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "promql/ast.h"
#include "promql/engine.h"
#include "tsdb/storage.h"

namespace gpumon::web::api {

struct HeadSummary {
  uint64_t num_series = 0;
  int64_t chunk_count = 0;
  int64_t min_time = 0;  // ms; as the head reports it when empty
  int64_t max_time = 0;
};

// One metric family's metadata, as /api/v1/metadata lists it.
struct MetricMetadata {
  std::string type;  // "counter", "gauge", ..., "unknown"
  std::string help;
  std::string unit;
};

class ApiBackend {
 public:
  virtual ~ApiBackend() = default;

  // Reads committed data in [mint, maxt] (ms, inclusive).
  virtual std::unique_ptr<tsdb::Querier> Querier(int64_t mint, int64_t maxt) = 0;
  virtual promql::QueryResult InstantQuery(const promql::Expr& expr, int64_t ts_ms) = 0;
  virtual promql::QueryResult RangeQuery(const promql::Expr& expr, int64_t start_ms, int64_t end_ms,
                                         int64_t step_ms) = 0;
  virtual HeadSummary Head() = 0;
  // Metadata by metric family name; `metric` non-empty selects one.
  virtual std::map<std::string, std::vector<MetricMetadata>> Metadata(const std::string& metric) {
    (void)metric;
    return {};
  }
};

// The backend over a Queryable and an Engine (both outliving it).
class StorageBackend : public ApiBackend {
 public:
  using HeadFn = std::function<HeadSummary()>;
  StorageBackend(promql::Queryable queryable, promql::Engine& engine, HeadFn head)
      : queryable_(std::move(queryable)), engine_(engine), head_(std::move(head)) {}

  std::unique_ptr<tsdb::Querier> Querier(int64_t mint, int64_t maxt) override {
    return queryable_(mint, maxt);
  }
  promql::QueryResult InstantQuery(const promql::Expr& expr, int64_t ts_ms) override {
    return engine_.InstantExpr(queryable_, expr, ts_ms);
  }
  promql::QueryResult RangeQuery(const promql::Expr& expr, int64_t start_ms, int64_t end_ms,
                                 int64_t step_ms) override {
    return engine_.RangeExpr(queryable_, expr, start_ms, end_ms, step_ms);
  }
  HeadSummary Head() override { return head_ ? head_() : HeadSummary{}; }

 private:
  promql::Queryable queryable_;
  promql::Engine& engine_;
  HeadFn head_;
};

}  // namespace gpumon::web::api
