// Kept-alive scrapes of a target secured like a real one (our HttpServer
// with a web config: TLS with a private CA, client certificates, basic
// auth): connections are reused, credentials still checked on every
// request, and a rotated CA file gets a fresh connection.
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "scrape/http_fetch.h"
#include "test_certs.h"
#include "web/http_server.h"

namespace gpumon::scrape {
namespace {

using web::testing::TempDir;

constexpr char kBody[] = "# TYPE up gauge\nup 1\n";

class KeepAliveTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_TRUE(web::testing::MakeTestCerts(dir_.path(), &certs_));
  }
  void TearDown() override {
    if (thread_.joinable()) {
      server_->Stop();
      thread_.join();
    }
  }
  void Start(const web::WebConfig& web) {
    server_ = std::make_unique<web::HttpServer>(web::HttpServerOptions{.threads = 2}, web);
    server_->router().Get("/metrics",
                          [this](const http::HttpRequest& req, http::HttpResponse& res) {
                            {
                              std::lock_guard<std::mutex> lock(mu_);
                              peers_.insert(req.remote_address);  // "ip:port": one per connection
                            }
                            res.SetContent(kBody, "text/plain; version=0.0.4");
                          });
    ASSERT_TRUE(server_->Bind("127.0.0.1:0").ok());
    thread_ = std::thread([this] { (void)server_->Run(); });
  }
  std::string Url() const {
    return "https://127.0.0.1:" + std::to_string(server_->port()) + "/metrics";
  }
  size_t connections() {
    std::lock_guard<std::mutex> lock(mu_);
    return peers_.size();
  }
  web::WebConfig Secured() {
    web::WebConfig c;
    c.tls.cert_file = certs_.server_cert;
    c.tls.key_file = certs_.server_key;
    c.tls.client_auth = web::ClientAuth::kRequireAndVerifyClientCert;
    c.tls.client_ca_file = certs_.ca_cert;
    c.basic_auth_users["prom"] = web::testing::BcryptHash("s3cret");
    return c;
  }
  HttpClientConfig Client() {
    HttpClientConfig http;
    http.tls_ca_file = certs_.ca_cert;
    http.tls_cert_file = certs_.client_cert;
    http.tls_key_file = certs_.client_key;
    http.basic_auth_username = "prom";
    http.basic_auth_password_file = dir_.Write("password", "s3cret\n");
    return http;
  }

  TempDir dir_;
  web::testing::TestCerts certs_;
  std::unique_ptr<web::HttpServer> server_;
  std::thread thread_;
  std::mutex mu_;
  std::set<std::string> peers_;
};

TEST_F(KeepAliveTlsTest, ReusesTheTlsConnection) {
  Start(Secured());
  KeepAliveFetcher f(Client());
  for (int i = 0; i < 5; ++i) {
    auto r = f.Fetch(Url(), 10000, 0);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->body, kBody);
  }
  EXPECT_EQ(connections(), 1u);
}

TEST_F(KeepAliveTlsTest, CredentialsAreCheckedOnEveryRequest) {
  Start(Secured());
  HttpClientConfig http = Client();
  KeepAliveFetcher f(http);
  ASSERT_TRUE(f.Fetch(Url(), 10000, 0).ok());
  // The password file changes under a kept connection.
  dir_.Write("password", "wrong\n");
  auto denied = f.Fetch(Url(), 10000, 0);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().message(), "server returned HTTP status 401 Unauthorized");
  dir_.Write("password", "s3cret\n");
  auto again = f.Fetch(Url(), 10000, 0);
  ASSERT_TRUE(again.ok()) << again.status().message();
}

TEST_F(KeepAliveTlsTest, WithoutAClientCertificateTheHandshakeFails) {
  Start(Secured());
  HttpClientConfig http = Client();
  http.tls_cert_file.clear();
  http.tls_key_file.clear();
  KeepAliveFetcher f(http);
  EXPECT_FALSE(f.Fetch(Url(), 10000, 0).ok());
  EXPECT_FALSE(f.Fetch(Url(), 10000, 0).ok());
}

TEST_F(KeepAliveTlsTest, ServerNameConnectionsStayPerHost) {
  Start(Secured());
  HttpClientConfig http = Client();
  http.tls_server_name = "localhost";  // in the certificate
  KeepAliveFetcher f(http);
  for (int i = 0; i < 3; ++i) {
    auto r = f.Fetch(Url(), 10000, 0);
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  EXPECT_EQ(connections(), 1u);
  // Another host with the same server_name and port is another target:
  // nothing listens there, so it must not get the first host's connection.
  auto other =
      f.Fetch("https://127.0.0.2:" + std::to_string(server_->port()) + "/metrics", 10000, 0);
  EXPECT_FALSE(other.ok());
}

TEST_F(KeepAliveTlsTest, ARotatedCaFileGetsANewConnection) {
  Start(Secured());
  HttpClientConfig http = Client();
  KeepAliveFetcher f(http);
  ASSERT_TRUE(f.Fetch(Url(), 10000, 0).ok());
  ASSERT_TRUE(f.Fetch(Url(), 10000, 0).ok());
  EXPECT_EQ(connections(), 1u);
  // Same content, new file (as certificate rotation tools write them).
  const std::string rotated = certs_.ca_cert + ".new";
  std::filesystem::copy_file(certs_.ca_cert, rotated);
  std::filesystem::rename(rotated, certs_.ca_cert);
  auto r = f.Fetch(Url(), 10000, 0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(connections(), 2u);
  // A CA file that no longer verifies the server fails the next scrape.
  std::filesystem::copy_file(certs_.rogue_cert, rotated);
  std::filesystem::rename(rotated, certs_.ca_cert);
  EXPECT_FALSE(f.Fetch(Url(), 10000, 0).ok());
}

}  // namespace
}  // namespace gpumon::scrape
