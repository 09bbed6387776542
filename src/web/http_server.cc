#include "web/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

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

namespace {

// Loads the TLS settings into a scratch context, so a bad certificate or
// key is reported by Bind() with the file's name, before anything starts.
Status CheckTls(const TlsServerConfig& tls) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status::Error("cannot create a TLS context");
  Status s = ConfigureServerTls(ctx, tls);
  SSL_CTX_free(ctx);
  return s;
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, std::optional<WebConfig> web) {
  options_.io_threads = options.io_threads;
  options_.worker_threads = options.threads;
  options_.limits = options.limits;
  options_.observe_request = std::move(options.observe_request);
  if (!web) return;
  if (web->tls.enabled()) {
    tls_ = true;
    const std::string context = web->file + ": tls_server_config";
    if (Status s = CheckTls(web->tls); !s.ok()) init_ = s.WithContext(context);
    options_.configure_tls = [tls = web->tls, context](SSL_CTX* ctx) {
      Status s = ConfigureServerTls(ctx, tls);
      return s.ok() ? s : s.WithContext(context);
    };
  }
  if (!web->http2) LogInfo("web config: http2 is off; this server speaks HTTP/1.1 only anyway");
  for (const auto& [name, value] : web->headers) options_.default_headers.Set(name, value);
  if (!web->basic_auth_users.empty()) {
    auth_ = std::make_shared<BasicAuth>(web->basic_auth_users);
    options_.authorize = [auth = auth_](const http::HttpRequest& head, bool may_block) {
      const std::string credentials = head.Header("Authorization");
      std::optional<bool> ok = auth->CachedCheck(credentials);
      if (!ok && may_block) ok = auth->Check(credentials);
      http::Authorization a;
      if (!ok) {
        a.verdict = http::Authorization::Verdict::kDefer;  // bcrypt: off the network thread
        return a;
      }
      if (*ok) return a;
      a.verdict = http::Authorization::Verdict::kDeny;
      a.refusal.status = 401;
      a.refusal.SetHeader("WWW-Authenticate", "Basic");
      a.refusal.SetContent("Unauthorized\n", "text/plain; charset=utf-8");
      // The request body (if any) is never read; the client must not send
      // its next request after it on this connection.
      a.refusal.close_connection = true;
      return a;
    };
  }
}

void HttpServer::ServeMetrics(MetricsEndpoint& endpoint, const http::HttpRequest& req,
                              http::HttpResponse& res) {
  auto body = endpoint.Get(req.Header("Accept"), req.Header("Accept-Encoding"));
  if (body.gzip) res.SetHeader("Content-Encoding", "gzip");
  res.SetHeader("Vary", "Accept, Accept-Encoding");
  // A copy of the cached body (a memcpy), so the response has a
  // Content-Length; the endpoint renders and compresses once per generation.
  res.SetContent(*body.bytes, exposition::ContentTypeOf(body.format));
}

HttpServer::~HttpServer() { Release(); }

void HttpServer::Release() {
  if (reserved_fd_ >= 0) ::close(reserved_fd_);
  reserved_fd_ = -1;
}

Status HttpServer::Reserve(const std::string& address) {
  if (!init_.ok()) return init_;
  auto parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  const auto& [host, port] = *parsed;
  const std::string failed = "cannot listen on " + address + ": ";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Status::Error(failed + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, &::freeaddrinfo);
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Error(failed + std::strerror(errno));
  // SO_REUSEADDR: the bind fails only while something listens on the port
  // (not for connections of an earlier run lingering in TIME_WAIT), which
  // is the conflict to report.
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::Error(failed + std::strerror(err) +
                         (err == EADDRINUSE ? " (is another server running?)" : ""));
  }
  const uint16_t net_port = bound.ss_family == AF_INET6
                                ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port;
  Release();
  reserved_fd_ = fd;
  host_ = host;
  port_ = ntohs(net_port);
  return Status::Ok();
}

Status HttpServer::Bind() {
  std::lock_guard<std::mutex> lock(mu_);
  if (server_) return Status::Error("HttpServer::Bind(): already bound");
  if (reserved_fd_ < 0) return Status::Error("HttpServer::Bind() without a reserved address");
  auto server = std::make_unique<http::Server>(router_, options_);
  // The reservation gives way to the server's own socket on the same port.
  Release();
  if (Status s = server->Bind(host_, port_); !s.ok()) {
    return s.WithContext("cannot listen on " + host_ + ":" + std::to_string(port_));
  }
  server_ = std::move(server);
  return Status::Ok();
}

Status HttpServer::Bind(const std::string& address) {
  if (Status s = Reserve(address); !s.ok()) return s;
  return Bind();
}

Status HttpServer::Run() {
  http::Server* server = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_requested_) return Status::Ok();
    if (!server_) return Status::Error("HttpServer::Run() without a successful Bind()");
    server = server_.get();
  }
  server->Run();
  return Status::Ok();
}

void HttpServer::Stop() {
  http::Server* server = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = true;
    server = server_.get();
  }
  if (server != nullptr) server->Stop();
}

http::ServerStats HttpServer::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return server_ ? server_->Stats() : http::ServerStats{};
}

}  // namespace gpumon::web
