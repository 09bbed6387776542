// A local remote-write endpoint for sender tests: an httplib server that
// decodes each request with DecodeWriteRequest and records it, answering
// with a scripted status sequence (then 204).
#pragma once

#include <httplib.h>

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "remote/write_request.h"

namespace gpumon::remote::testing {

struct ReceivedRequest {
  httplib::Headers headers;
  std::vector<TimeSeries> series;  // empty when undecodable
  std::string decode_error;
  int answered = 204;
  size_t samples() const {
    size_t n = 0;
    for (const TimeSeries& s : series) n += s.samples.size();
    return n;
  }
};

class TestReceiver {
 public:
  TestReceiver() {
    server_.Post("/api/v1/write", [this](const httplib::Request& req, httplib::Response& res) {
      ReceivedRequest r;
      r.headers = req.headers;
      auto decoded = DecodeWriteRequest(req.body);
      if (decoded.ok()) {
        r.series = std::move(decoded).value();
      } else {
        r.decode_error = decoded.status().message();
      }
      std::lock_guard<std::mutex> lock(mu_);
      r.answered = script_.empty() ? 204 : script_.front();
      if (!script_.empty()) script_.pop_front();
      res.status = r.answered;
      if (r.answered / 100 != 2) res.set_content("scripted failure", "text/plain");
      requests_.push_back(std::move(r));
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the loop runs would be lost and the join would hang.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~TestReceiver() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/write"; }

  // Statuses for the next requests, in order.
  void Script(std::vector<int> statuses) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.assign(statuses.begin(), statuses.end());
  }
  std::vector<ReceivedRequest> Requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // Samples of accepted (2xx) requests.
  size_t AcceptedSamples() {
    size_t n = 0;
    for (const ReceivedRequest& r : Requests()) {
      if (r.answered / 100 == 2) n += r.samples();
    }
    return n;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::deque<int> script_;
  std::vector<ReceivedRequest> requests_;
};

// Polls `done` until it holds or `limit` passes; the limit only bounds a
// failing test, it asserts nothing about speed.
inline bool WaitFor(const std::function<bool()>& done,
                    std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace gpumon::remote::testing
