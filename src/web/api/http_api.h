// HTTP plumbing of the Prometheus API: routes on a cpp-httplib server,
// request parameters from the URL and a form body, and streaming of the
// encoded response (chunked, gzip when the client accepts it).
//
// Contract:
// - Every /api/v1 endpoint Prometheus serves with GET (and POST where
//   Prometheus accepts it, form-encoded) is routed to the endpoint classes;
//   OPTIONS on /api/v1/... answers 204; a request with an Origin header
//   gets Access-Control-Allow-Origin (Prometheus's default CORS origin .*).
// - /-/healthy answers 200; /-/ready answers 200 once `ready()` is true,
//   503 before.
// - Successful responses stream: the JSON is encoded into ~64 KiB chunks
//   sent as they fill (and gzip-compressed on the fly when Accept-Encoding
//   allows gzip), so a large result is never held encoded in full.
#pragma once

#include <httplib.h>

#include <functional>

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
  std::function<bool()> ready;  // unset: always ready
};

// Parameters of a request: form body (when form-encoded) then URL query.
Params ParamsOf(const httplib::Request& req);

// Writes an API response into `res` (status, headers, streamed body).
void Respond(const httplib::Request& req, httplib::Response& res, ApiResponse r);

// The handlers must outlive the server.
void RegisterApiRoutes(httplib::Server& server, const ApiHandlers& handlers);

}  // namespace gpumon::web::api
