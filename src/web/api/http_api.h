// HTTP plumbing of the Prometheus API: routes on an http::Router, request
// parameters from the URL and a form body, and streaming of the encoded
// response (chunked, gzip when the client accepts it).
//
// Contract:
// - Every /api/v1 endpoint Prometheus serves with GET (and POST where
//   Prometheus accepts it, form-encoded) is routed to the endpoint classes;
//   OPTIONS on /api/v1/... answers 204; a request with an Origin header
//   gets Access-Control-Allow-Origin (Prometheus's default CORS origin .*).
// - /api/v1/admin/tsdb/{delete_series,clean_tombstones,snapshot} answer
//   POST and PUT; unless enable_admin (and an AdminApi is given) they answer
//   503 "admin APIs disabled", as Prometheus does without
//   --web.enable-admin-api.
// - GET /federate is served when a Federate handler is given (503 while
//   not ready, as Prometheus gates it).
// - /-/healthy answers 200; /-/ready answers 200 once `ready()` is true,
//   503 before. Both run on the network thread (RouteOptions::run_inline),
//   so they answer while every worker is busy; `ready` must not block.
// - The query endpoints pass the request's Cancellation to the engine: a
//   client that hangs up, or a server shutting down, stops its query.
// - Successful responses stream: the JSON is encoded into ~64 KiB chunks
//   sent as they fill (and gzip-compressed on the fly when Accept-Encoding
//   allows gzip), so a large result is never held encoded in full.
#pragma once

#include <functional>

#include "http/request.h"
#include "http/response.h"
#include "http/router.h"
#include "web/api/admin_api.h"
#include "web/api/federate.h"
#include "web/api/params.h"
#include "web/api/query_api.h"
#include "web/api/response.h"
#include "web/api/series_api.h"
#include "web/api/status_api.h"

namespace gpumon::web::api {

struct ApiHandlers {
  QueryApi* query = nullptr;
  SeriesApi* series = nullptr;
  StatusApi* status = nullptr;
  std::function<bool()> ready;   // unset: always ready
  AdminApi* admin = nullptr;     // null: admin endpoints disabled
  bool enable_admin = false;     // --web.enable-admin-api
  Federate* federate = nullptr;  // null: no /federate route
};

// Parameters of a request: form body (when form-encoded) then URL query.
Params ParamsOf(const http::HttpRequest& req);

// Writes an API response into `res` (status, headers, streamed body).
void Respond(const http::HttpRequest& req, http::HttpResponse& res, ApiResponse r);

// The handlers must outlive the server.
void RegisterApiRoutes(http::Router& router, const ApiHandlers& handlers);

}  // namespace gpumon::web::api
