#include "cli/http_server_metrics.h"

#include <memory>

namespace gpumon::cli {

Status RegisterHttpServerMetrics(selfmon::Registry& registry, const web::HttpServer& server) {
  auto stats = std::make_shared<http::ServerStats>();
  registry.AddPreCollectHook([stats, &server] { *stats = server.Stats(); });
  struct Family {
    const char* name;
    const char* help;
    uint64_t http::ServerStats::*field;
  };
  // gpumon_http_requests_total is taken: Prometheus's per-handler family
  // (selfmon/server_metrics.h) has that name.
  const Family counters[] = {
      {"gpumon_http_connections_accepted_total", "HTTP connections accepted.",
       &http::ServerStats::connections_accepted},
      {"gpumon_http_connections_refused_total",
       "HTTP connections refused with 503 because --web.max-connections were open.",
       &http::ServerStats::connections_refused},
      {"gpumon_http_requests_received_total", "HTTP requests received, routed or not.",
       &http::ServerStats::requests},
      {"gpumon_http_rejected_requests_total",
       "HTTP requests the server answered itself with an error (malformed, too large, "
       "unknown route, overloaded).",
       &http::ServerStats::rejected_requests},
      {"gpumon_http_timeouts_total",
       "HTTP connections closed because a header, body, idle or write deadline passed.",
       &http::ServerStats::timeouts},
      {"gpumon_http_canceled_requests_total",
       "HTTP requests whose client went away while the handler ran (their work was canceled).",
       &http::ServerStats::canceled_requests},
  };
  for (const Family& f : counters) {
    auto field = f.field;
    if (Status s = registry.AddCounterFunc(
            f.name, f.help, [stats, field] { return static_cast<double>((*stats).*field); });
        !s.ok()) {
      return s;
    }
  }
  return registry.AddGaugeFunc("gpumon_http_connections_open", "HTTP connections open now.",
                               [stats] { return static_cast<double>(stats->connections_open); });
}

}  // namespace gpumon::cli
