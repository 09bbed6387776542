#include "test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace gpumon::http::testing {

RawClient::RawClient(int port, int rcvbuf) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Close();
}

RawClient::~RawClient() { Close(); }

void RawClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void RawClient::ShutdownWrite() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

bool RawClient::Send(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

long RawClient::RecvSome(std::chrono::steady_clock::time_point deadline) {
  if (fd_ < 0) return -1;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return -1;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    char tmp[65536];
    const ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == ECONNRESET ? 0 : -1;
    buf_.append(tmp, static_cast<size_t>(n));
    return n;
  }
}

bool RawClient::Need(size_t n, std::chrono::steady_clock::time_point deadline) {
  while (buf_.size() < n) {
    if (RecvSome(deadline) <= 0) return false;
  }
  return true;
}

bool RawClient::ReadAtLeast(size_t n, std::chrono::milliseconds timeout) {
  return Need(buf_.size() + n, std::chrono::steady_clock::now() + timeout);
}

bool RawClient::ReadLine(std::string* line, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    const size_t pos = buf_.find("\r\n");
    if (pos != std::string::npos) {
      *line = buf_.substr(0, pos);
      buf_.erase(0, pos + 2);
      return true;
    }
    if (RecvSome(deadline) <= 0) return false;
  }
}

bool RawClient::ReadResponse(ParsedResponse* out, bool head_request,
                             std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  *out = ParsedResponse();
  std::string line;
  if (!ReadLine(&line, deadline)) return false;
  if (line.size() < 12 || line.compare(0, 9, "HTTP/1.1 ") != 0) return false;
  out->status = std::atoi(line.c_str() + 9);
  while (true) {
    if (!ReadLine(&line, deadline)) return false;
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return false;
    size_t v = colon + 1;
    while (v < line.size() && line[v] == ' ') ++v;
    out->headers.Add(line.substr(0, colon), line.substr(v));
  }
  if (head_request || out->status < 200 || out->status == 204 || out->status == 304) return true;
  if (EqualsIgnoreCase(out->headers.Get("Transfer-Encoding"), "chunked")) {
    out->chunked = true;
    while (true) {
      if (!ReadLine(&line, deadline)) return false;
      const size_t size = std::strtoul(line.c_str(), nullptr, 16);
      if (size == 0) {
        if (!ReadLine(&line, deadline)) return false;  // no trailers from us
        return line.empty();
      }
      if (!Need(size + 2, deadline)) return false;
      out->body.append(buf_, 0, size);
      if (buf_.compare(size, 2, "\r\n") != 0) return false;
      buf_.erase(0, size + 2);
    }
  }
  if (out->headers.Has("Content-Length")) {
    const size_t size = std::stoul(out->headers.Get("Content-Length"));
    if (!Need(size, deadline)) return false;
    out->body = buf_.substr(0, size);
    buf_.erase(0, size);
    return true;
  }
  // Close-delimited.
  while (true) {
    const long n = RecvSome(deadline);
    if (n == 0) break;
    if (n < 0) return false;
  }
  out->body = std::move(buf_);
  buf_.clear();
  return true;
}

bool RawClient::ReadUntilClosed(std::string* out, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const long n = RecvSome(deadline);
    if (n == 0) break;
    if (n < 0) return false;
  }
  *out = std::move(buf_);
  buf_.clear();
  return true;
}

TestServer::TestServer(Router router, ServerOptions options)
    : server_(std::make_unique<Server>(std::move(router), std::move(options))) {
  const Status st = server_->Bind("127.0.0.1", 0);
  if (!st.ok()) throw std::runtime_error("bind: " + st.message());
  port_ = server_->port();
  thread_ = std::thread([s = server_.get(), done = done_] {
    s->Run();
    done->store(true);
  });
}

TestServer::~TestServer() {
  if (!StopAndJoin()) std::abort();  // a Run() that never returns: fail loudly, not hang
}

bool TestServer::StopAndJoin(std::chrono::milliseconds bound) {
  if (!thread_.joinable()) return true;
  server_->Stop();
  if (!WaitFor([&] { return done_->load(); }, bound)) return false;
  thread_.join();
  return true;
}

}  // namespace gpumon::http::testing
