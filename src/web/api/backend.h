// What the HTTP API needs from the server: storage to read series and
// labels from, an engine to evaluate parsed queries (with per-request
// options), a summary of the in-memory head, and the TSDB admin operations.
// Tests implement it over an in-memory head, or fake it.
//
// Contract of the admin operations: the defaults answer an error saying the
// storage does not support them; StorageBackend runs the hooks it was given
// (AdminHooks), and snapshots go to <data_dir>/snapshots/<name> with
// name = <UTC time as 20060102T150405Z>-<16 hex digits>, as Prometheus names
// them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
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
  virtual promql::QueryResult InstantQuery(const promql::Expr& expr, int64_t ts_ms,
                                           const promql::QueryOptions& opts) = 0;
  virtual promql::QueryResult RangeQuery(const promql::Expr& expr, int64_t start_ms, int64_t end_ms,
                                         int64_t step_ms, const promql::QueryOptions& opts) = 0;
  virtual HeadSummary Head() = 0;
  // Metadata by metric family name; `metric` non-empty selects one.
  virtual std::map<std::string, std::vector<MetricMetadata>> Metadata(const std::string& metric) {
    (void)metric;
    return {};
  }

  // Admin: deletes the samples of series matching all `matchers` in
  // [mint, maxt] (tombstones).
  virtual Status DeleteSeries(std::span<const tsdb::Matcher> matchers, int64_t mint, int64_t maxt) {
    (void)matchers, (void)mint, (void)maxt;
    return Status::Error("delete series: not supported by this storage");
  }
  // Admin: rewrites data so deleted samples are gone from disk.
  virtual Status CleanTombstones() {
    return Status::Error("clean tombstones: not supported by this storage");
  }
  // Admin: writes a snapshot; returns its name (a directory under
  // <data>/snapshots). skip_head leaves out data not yet in blocks.
  virtual Result<std::string> Snapshot(bool skip_head) {
    (void)skip_head;
    return Status::Error("create snapshot: not supported by this storage");
  }
};

// How StorageBackend performs the admin operations; an unset hook makes
// the operation fail as unsupported.
struct AdminHooks {
  std::function<Status(std::span<const tsdb::Matcher> matchers, int64_t mint, int64_t maxt)>
      delete_series;
  std::function<Status()> clean_tombstones;
  // Writes blocks (hard links) into `dir`, which exists and is empty, plus
  // the head's data as one more block when with_head.
  std::function<Status(const std::string& dir, bool with_head)> snapshot;
  std::string data_dir;  // snapshots go to <data_dir>/snapshots/<name>
};

// A new snapshot name: <UTC time as 20060102T150405Z>-<16 hex digits>.
std::string NewSnapshotName(int64_t now_ms);

// The backend over a Queryable and an Engine (both outliving it).
class StorageBackend : public ApiBackend {
 public:
  using HeadFn = std::function<HeadSummary()>;
  StorageBackend(promql::Queryable queryable, promql::Engine& engine, HeadFn head)
      : queryable_(std::move(queryable)), engine_(engine), head_(std::move(head)) {}

  std::unique_ptr<tsdb::Querier> Querier(int64_t mint, int64_t maxt) override {
    return queryable_(mint, maxt);
  }
  promql::QueryResult InstantQuery(const promql::Expr& expr, int64_t ts_ms,
                                   const promql::QueryOptions& opts) override {
    return engine_.InstantExpr(queryable_, expr, ts_ms, opts);
  }
  promql::QueryResult RangeQuery(const promql::Expr& expr, int64_t start_ms, int64_t end_ms,
                                 int64_t step_ms, const promql::QueryOptions& opts) override {
    return engine_.RangeExpr(queryable_, expr, start_ms, end_ms, step_ms, opts);
  }
  HeadSummary Head() override { return head_ ? head_() : HeadSummary{}; }

  // Enables the admin operations (call before serving).
  void SetAdminHooks(AdminHooks hooks) { admin_ = std::move(hooks); }
  Status DeleteSeries(std::span<const tsdb::Matcher> matchers, int64_t mint, int64_t maxt) override;
  Status CleanTombstones() override;
  Result<std::string> Snapshot(bool skip_head) override;

 private:
  promql::Queryable queryable_;
  promql::Engine& engine_;
  HeadFn head_;
  AdminHooks admin_;
};

}  // namespace gpumon::web::api
