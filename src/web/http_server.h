// HttpServer: the façade every gpumon server endpoint is served through. It
// owns an http::Router, applies a web config file (web_config.h) to the
// http::Server (src/http) that serves it, parses listen addresses, and
// writes /metrics bodies.
//
// Contract:
// - Reserve(address) checks early that the address can be served: nothing
//   else listens on the port and the TLS files load. It then holds the
//   port (bound, not listening: connections are refused meanwhile) so a
//   conflict is reported before a long start-up, not after; port 0 picks
//   a free port, port() says which.
// - Bind() builds the http::Server from router() and the options and
//   listens on the reserved address; connections wait from then on until
//   Run() serves them. Routes must be registered before Bind(): the
//   server takes them at construction. Bind(address) is Reserve + Bind.
// - Run() serves until Stop(). Stop() may be called from any thread (a
//   signal watcher), at any time; after a Stop() before Run(), Run()
//   returns at once.
// - With a WebConfig: HTTPS when tls_server_config is set (client
//   certificates per client_auth_type); when basic_auth_users is set, every
//   request on every route needs valid credentials, otherwise it gets 401
//   with "WWW-Authenticate: Basic" and the connection is closed (its body,
//   if any, was never read); the configured headers go on every response,
//   including the errors the server answers itself.
// - Stats() is the server's counters (zero before Bind()).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "http/request.h"
#include "http/response.h"
#include "http/router.h"
#include "http/server.h"
#include "web/basic_auth.h"
#include "web/metrics_endpoint.h"
#include "web/web_config.h"

namespace gpumon::web {

// ":9400" -> ("0.0.0.0", 9400); "[::1]:9400" -> ("::1", 9400).
Result<std::pair<std::string, int>> ParseListenAddress(const std::string& address);

struct HttpServerOptions {
  // Handler threads. An idle or slow connection costs no thread, so this
  // bounds concurrent handlers only (queries have their own limit).
  int threads = 4;
  // Event-loop threads (accept, TLS, framing, cached basic-auth answers;
  // new credentials are checked on the server's authorization thread).
  int io_threads = 1;
  http::ServerLimits limits{};
  // Each request a route answered (http::ServerOptions::observe_request).
  std::function<void(std::string_view route, int status, double seconds)> observe_request{};
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {}, std::optional<WebConfig> web = std::nullopt);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  http::Router& router() { return router_; }
  bool tls() const { return tls_; }

  // Writes an endpoint's body for this request into `res` (format from
  // Accept, gzip from Accept-Encoding, both cached by the endpoint).
  static void ServeMetrics(MetricsEndpoint& endpoint, const http::HttpRequest& req,
                           http::HttpResponse& res);

  Status Reserve(const std::string& address);
  Status Bind();
  Status Bind(const std::string& address);
  int port() const { return port_; }
  // Blocks until Stop(); an error when there is no bound server.
  Status Run();
  void Stop();
  http::ServerStats Stats() const;

 private:
  void Release();  // closes the reservation

  http::Router router_;
  http::ServerOptions options_;
  std::shared_ptr<BasicAuth> auth_;  // null: no authentication
  Status init_;                      // a TLS setup failure, reported by Reserve()
  bool tls_ = false;
  std::string host_;
  int port_ = 0;
  int reserved_fd_ = -1;  // bound, not listening; from Reserve() to Bind()

  mutable std::mutex mu_;
  std::unique_ptr<http::Server> server_;  // set by Bind()
  bool stop_requested_ = false;
};

}  // namespace gpumon::web
