// Test helpers for driving http::Server over loopback: a blocking raw
// socket client that reads HTTP/1.1 responses byte-exactly, and a server
// running on a background thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "http/headers.h"
#include "http/router.h"
#include "http/server.h"

namespace gpumon::http::testing {

using namespace std::chrono_literals;

struct ParsedResponse {
  int status = 0;
  Headers headers;
  std::string body;
  bool chunked = false;
};

class RawClient {
 public:
  // Connects to 127.0.0.1:port; `rcvbuf` > 0 sets SO_RCVBUF first.
  explicit RawClient(int port, int rcvbuf = 0);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool Send(std::string_view data);
  // Reads one response; `head_request`: a response to HEAD has no body.
  // False on timeout, or when the connection ends first.
  bool ReadResponse(ParsedResponse* out, bool head_request = false,
                    std::chrono::milliseconds timeout = 10s);
  // Reads until the server closes; false if it has not within `timeout`.
  bool ReadUntilClosed(std::string* out, std::chrono::milliseconds timeout = 10s);
  // Raw bytes: reads until at least `n` more are buffered.
  bool ReadAtLeast(size_t n, std::chrono::milliseconds timeout = 10s);
  std::string& buffered() { return buf_; }
  void ShutdownWrite();
  void Close();

 private:
  // One recv() into buf_, waiting at most until `deadline`; 0 on EOF,
  // -1 on timeout or error.
  long RecvSome(std::chrono::steady_clock::time_point deadline);
  bool Need(size_t n, std::chrono::steady_clock::time_point deadline);
  bool ReadLine(std::string* line, std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
  std::string buf_;
};

// A server bound to 127.0.0.1 on a free port, running until destroyed.
class TestServer {
 public:
  TestServer(Router router, ServerOptions options);
  ~TestServer();
  int port() const { return port_; }
  Server& server() { return *server_; }
  // Stop() and wait for Run() to return; false if it has not within `bound`.
  bool StopAndJoin(std::chrono::milliseconds bound = 30s);

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::shared_ptr<std::atomic<bool>> done_ = std::make_shared<std::atomic<bool>>(false);
  int port_ = 0;
};

// Polls `pred` until true or `bound` passes.
template <class Pred>
bool WaitFor(Pred pred, std::chrono::milliseconds bound = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace gpumon::http::testing
