#include "web/http_server.h"

#include <charconv>

#include "common/log.h"
#include "web/tls_server.h"

namespace gpumon::web {

Result<std::pair<std::string, int>> ParseListenAddress(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return Status::Error("invalid listen address \"" + address + "\": expected HOST:PORT");
  }
  std::string host = address.substr(0, colon);
  std::string port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  int port = -1;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || p != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return Status::Error("invalid listen address \"" + address + "\": bad port");
  }
  return std::make_pair(host, port);
}

HttpServer::HttpServer(HttpServerOptions options, std::optional<WebConfig> web) {
  if (web && web->tls.enabled()) {
    const TlsServerConfig tls = web->tls;
    Status status;
    server_ = std::make_unique<httplib::SSLServer>([&tls, &status](SSL_CTX& ctx) {
      status = ConfigureServerTls(&ctx, tls);
      return status.ok();
    });
    if (!status.ok()) init_ = status.WithContext(web->file + ": tls_server_config");
    tls_ = true;
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  if (web) {
    if (!web->http2) LogInfo("web config: http2 is off; this server speaks HTTP/1.1 only anyway");
    if (!web->headers.empty()) {
      server_->set_default_headers(httplib::Headers(web->headers.begin(), web->headers.end()));
    }
    if (!web->basic_auth_users.empty()) {
      auth_ = std::make_unique<BasicAuth>(web->basic_auth_users);
      BasicAuth* auth = auth_.get();
      server_->set_pre_routing_handler([auth](const httplib::Request& req, httplib::Response& res) {
        if (auth->Check(req.get_header_value("Authorization"))) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        res.status = 401;
        res.set_header("WWW-Authenticate", "Basic");
        // The request body (if any) is never read; the client must not
        // send its next request after it on this connection.
        res.set_header("Connection", "close");
        res.set_content("Unauthorized\n", "text/plain; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      });
    }
  }
  int threads = options.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_keep_alive_max_count(options.keep_alive_max_requests);
  // Headers and body go out in separate writes; without this, Nagle's
  // algorithm delays the body of small responses by up to 40 ms.
  server_->set_tcp_nodelay(true);
  server_->set_read_timeout(10, 0);
  server_->set_write_timeout(10, 0);
}

void HttpServer::ServeMetrics(MetricsEndpoint& endpoint, const httplib::Request& req,
                              httplib::Response& res) {
  auto body = endpoint.Get(req.get_header_value("Accept"), req.get_header_value("Accept-Encoding"));
  if (body.gzip) res.set_header("Content-Encoding", "gzip");
  res.set_header("Vary", "Accept, Accept-Encoding");
  // A sized content provider bypasses cpp-httplib's own compression, which
  // would otherwise compress (again) on every request.
  auto bytes = body.bytes;
  res.set_content_provider(bytes->size(), std::string(exposition::ContentTypeOf(body.format)),
                           [bytes](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(bytes->data() + offset, length);
                           });
}

Status HttpServer::Bind(const std::string& address) {
  if (!init_.ok()) return init_;
  if (!server_->is_valid()) return Status::Error("cannot set up the HTTP server");
  auto parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  const auto& [host, port] = *parsed;
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ < 0) return Status::Error("cannot listen on " + address);
  } else if (!server_->bind_to_port(host, port)) {
    return Status::Error("cannot listen on " + address + " (address in use or not permitted)");
  } else {
    port_ = port;
  }
  return Status::Ok();
}

void HttpServer::Run() { server_->listen_after_bind(); }

void HttpServer::Stop() { server_->stop(); }

}  // namespace gpumon::web
