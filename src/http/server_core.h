// ServerCore: the state the acceptor and every connection share: routes,
// options, the worker pool, the TLS context, counters and the registry of
// open connections that Stop() walks. Internal to src/http.
#pragma once

#include <atomic>
#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "http/router.h"
#include "http/server.h"
#include "http/worker_pool.h"

namespace gpumon::http {

class Connection;

struct ServerCore {
  ServerCore(Router r, ServerOptions o);

  const Router router;
  const ServerOptions options;
  WorkerPool pool;
  WorkerPool auth_pool;                            // one thread: the authorize hook's slow checks
  std::unique_ptr<boost::asio::ssl::context> tls;  // set: every connection is TLS

  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> connections_accepted{0};
  std::atomic<uint64_t> connections_refused{0};
  std::atomic<uint64_t> connections_open{0};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> rejected_requests{0};
  std::atomic<uint64_t> timeouts{0};
  std::atomic<uint64_t> canceled_requests{0};

  void Register(const std::shared_ptr<Connection>& c);
  // Called once per connection when it closes. While stopping, the last
  // one out runs `on_all_closed` (set by the server; cleared before the
  // server is torn down).
  void Unregister(Connection* c);
  std::vector<std::shared_ptr<Connection>> Snapshot();
  void SetOnAllClosed(std::function<void()> fn);

 private:
  std::mutex mu_;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> conns_;
  std::function<void()> on_all_closed_;
};

}  // namespace gpumon::http
