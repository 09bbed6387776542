// The TSDB admin endpoints of the HTTP API (POST or PUT):
// /api/v1/admin/tsdb/delete_series, /clean_tombstones and /snapshot, with
// Prometheus's parameters, answers and error wording (web/api/v1/api.go).
//
// Contract:
// - Off unless enabled at route registration (--web.enable-admin-api);
//   when off every admin endpoint answers 503 errorType "unavailable",
//   error "admin APIs disabled".
// - delete_series: match[] (at least one; "no match[] parameter provided"
//   otherwise), start and end (default: all time); each selector's series
//   are deleted in [start, end]; success is 204 without a body.
// - clean_tombstones: success is 204 without a body.
// - snapshot: skip_head (Go ParseBool syntax); success is
//   {"status":"success","data":{"name":"<snapshot name>"}}.
// - Storage failures are errorType "internal" (500).
#pragma once

#include "web/api/backend.h"
#include "web/api/params.h"
#include "web/api/response.h"

namespace gpumon::web::api {

class AdminApi {
 public:
  explicit AdminApi(ApiBackend& backend) : backend_(backend) {}

  ApiResponse DeleteSeries(const Params& p);
  ApiResponse CleanTombstones(const Params& p);
  ApiResponse Snapshot(const Params& p);

  // The answer of every admin endpoint while they are disabled.
  static ApiResponse Disabled();

 private:
  ApiBackend& backend_;
};

}  // namespace gpumon::web::api
