#include "http/server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <exception>
#include <thread>
#include <vector>

#include "common/log.h"
#include "http/connection.h"
#include "http/response_writer.h"
#include "http/server_core.h"

namespace gpumon::http {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;

ServerCore::ServerCore(Router r, ServerOptions o)
    : router(std::move(r)),
      options(std::move(o)),
      pool(options.worker_threads, options.limits.max_queued_requests),
      auth_pool(1, options.limits.max_queued_authorizations) {}

void ServerCore::Register(const std::shared_ptr<Connection>& c) {
  std::lock_guard<std::mutex> lock(mu_);
  conns_.emplace(c.get(), c);
  connections_open.store(conns_.size(), std::memory_order_relaxed);
}

void ServerCore::Unregister(Connection* c) {
  std::function<void()> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (conns_.erase(c) == 0) return;
    connections_open.store(conns_.size(), std::memory_order_relaxed);
    if (conns_.empty() && stopping.load()) done = on_all_closed_;
  }
  if (done) done();
}

std::vector<std::shared_ptr<Connection>> ServerCore::Snapshot() {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard<std::mutex> lock(mu_);
  out.reserve(conns_.size());
  for (auto& [raw, weak] : conns_) {
    if (auto c = weak.lock()) out.push_back(std::move(c));
  }
  return out;
}

void ServerCore::SetOnAllClosed(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  on_all_closed_ = std::move(fn);
}

// Members are destroyed bottom-up: the acceptor and timers go before the
// io_context, and the io_context (whose queued handlers may own the last
// references to connections) before the core those connections point to.
struct Server::Impl {
  Impl(Router r, ServerOptions o)
      : core(std::move(r), std::move(o)),
        io(std::max(core.options.io_threads, 1)),
        strand(asio::make_strand(io)),
        acceptor(strand),
        retry_timer(strand),
        drain_timer(strand),
        hard_timer(strand) {}

  ~Impl() {
    core.SetOnAllClosed(nullptr);
    // Handlers still running (past the drain) finish before anything they
    // might post to goes away.
    core.auth_pool.Shutdown();
    core.pool.Shutdown();
  }

  void Accept();
  void OnAccept(const error_code& ec, tcp::socket socket);
  void Refuse(tcp::socket socket);
  void BeginStop();
  void OnAllClosed();

  ServerCore core;
  asio::io_context io;
  asio::strand<asio::io_context::executor_type> strand;  // acceptor and stop sequence
  tcp::acceptor acceptor;
  asio::steady_timer retry_timer;
  asio::steady_timer drain_timer;
  asio::steady_timer hard_timer;
  std::atomic<bool> stop_requested{false};
  bool bound = false;
  int port = 0;
};

void Server::Impl::Accept() {
  if (core.stopping.load() || !acceptor.is_open()) return;
  acceptor.async_accept(asio::make_strand(io), [this](const error_code& ec, tcp::socket socket) {
    OnAccept(ec, std::move(socket));
  });
}

void Server::Impl::OnAccept(const error_code& ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted || core.stopping.load()) return;
  if (ec) {
    // Out of descriptors or memory: back off instead of spinning; the
    // connection waiting in the backlog is accepted once some close.
    if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
        ec == asio::error::no_memory) {
      LogWarn("http: accept: " + ec.message() + "; retrying in 100ms");
      retry_timer.expires_after(std::chrono::milliseconds(100));
      retry_timer.async_wait([this](const error_code& e) {
        if (!e) Accept();
      });
      return;
    }
    Accept();
    return;
  }
  if (core.connections_open.load(std::memory_order_relaxed) >=
      core.options.limits.max_connections) {
    Refuse(std::move(socket));
  } else {
    core.connections_accepted.fetch_add(1, std::memory_order_relaxed);
    auto conn = std::make_shared<Connection>(&core, std::move(socket));
    core.Register(conn);
    conn->Start();
  }
  Accept();
}

void Server::Impl::Refuse(tcp::socket socket) {
  // One non-blocking write and close: a refused connection must cost no
  // state. Over TLS a plaintext answer would be noise, so it is just closed.
  core.connections_refused.fetch_add(1, std::memory_order_relaxed);
  error_code ec;
  if (!core.tls) {
    HttpResponse res;
    SetJsonError(res, 503, "unavailable", "too many open connections");
    std::string msg = SerializeHead(res, core.options.default_headers, BodyFraming::kLength,
                                    res.body.size(), false, false);
    msg += res.body;
    socket.non_blocking(true, ec);
    if (!ec) socket.write_some(asio::buffer(msg), ec);
    socket.shutdown(tcp::socket::shutdown_send, ec);
  }
  socket.close(ec);
}

void Server::Impl::BeginStop() {
  error_code ec;
  acceptor.close(ec);
  retry_timer.cancel();
  const std::vector<std::shared_ptr<Connection>> conns = core.Snapshot();
  for (const auto& c : conns) c->BeginStop();
  if (core.connections_open.load() == 0) return;  // nothing to wait for: Run() returns
  drain_timer.expires_after(core.options.limits.drain_timeout);
  drain_timer.async_wait([this](const error_code& e) {
    if (e) return;
    for (const auto& c : core.Snapshot()) c->ForceClose();
    // A connection that still does not finish must not keep Run() alive.
    hard_timer.expires_after(std::chrono::seconds(1));
    hard_timer.async_wait([this](const error_code& e2) {
      if (!e2) io.stop();
    });
  });
}

void Server::Impl::OnAllClosed() {
  asio::post(strand, [this] {
    if (core.connections_open.load() != 0) return;
    drain_timer.cancel();
    hard_timer.cancel();
  });
}

Server::Server(Router router, ServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(router), std::move(options))) {
  impl_->core.SetOnAllClosed([impl = impl_.get()] { impl->OnAllClosed(); });
}

Server::~Server() = default;

Status Server::Bind(const std::string& host, int port) {
  Impl& s = *impl_;
  if (s.bound) return Status::Error("http server already bound");
  if (port < 0 || port > 65535) return Status::Error("invalid port " + std::to_string(port));
  const std::string where = host + ":" + std::to_string(port);
  if (s.core.options.configure_tls) {
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::single_dh_use);
    Status st = s.core.options.configure_tls(ctx->native_handle());
    if (!st.ok()) return st.WithContext("TLS for " + where);
    s.core.tls = std::move(ctx);
  }
  error_code ec;
  tcp::endpoint endpoint;
  if (host.empty() || host == "0.0.0.0") {
    endpoint = tcp::endpoint(tcp::v4(), static_cast<uint16_t>(port));
  } else {
    const std::string bare = host.size() > 2 && host.front() == '[' && host.back() == ']'
                                 ? host.substr(1, host.size() - 2)
                                 : host;
    const asio::ip::address addr = asio::ip::make_address(bare, ec);
    if (!ec) {
      endpoint = tcp::endpoint(addr, static_cast<uint16_t>(port));
    } else {
      tcp::resolver resolver(s.io);
      auto results = resolver.resolve(bare, std::to_string(port), ec);
      if (ec || results.empty()) {
        return Status::Error("listen tcp " + where + ": " +
                             (ec ? ec.message() : std::string("no address")));
      }
      endpoint = results.begin()->endpoint();
    }
  }
  tcp::acceptor& a = s.acceptor;
  auto fail = [&](const char* step) {
    error_code ignored;
    a.close(ignored);
    return Status::Error("listen tcp " + where + ": " + step + ": " + ec.message());
  };
  a.open(endpoint.protocol(), ec);
  if (ec) return fail("socket");
  a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (ec) return fail("SO_REUSEADDR");
  if (endpoint.address().is_v6() && endpoint.address().to_v6().is_unspecified()) {
    a.set_option(asio::ip::v6_only(false), ec);  // "::" takes IPv4 too
    ec.clear();
  }
  a.bind(endpoint, ec);
  if (ec) return fail("bind");
  a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen");
  s.port = a.local_endpoint(ec).port();
  s.bound = true;
  return Status::Ok();
}

int Server::port() const { return impl_->port; }

bool Server::tls() const { return impl_->core.tls != nullptr; }

void Server::Run() {
  Impl& s = *impl_;
  if (!s.bound) {
    LogError("http: Run() before a successful Bind()");
    return;
  }
  asio::post(s.strand, [&s] { s.Accept(); });
  auto run = [&s] {
    while (true) {
      try {
        s.io.run();
        return;
      } catch (const std::exception& e) {
        LogError(std::string("http: event loop: ") + e.what());
      }
    }
  };
  std::vector<std::thread> extra;
  for (int i = 1; i < s.core.options.io_threads; ++i) extra.emplace_back(run);
  run();
  for (std::thread& t : extra) t.join();
}

void Server::Stop() {
  Impl& s = *impl_;
  if (s.stop_requested.exchange(true)) return;
  s.core.stopping.store(true);
  asio::post(s.strand, [&s] { s.BeginStop(); });
}

ServerStats Server::Stats() const {
  const ServerCore& c = impl_->core;
  ServerStats st;
  st.connections_accepted = c.connections_accepted.load(std::memory_order_relaxed);
  st.connections_refused = c.connections_refused.load(std::memory_order_relaxed);
  st.connections_open = c.connections_open.load(std::memory_order_relaxed);
  st.requests = c.requests.load(std::memory_order_relaxed);
  st.rejected_requests = c.rejected_requests.load(std::memory_order_relaxed);
  st.timeouts = c.timeouts.load(std::memory_order_relaxed);
  st.canceled_requests = c.canceled_requests.load(std::memory_order_relaxed);
  return st;
}

}  // namespace gpumon::http
