// Scraping (scrape::HttpFetchWith) a target secured by a web config: TLS
// with a private CA, client certificates, basic auth and bearer tokens.
#include <gtest/gtest.h>

#include <thread>

#include "scrape/http_fetch.h"
#include "test_certs.h"
#include "web/http_server.h"

namespace gpumon::web {
namespace {

using scrape::HttpClientConfig;
using scrape::HttpFetchWith;
using testing::TempDir;

constexpr char kBody[] = "# TYPE up gauge\nup 1\n";

class ScrapeHttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_TRUE(testing::MakeTestCerts(dir_.path(), &certs_));
  }
  void TearDown() override {
    if (thread_.joinable()) {
      server_->Stop();
      thread_.join();
    }
  }
  // Starts a target on /metrics; it also answers /bearer with the
  // Authorization header it received.
  void Start(const WebConfig& web) {
    server_ = std::make_unique<HttpServer>(HttpServerOptions{.threads = 2}, web);
    auto& router = server_->router();
    router.Get("/metrics", [](const http::HttpRequest&, http::HttpResponse& res) {
      res.SetContent(kBody, "text/plain; version=0.0.4");
    });
    router.Get("/bearer", [](const http::HttpRequest& req, http::HttpResponse& res) {
      res.SetContent(req.Header("Authorization"), "text/plain");
    });
    router.Get("/host", [](const http::HttpRequest& req, http::HttpResponse& res) {
      res.SetContent(req.Header("Host"), "text/plain");
    });
    ASSERT_TRUE(server_->Bind("127.0.0.1:0").ok());
    thread_ = std::thread([this] { (void)server_->Run(); });
  }
  WebConfig Tls() const {
    WebConfig c;
    c.tls.cert_file = certs_.server_cert;
    c.tls.key_file = certs_.server_key;
    return c;
  }
  std::string Url(const std::string& scheme, const std::string& path) const {
    return scheme + "://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  Result<scrape::FetchResult> Fetch(const std::string& url, const HttpClientConfig& http) {
    return HttpFetchWith(url, 10000, 0, http);
  }

  TempDir dir_;
  testing::TestCerts certs_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST_F(ScrapeHttpsTest, CaFileAndBasicAuth) {
  WebConfig web = Tls();
  web.basic_auth_users["prom"] = testing::BcryptHash("s3cret");
  Start(web);
  HttpClientConfig http;
  http.tls_ca_file = certs_.ca_cert;
  http.basic_auth_username = "prom";
  http.basic_auth_password = "s3cret";
  auto res = Fetch(Url("https", "/metrics"), http);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->body, kBody);

  http.basic_auth_password = "wrong";
  res = Fetch(Url("https", "/metrics"), http);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().message(), "server returned HTTP status 401 Unauthorized");
}

TEST_F(ScrapeHttpsTest, PasswordFileIsReadAtEachScrape) {
  WebConfig web = Tls();
  web.basic_auth_users["prom"] = testing::BcryptHash("first");
  Start(web);
  HttpClientConfig http;
  http.tls_ca_file = certs_.ca_cert;
  http.basic_auth_username = "prom";
  http.basic_auth_password_file = dir_.Write("password", "first\n");
  EXPECT_TRUE(Fetch(Url("https", "/metrics"), http).ok());
  dir_.Write("password", "second\n");
  EXPECT_FALSE(Fetch(Url("https", "/metrics"), http).ok());
  http.basic_auth_password_file = dir_.path() + "/absent";
  auto res = Fetch(Url("https", "/metrics"), http);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("absent"), std::string::npos);
}

TEST_F(ScrapeHttpsTest, UnknownCaFailsUnlessInsecure) {
  Start(Tls());
  HttpClientConfig http;  // system CAs only
  auto res = Fetch(Url("https", "/metrics"), http);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("certificate"), std::string::npos)
      << res.status().message();
  http.tls_insecure_skip_verify = true;
  res = Fetch(Url("https", "/metrics"), http);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->body, kBody);
}

TEST_F(ScrapeHttpsTest, ServerName) {
  Start(Tls());
  HttpClientConfig http;
  http.tls_ca_file = certs_.ca_cert;
  http.tls_server_name = "localhost";  // in the certificate
  auto res = Fetch(Url("https", "/host"), http);
  ASSERT_TRUE(res.ok()) << res.status().message();
  // The Host header still names the URL's host.
  EXPECT_EQ(res->body, "127.0.0.1:" + std::to_string(server_->port()));
  http.tls_server_name = "other.example";  // not in the certificate
  EXPECT_FALSE(Fetch(Url("https", "/metrics"), http).ok());
}

TEST_F(ScrapeHttpsTest, ClientCertificate) {
  WebConfig web = Tls();
  web.tls.client_auth = ClientAuth::kRequireAndVerifyClientCert;
  web.tls.client_ca_file = certs_.ca_cert;
  Start(web);
  HttpClientConfig http;
  http.tls_ca_file = certs_.ca_cert;
  EXPECT_FALSE(Fetch(Url("https", "/metrics"), http).ok());
  http.tls_cert_file = certs_.client_cert;
  http.tls_key_file = certs_.client_key;
  auto res = Fetch(Url("https", "/metrics"), http);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->body, kBody);
  http.tls_cert_file = dir_.path() + "/absent.pem";
  res = Fetch(Url("https", "/metrics"), http);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("absent.pem"), std::string::npos);
}

TEST_F(ScrapeHttpsTest, Authorization) {
  Start(Tls());
  HttpClientConfig http;
  http.tls_ca_file = certs_.ca_cert;
  http.authorization_credentials = "tok3n";
  auto res = Fetch(Url("https", "/bearer"), http);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->body, "Bearer tok3n");

  http.authorization_type = "Token";
  http.authorization_credentials.clear();
  http.authorization_credentials_file = dir_.Write("token", "  from-file\n");
  res = Fetch(Url("https", "/bearer"), http);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->body, "Token from-file");
}

TEST_F(ScrapeHttpsTest, PlainHttpWithBasicAuth) {
  WebConfig web;
  web.basic_auth_users["prom"] = testing::BcryptHash("pw");
  Start(web);
  HttpClientConfig http;
  http.basic_auth_username = "prom";
  http.basic_auth_password = "pw";
  auto res = scrape::HttpFetcherFor(http)(Url("http", "/metrics"), 10000, 0);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->body, kBody);
  EXPECT_FALSE(scrape::HttpFetch(Url("http", "/metrics"), 10000, 0).ok());
}

}  // namespace
}  // namespace gpumon::web
