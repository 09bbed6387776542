// HttpServer: the project's HTTP/1.1 server, a thin layer over cpp-httplib
// that adds listen-address parsing, /metrics serving, and the security of a
// web config file (web_config.h).
//
// Contract: Bind() reserves the address (so a port conflict is reported
// before anything else starts); Run() serves until Stop(). Handlers run on a
// pool of worker threads.
// With a WebConfig: HTTPS when tls_server_config is set (client
// certificates per client_auth_type); when basic_auth_users is set, every
// request, on every route, needs valid credentials, otherwise it gets 401
// with "WWW-Authenticate: Basic" (and the connection is closed, since an
// unread request body may remain); the configured headers go on every
// response. A TLS setup error is returned by Bind(). Callers must not
// replace raw()'s pre-routing handler or default headers, which carry this.
#pragma once

#include <httplib.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/status.h"
#include "web/basic_auth.h"
#include "web/metrics_endpoint.h"
#include "web/web_config.h"

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
  explicit HttpServer(HttpServerOptions options = {}, std::optional<WebConfig> web = std::nullopt);

  httplib::Server& raw() { return *server_; }
  bool tls() const { return tls_; }

  // Writes an endpoint's body for this request into `res`.
  static void ServeMetrics(MetricsEndpoint& endpoint, const httplib::Request& req,
                           httplib::Response& res);

  Status Bind(const std::string& address);
  int port() const { return port_; }
  void Run();   // blocks
  void Stop();  // from another thread or a signal-watching thread

 private:
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<BasicAuth> auth_;  // null: no authentication
  Status init_;                      // a TLS setup failure, reported by Bind()
  bool tls_ = false;
  int port_ = 0;
};

}  // namespace gpumon::web
