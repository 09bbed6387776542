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
// - `cancel`, when given, is the request's: raised (the client hung up, the
//   server stops), the query stops with errorType canceled (HTTP 499).
//   It must outlive the call.
// - Nothing thrown leaves these calls, nor the data callback of their
//   responses: an unexpected exception is errorType internal (500), running
//   out of memory is execution (422), each with a JSON error body.
#pragma once

#include <cstdint>
#include <functional>

#include "common/cancellation.h"
#include "web/api/backend.h"
#include "web/api/params.h"
#include "web/api/response.h"

namespace gpumon::web::api {

class QueryApi {
 public:
  using Clock = std::function<int64_t()>;  // now, in ms
  QueryApi(ApiBackend& backend, Clock now) : backend_(backend), now_(std::move(now)) {}

  ApiResponse Query(const Params& p, const Cancellation* cancel = nullptr);
  ApiResponse QueryRange(const Params& p, const Cancellation* cancel = nullptr);
  ApiResponse FormatQuery(const Params& p);
  ApiResponse ParseQuery(const Params& p);
  ApiResponse QueryExemplars(const Params& p);

 private:
  ApiResponse DoQuery(const Params& p, const Cancellation* cancel);
  ApiResponse DoQueryRange(const Params& p, const Cancellation* cancel);

  ApiBackend& backend_;
  Clock now_;
};

}  // namespace gpumon::web::api
