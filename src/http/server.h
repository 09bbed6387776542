// Server: an event-driven HTTP/1.1 server (Boost.Asio + Boost.Beast's
// parser) for every gpumon endpoint.
//
// Threads: `io_threads` run the event loop (accept, TLS, reading, framing,
// writing) for every connection; handlers run on a bounded pool of
// `worker_threads`. An idle or slow connection costs a few KiB of memory
// and no thread, so thousands of keep-alive clients are fine, and a slow
// client never holds a worker while it sends its request.
//
// Per request, in this order (everything before step 3 happens before any
// authentication, so it bounds what an unauthenticated peer can cost):
//  1. The request line must arrive within max_request_line_bytes (else 414)
//     and the whole header within max_header_bytes / max_header_fields
//     (else 431), both within header_timeout of the first byte (else the
//     connection is closed; 408 is sent when a partial request arrived).
//  2. Framing per RFC 9112 6: a Transfer-Encoding other than a final
//     "chunked", Transfer-Encoding together with Content-Length, more than
//     one Content-Length field or a list value, an invalid length, an
//     obs-fold line, or a missing Host in HTTP/1.1 → 400 and close. A
//     request with neither field has an empty body (so `POST` without a
//     body never waits). Other malformed input → 400 and close.
//  3. options.authorize (basic auth) sees the head, on every path (as
//     Prometheus answers 401 everywhere); a refusal is sent instead (401)
//     and the connection closed. Checks that would block (bcrypt) run on
//     one authorization thread, never on the network threads; beyond
//     max_queued_authorizations waiting for it → 503.
//  4. Routing: 404 / 405 (with Allow) are answered without reading a body
//     (and the connection closed if one was announced).
//  5. Content-Length above the route's body limit → 413 at once; a chunked
//     body that grows past it → 413 and close. "Expect: 100-continue" gets
//     "100 Continue" only now, so a rejected upload is never sent.
//  6. The body must arrive within body_timeout.
//  7. The handler runs (inline or on the pool). While it runs the
//     connection keeps reading: a client that hangs up raises the
//     request's Cancellation. If the pool's queue is full → 503.
//  8. The response is written within write_timeout (per write); Date,
//     Content-Length or chunked framing and Connection are added.
//     Pipelined requests are answered in order, one at a time.
// Errors the server answers itself carry a JSON body (SetJsonError) and
// the configured default headers. Their errorType: "bad_data" for 4xx
// (400, 405, 413, 414, 417, 431) and for 501/505, "not_found" for 404,
// "timeout" for 408 (header or body deadline with part of a request in),
// "unavailable" for 503, "internal" for 500 (a handler or the authorize
// hook threw; the exception is logged, never sent). Connections beyond
// max_connections get 503 with "Connection: close" and are closed (over
// TLS they are closed without an answer: a plaintext 503 would be noise to
// a TLS client); a connection idle (between requests) past idle_timeout is
// closed. A connection closed after a response shuts its write side first
// and drains input for up to a second, so a client still sending a refused
// body reads the answer rather than a reset; TLS ones send close_notify.
//
// Lifecycle: Bind() reserves the address (port conflicts are reported
// before anything else starts; port 0 picks a free one); Run() serves on
// the calling thread plus io_threads-1 more and returns after Stop();
// Stop() is safe from any thread and from a signal-watching thread: it
// stops accepting, raises every in-flight request's Cancellation, lets
// handlers finish for up to drain_timeout, then closes every connection.
// Run() returns within drain_timeout + 1 s of Stop(). The destructor waits
// for handlers still running on the pool (one that ignores cancellation
// past the drain delays the destructor, not Run()).
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "http/router.h"

namespace gpumon::http {

struct ServerLimits {
  size_t max_connections = 4096;
  size_t max_request_line_bytes = 64 * 1024;
  size_t max_header_bytes = 1024 * 1024;  // request line + fields, as Go's default
  size_t max_header_fields = 128;
  size_t max_body_bytes = 16 * 1024 * 1024;  // routes may override
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{60'000};
  std::chrono::milliseconds idle_timeout{120'000};
  std::chrono::milliseconds write_timeout{60'000};
  std::chrono::milliseconds drain_timeout{5'000};
  size_t max_queued_requests = 8192;       // waiting for a worker; beyond: 503
  size_t max_queued_authorizations = 256;  // waiting for a slow credential check
  size_t stream_high_water_bytes = 1024 * 1024;
};

// What the authorize hook decided about a request head.
struct Authorization {
  enum class Verdict { kAllow, kDeny, kDefer };
  Verdict verdict = Verdict::kAllow;
  HttpResponse refusal;  // sent on kDeny (the connection is then closed)
};

struct ServerOptions {
  int io_threads = 1;
  int worker_threads = 16;
  ServerLimits limits;
  // Headers added to every response (the web config's `http_server_config.headers`).
  Headers default_headers;
  // Authentication of a request head (no body yet). Called first on the
  // network thread with may_block = false: it must decide without blocking
  // (e.g. from a cache of checked credentials) or answer kDefer; a deferred
  // head is asked again with may_block = true on the authorization thread,
  // where kDefer counts as a refusal. Unset: everyone allowed.
  std::function<Authorization(const HttpRequest& head, bool may_block)> authorize;
  // Set: TLS. Called once by Bind() with the server's SSL_CTX to load
  // certificates and policy; an error fails Bind().
  std::function<Status(SSL_CTX* ctx)> configure_tls;
  // Set: called once for every request a route's handler answered, on the
  // thread that finished it, with the route's pattern (not the path, so
  // the label set stays bounded), the status sent and the seconds from
  // dispatch until the handler returned, or, for a streamed body, until the
  // stream ended. Requests the server refused itself (404, 405, limits,
  // authentication) are counted in ServerStats instead. Must not block.
  std::function<void(std::string_view route, int status, double seconds)> observe_request;
};

// Counters for self-monitoring (gpumon_http_* metrics).
struct ServerStats {
  uint64_t connections_accepted = 0;  // admitted (refused ones not included)
  uint64_t connections_refused = 0;   // over max_connections
  uint64_t connections_open = 0;
  uint64_t requests = 0;
  uint64_t rejected_requests = 0;  // 4xx/5xx the server answered itself
  uint64_t timeouts = 0;           // header/body/idle/write deadlines hit
  uint64_t canceled_requests = 0;  // client gone while the handler ran
};

class Server {
 public:
  Server(Router router, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // host "" or "0.0.0.0": every IPv4 address; "::" every address.
  Status Bind(const std::string& host, int port);
  int port() const;
  bool tls() const;
  void Run();
  void Stop();
  ServerStats Stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpumon::http
