// HttpServer with a web config: TLS, client certificates, basic auth and
// response headers, exercised with real TLS clients over loopback.
#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "test_certs.h"
#include "web/http_server.h"
#include "web/web_config.h"

namespace gpumon::web {
namespace {

using testing::TempDir;

// Serves "hello" on GET /hello ("posted" on POST) under a web config until
// destroyed.
class Running {
 public:
  explicit Running(std::optional<WebConfig> web)
      : server_(HttpServerOptions{.threads = 2}, std::move(web)) {
    server_.router().Get("/hello", [](const http::HttpRequest&, http::HttpResponse& res) {
      res.SetContent("hello", "text/plain");
    });
    server_.router().Post("/hello", [](const http::HttpRequest&, http::HttpResponse& res) {
      res.SetContent("posted", "text/plain");
    });
    bind_ = server_.Bind("127.0.0.1:0");
    if (bind_.ok()) thread_ = std::thread([this] { (void)server_.Run(); });
  }
  ~Running() {
    if (thread_.joinable()) {
      server_.Stop();
      thread_.join();
    }
  }
  const Status& bind() const { return bind_; }
  int port() const { return server_.port(); }

 private:
  HttpServer server_;
  Status bind_;
  std::thread thread_;
};

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_TRUE(testing::MakeTestCerts(dir_.path(), &certs_));
  }
  WebConfig Tls(ClientAuth auth = ClientAuth::kNoClientCert) {
    WebConfig c;
    c.file = dir_.path() + "/web.yml";
    c.tls.cert_file = certs_.server_cert;
    c.tls.key_file = certs_.server_key;
    c.tls.client_auth = auth;
    if (auth != ClientAuth::kNoClientCert) c.tls.client_ca_file = certs_.ca_cert;
    return c;
  }
  // An HTTPS client trusting the test CA, optionally with a client cert.
  std::unique_ptr<httplib::SSLClient> Client(int port, const std::string& cert = "",
                                             const std::string& key = "") {
    auto client = cert.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", port)
                               : std::make_unique<httplib::SSLClient>("127.0.0.1", port, cert, key);
    client->set_ca_cert_path(certs_.ca_cert.c_str());
    client->enable_server_certificate_verification(true);
    return client;
  }
  TempDir dir_;
  testing::TestCerts certs_;
};

TEST_F(SecurityTest, ServesHttpsToAClientTrustingTheCa) {
  Running server(Tls());
  ASSERT_TRUE(server.bind().ok()) << server.bind().message();
  auto client = Client(server.port());
  auto res = client->Get("/hello");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "hello");
}

TEST_F(SecurityTest, PlainHttpToTlsPortFails) {
  Running server(Tls());
  ASSERT_TRUE(server.bind().ok());
  httplib::Client plain("127.0.0.1", server.port());
  plain.set_read_timeout(5, 0);
  auto res = plain.Get("/hello");
  EXPECT_FALSE(res && res->status == 200 && res->body == "hello");
}

TEST_F(SecurityTest, ClientNotTrustingTheCaFails) {
  Running server(Tls());
  ASSERT_TRUE(server.bind().ok());
  httplib::SSLClient client("127.0.0.1", server.port());
  client.set_ca_cert_path(certs_.rogue_cert.c_str());  // some other CA
  client.enable_server_certificate_verification(true);
  auto res = client.Get("/hello");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::SSLServerVerification);
}

TEST_F(SecurityTest, RequireAndVerifyClientCert) {
  Running server(Tls(ClientAuth::kRequireAndVerifyClientCert));
  ASSERT_TRUE(server.bind().ok()) << server.bind().message();
  EXPECT_FALSE(Client(server.port())->Get("/hello")) << "no client certificate";
  EXPECT_FALSE(Client(server.port(), certs_.rogue_cert, certs_.rogue_key)->Get("/hello"))
      << "certificate from an unknown CA";
  auto res = Client(server.port(), certs_.client_cert, certs_.client_key)->Get("/hello");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->body, "hello");
}

TEST_F(SecurityTest, RequireAnyClientCertDoesNotVerify) {
  Running server(Tls(ClientAuth::kRequireAnyClientCert));
  ASSERT_TRUE(server.bind().ok());
  EXPECT_FALSE(Client(server.port())->Get("/hello"));
  auto res = Client(server.port(), certs_.rogue_cert, certs_.rogue_key)->Get("/hello");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
}

TEST_F(SecurityTest, VerifyClientCertIfGiven) {
  Running server(Tls(ClientAuth::kVerifyClientCertIfGiven));
  ASSERT_TRUE(server.bind().ok());
  auto none = Client(server.port())->Get("/hello");
  ASSERT_TRUE(none) << httplib::to_string(none.error());
  EXPECT_EQ(none->status, 200);
  EXPECT_FALSE(Client(server.port(), certs_.rogue_cert, certs_.rogue_key)->Get("/hello"));
  EXPECT_TRUE(Client(server.port(), certs_.client_cert, certs_.client_key)->Get("/hello"));
}

TEST_F(SecurityTest, MinVersionRejectsOlderClients) {
  WebConfig c = Tls();
  c.tls.min_version = kTls13;
  Running server(c);
  ASSERT_TRUE(server.bind().ok());
  auto old_client = Client(server.port());
  SSL_CTX_set_max_proto_version(old_client->ssl_context(), TLS1_2_VERSION);
  EXPECT_FALSE(old_client->Get("/hello"));
  EXPECT_TRUE(Client(server.port())->Get("/hello"));
}

TEST_F(SecurityTest, BadTlsFilesAreReportedByBind) {
  WebConfig c = Tls();
  c.tls.cert_file = dir_.path() + "/gone.pem";
  Running server(c);
  ASSERT_FALSE(server.bind().ok());
  EXPECT_NE(server.bind().message().find("gone.pem"), std::string::npos);
}

TEST_F(SecurityTest, BasicAuthOnEveryRoute) {
  WebConfig c;
  c.basic_auth_users["alice"] = testing::BcryptHash("wonderland");
  c.basic_auth_users["bob"] = testing::BcryptHash("builder");
  Running server(c);
  ASSERT_TRUE(server.bind().ok());
  httplib::Client client("127.0.0.1", server.port());

  auto none = client.Get("/hello");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Basic");
  EXPECT_EQ(none->body.find("hello"), std::string::npos);

  // Every path needs credentials, as exporter-toolkit answers: without
  // them an unknown path is 401 too, so routes are not revealed.
  auto unrouted = client.Get("/no/such/path");
  ASSERT_TRUE(unrouted);
  EXPECT_EQ(unrouted->status, 401);

  // A password followed by a NUL byte and junk is not the password.
  {
    httplib::Client nul("127.0.0.1", server.port());
    nul.set_basic_auth("alice", std::string("wonderland\0junk", 15));
    auto res = nul.Get("/hello");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401);
  }

  auto post = client.Post("/hello", "body", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 401);
  EXPECT_EQ(post->body.find("posted"), std::string::npos);

  for (const auto& [user, password] : std::vector<std::pair<std::string, std::string>>{
           {"alice", "builder"}, {"carol", "wonderland"}, {"alice", ""}, {"", "wonderland"}}) {
    httplib::Client wrong("127.0.0.1", server.port());
    wrong.set_basic_auth(user, password);
    auto res = wrong.Get("/hello");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401) << user << ":" << password;
  }
  for (int i = 0; i < 2; ++i) {  // the second check is answered from the cache
    for (const auto& [user, password] : std::vector<std::pair<std::string, std::string>>{
             {"alice", "wonderland"}, {"bob", "builder"}}) {
      httplib::Client ok("127.0.0.1", server.port());
      ok.set_basic_auth(user, password);
      auto res = ok.Get("/hello");
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, 200) << user;
      EXPECT_EQ(res->body, "hello");
    }
  }
  httplib::Client ok("127.0.0.1", server.port());
  ok.set_basic_auth("alice", "wonderland");
  auto missing = ok.Get("/no/such/path");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST_F(SecurityTest, TlsWithBasicAuthAndHeaders) {
  WebConfig c = Tls();
  c.basic_auth_users["alice"] = testing::BcryptHash("wonderland");
  c.headers = {{"X-Frame-Options", "deny"}, {"Strict-Transport-Security", "max-age=60"}};
  Running server(c);
  ASSERT_TRUE(server.bind().ok());
  auto denied = Client(server.port())->Get("/hello");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  EXPECT_EQ(denied->get_header_value("X-Frame-Options"), "deny");
  auto client = Client(server.port());
  client->set_basic_auth("alice", "wonderland");
  auto res = client->Get("/hello");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("X-Frame-Options"), "deny");
  EXPECT_EQ(res->get_header_value("Strict-Transport-Security"), "max-age=60");
}

TEST_F(SecurityTest, NoConfigKeepsPlainHttp) {
  Running server(std::nullopt);
  ASSERT_TRUE(server.bind().ok());
  httplib::Client client("127.0.0.1", server.port());
  auto res = client.Get("/hello");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_FALSE(res->has_header("WWW-Authenticate"));
}

}  // namespace
}  // namespace gpumon::web
