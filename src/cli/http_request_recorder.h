// Hands the HTTP server's per-request observations (route, status, seconds;
// web::HttpServerOptions::observe_request) to the server's self-monitoring
// metrics, gpumon_http_requests_total and gpumon_http_request_duration_seconds.
//
// Why a go-between: the HTTP server is built first (its port is reserved
// before the WAL replay) and the metrics later, and handlers may still
// finish after the server stopped running, so the metrics come and go while
// the server lives.
//
// Contract: Record() is thread-safe and a no-op while nothing is attached;
// the handler label is HandlerLabel(route). Attach(m) (nullptr detaches)
// waits for a Record() in progress, so after
// Attach(nullptr) returns the old metrics are never touched again.
// AttachedScope attaches for its lifetime.
#pragma once

#include <shared_mutex>
#include <string>
#include <string_view>

#include "selfmon/server_metrics.h"

namespace gpumon::cli {

// A route pattern as a handler label: each regex group of a pattern
// becomes "*" ("/api/v1/label/([^/]+)/values" -> "/api/v1/label/*/values");
// exact patterns stay as they are.
std::string HandlerLabel(std::string_view route);

class HttpRequestRecorder {
 public:
  void Attach(selfmon::ServerMetrics* metrics);
  void Record(std::string_view route, int status, double seconds);

  class AttachedScope {
   public:
    AttachedScope(HttpRequestRecorder& recorder, selfmon::ServerMetrics* metrics)
        : recorder_(recorder) {
      recorder_.Attach(metrics);
    }
    ~AttachedScope() { recorder_.Attach(nullptr); }
    AttachedScope(const AttachedScope&) = delete;
    AttachedScope& operator=(const AttachedScope&) = delete;

   private:
    HttpRequestRecorder& recorder_;
  };

 private:
  std::shared_mutex mu_;
  selfmon::ServerMetrics* metrics_ = nullptr;  // under mu_
};

}  // namespace gpumon::cli
