// The HTTP server's counters (http::ServerStats) as self-monitoring metrics:
// gpumon_http_connections_open, gpumon_http_connections_accepted_total,
// gpumon_http_connections_refused_total, gpumon_http_requests_received_total,
// gpumon_http_rejected_requests_total, gpumon_http_timeouts_total and
// gpumon_http_canceled_requests_total (docs/formats/selfmon-metrics.md).
//
// Contract: the server's Stats() is read once per render (a pre-collect
// hook); `server` must outlive the registry's renders. An error (a name
// already registered) leaves the families registered so far in place.
#pragma once

#include "common/status.h"
#include "selfmon/registry.h"
#include "web/http_server.h"

namespace gpumon::cli {

Status RegisterHttpServerMetrics(selfmon::Registry& registry, const web::HttpServer& server);

}  // namespace gpumon::cli
