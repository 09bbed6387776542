// HttpServer: the project's HTTP/1.1 server, a thin layer over cpp-httplib
// that adds listen-address parsing and /metrics serving.
//
// Contract: Bind() reserves the address (so a port conflict is reported
// before anything else starts); Run() serves until Stop(). Handlers run on a
// pool of worker threads.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>
#include <utility>

#include "common/status.h"
#include "web/metrics_endpoint.h"

namespace gpumon::web {

// ":9400" -> ("0.0.0.0", 9400); "[::1]:9400" -> ("::1", 9400).
Result<std::pair<std::string, int>> ParseListenAddress(const std::string& address);

struct HttpServerOptions {
  int threads = 4;
  // Requests per connection before the server closes it. Many scrape targets
  // behind one port (the simulator) need 1, so idle keep-alive connections
  // do not hold worker threads.
  // Also for a single scraper: cpp-httplib polls an idle kept-alive
  // connection every 10 ms for its 5 s timeout, which costs more CPU than a
  // scrape every 15 s; a new connection per scrape is cheaper.
  int keep_alive_max_requests = 1;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {});

  httplib::Server& raw() { return server_; }

  // Writes an endpoint's body for this request into `res`.
  static void ServeMetrics(MetricsEndpoint& endpoint, const httplib::Request& req,
                           httplib::Response& res);

  Status Bind(const std::string& address);
  int port() const { return port_; }
  void Run();   // blocks
  void Stop();  // from another thread or a signal-watching thread

 private:
  httplib::Server server_;
  int port_ = 0;
};

}  // namespace gpumon::web
