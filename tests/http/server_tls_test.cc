// http::Server with TLS: handshake, requests, keep-alive, and what happens
// to peers that do not speak TLS.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "http/server.h"
#include "test_certs.h"
#include "test_client.h"

namespace gpumon::http {
namespace {

using namespace std::chrono_literals;
using testing::ParsedResponse;
using testing::RawClient;
using testing::TestServer;
using web::testing::MakeTestCerts;
using web::testing::TempDir;
using web::testing::TestCerts;

ServerOptions TlsOptions(const TestCerts& certs) {
  ServerOptions o;
  o.io_threads = 2;
  o.worker_threads = 2;
  o.configure_tls = [certs](SSL_CTX* ctx) -> Status {
    if (SSL_CTX_use_certificate_chain_file(ctx, certs.server_cert.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, certs.server_key.c_str(), SSL_FILETYPE_PEM) != 1) {
      return Status::Error("cannot load server certificate");
    }
    return Status::Ok();
  };
  return o;
}

Router HelloRouter() {
  Router r;
  r.Get("/hello", [](const HttpRequest& req, HttpResponse& res) {
    res.SetContent("hi " + req.Param("n"), "text/plain");
  });
  return r;
}

// A blocking TLS client verifying the server against the test CA.
class TlsClient {
 public:
  TlsClient(int port, const std::string& ca_file) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(ctx_, ca_file.c_str(), nullptr);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return;
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set1_host(ssl_, "localhost");
    SSL_set_tlsext_host_name(ssl_, "localhost");
    ok_ = SSL_connect(ssl_) == 1;
  }
  ~TlsClient() {
    if (ssl_) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
    SSL_CTX_free(ctx_);
  }
  bool handshake_ok() const { return ok_; }
  bool Send(const std::string& s) {
    return SSL_write(ssl_, s.data(), static_cast<int>(s.size())) == static_cast<int>(s.size());
  }
  // Reads until `needle` has arrived (or the connection ends).
  std::string ReadUntil(const std::string& needle) {
    char buf[4096];
    while (got_.find(needle) == std::string::npos) {
      const int n = SSL_read(ssl_, buf, sizeof(buf));
      if (n <= 0) break;
      got_.append(buf, static_cast<size_t>(n));
    }
    std::string out = std::move(got_);
    got_.clear();
    return out;
  }
  // True when the server ended the TLS session with close_notify.
  bool ReadsCleanClose() {
    char buf[256];
    const int n = SSL_read(ssl_, buf, sizeof(buf));
    return n == 0 && SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN;
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool ok_ = false;
  std::string got_;
};

class ServerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeTestCerts(dir_.path(), &certs_)); }
  TempDir dir_;
  TestCerts certs_;
};

TEST_F(ServerTlsTest, HandshakeAndKeepAliveRequests) {
  TestServer ts(HelloRouter(), TlsOptions(certs_));
  EXPECT_TRUE(ts.server().tls());
  TlsClient c(ts.port(), certs_.ca_cert);
  ASSERT_TRUE(c.handshake_ok());
  ASSERT_TRUE(c.Send("GET /hello?n=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  std::string r = c.ReadUntil("hi 1");
  EXPECT_TRUE(r.starts_with("HTTP/1.1 200 OK\r\n")) << r;
  EXPECT_NE(r.find("Content-Length: 4\r\n"), std::string::npos) << r;
  ASSERT_TRUE(c.Send("GET /hello?n=2 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"));
  r = c.ReadUntil("hi 2");
  EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos) << r;
  EXPECT_TRUE(c.ReadsCleanClose());
}

TEST_F(ServerTlsTest, PlaintextClientIsClosed) {
  TestServer ts(HelloRouter(), TlsOptions(certs_));
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::string got;
  ASSERT_TRUE(c.ReadUntilClosed(&got));
  EXPECT_EQ(got.find("hi"), std::string::npos);
}

TEST_F(ServerTlsTest, SilentClientClosedAfterHeaderTimeout) {
  ServerOptions o = TlsOptions(certs_);
  o.limits.header_timeout = 300ms;
  TestServer ts(HelloRouter(), o);
  RawClient c(ts.port());
  std::string got;
  ASSERT_TRUE(c.ReadUntilClosed(&got, 10s));
  EXPECT_EQ(ts.server().Stats().timeouts, 1u);
}

TEST_F(ServerTlsTest, ConfigureErrorFailsBind) {
  ServerOptions o;
  o.configure_tls = [](SSL_CTX*) { return Status::Error("bad cert"); };
  Server s(HelloRouter(), o);
  const Status st = s.Bind("127.0.0.1", 0);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bad cert"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::http
