// Helpers for the notifier tests: a loopback HTTP server standing in for
// an Alertmanager's POST /api/v2/alerts, free ports, and polling.
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpumon::notifier::testing {

// A loopback port nobody listens on right now.
inline int UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Polls `cond` until it holds or a generous deadline passes; the deadline
// only bounds a broken test, it is not a performance assertion.
inline bool WaitFor(const std::function<bool()>& cond, int seconds = 20) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

// One received POST.
struct Received {
  std::string path;
  std::string body;
  std::string authorization;
  std::string content_type;
  bool accepted = false;  // answered 200
};

// Records every POST; answers `fail_first` requests with HTTP 500, the rest
// with 200 (or always 500 when always_fail).
class FakeAlertmanager {
 public:
  explicit FakeAlertmanager(int fail_first = 0, bool always_fail = false)
      : fail_left_(fail_first), always_fail_(always_fail) {
    server_.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      const bool fail = always_fail_ || fail_left_.fetch_sub(1) > 0;
      {
        std::lock_guard lk(mu_);
        received_.push_back({req.path, req.body, req.get_header_value("Authorization"),
                             req.get_header_value("Content-Type"), !fail});
      }
      if (fail) {
        res.status = 500;
        res.set_content("boom", "text/plain");
        return;
      }
      res.status = 200;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeAlertmanager() {
    server_.stop();
    thread_.join();
  }

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::vector<Received> received() const {
    std::lock_guard lk(mu_);
    return received_;
  }
  // Alerts in the posts that were answered 200.
  size_t AcceptedAlertCount() const {
    size_t n = 0;
    for (const auto& r : received()) {
      if (!r.accepted) continue;
      rapidjson::Document d;
      d.Parse(r.body.c_str());
      if (d.IsArray()) n += d.Size();
    }
    return n;
  }

 private:
  httplib::Server server_;
  std::atomic<int> fail_left_;
  bool always_fail_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<Received> received_;
};

}  // namespace gpumon::notifier::testing
