// The query endpoints of the HTTP API: /api/v1/query, /query_range,
// /format_query, /parse_query and /query_exemplars, with Prometheus's
// parameter handling, checks and error wording.
//
// Contract:
// - query: query (required), time (default: now), timeout, limit, stats.
// - query_range: query, start, end, step (all required), timeout, limit,
//   stats; end before start, step <= 0 and more than 11,000 points per
//   series are bad_data errors.
// - A parse error is bad_data `invalid parameter "query": <error>`;
//   engine errors keep the engine's kind and message.
// - limit > 0 keeps the first `limit` series and warns "results truncated
//   due to limit".
// - timeout and lookback_delta apply to this query only: the timeout is
//   capped at the engine's (--query.timeout), lookback_delta > 0 replaces
//   the engine's (--query.lookback-delta).
#pragma once

#include <cstdint>
#include <functional>

#include "web/api/backend.h"
#include "web/api/params.h"
#include "web/api/response.h"

namespace gpumon::web::api {

class QueryApi {
 public:
  using Clock = std::function<int64_t()>;  // now, in ms
  QueryApi(ApiBackend& backend, Clock now) : backend_(backend), now_(std::move(now)) {}

  ApiResponse Query(const Params& p);
  ApiResponse QueryRange(const Params& p);
  ApiResponse FormatQuery(const Params& p);
  ApiResponse ParseQuery(const Params& p);
  ApiResponse QueryExemplars(const Params& p);

 private:
  ApiBackend& backend_;
  Clock now_;
};

}  // namespace gpumon::web::api
