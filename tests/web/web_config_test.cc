#include "web/web_config.h"

#include <gtest/gtest.h>

#include "test_certs.h"

namespace gpumon::web {
namespace {

using testing::TempDir;

class WebConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_TRUE(testing::MakeTestCerts(dir_.path(), &certs_));
  }
  Result<WebConfig> Load(const std::string& yaml) {
    return LoadWebConfig(dir_.Write("web.yml", yaml));
  }
  // The error message of loading `yaml`, or "" when it loads.
  std::string Error(const std::string& yaml) {
    auto c = Load(yaml);
    return c.ok() ? "" : c.status().message();
  }
  TempDir dir_;
  testing::TestCerts certs_;
};

TEST_F(WebConfigTest, EmptyFileIsPlainHttpWithoutAuth) {
  auto c = Load("");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->tls.enabled());
  EXPECT_TRUE(c->basic_auth_users.empty());
  EXPECT_TRUE(c->headers.empty());
}

TEST_F(WebConfigTest, FullConfigWithRelativePaths) {
  const std::string hash = testing::BcryptHash("secret");
  ASSERT_FALSE(hash.empty());
  auto c = Load(
      "tls_server_config:\n"
      "  cert_file: server.pem\n"
      "  key_file: server.key\n"
      "  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: ca.pem\n"
      "  min_version: TLS13\n"
      "  max_version: TLS13\n"
      "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]\n"
      "  curve_preferences: [X25519, CurveP256]\n"
      "  prefer_server_cipher_suites: false\n"
      "http_server_config:\n"
      "  http2: false\n"
      "  headers:\n"
      "    X-Frame-Options: deny\n"
      "    Strict-Transport-Security: max-age=31536000\n"
      "basic_auth_users:\n"
      "  alice: " +
      hash + "\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tls.cert_file, certs_.server_cert);
  EXPECT_EQ(c->tls.key_file, certs_.server_key);
  EXPECT_EQ(c->tls.client_ca_file, certs_.ca_cert);
  EXPECT_EQ(c->tls.client_auth, ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(c->tls.min_version, kTls13);
  EXPECT_EQ(c->tls.max_version, kTls13);
  EXPECT_EQ(c->tls.cipher_suites.size(), 2u);
  EXPECT_EQ(c->tls.curve_preferences, (std::vector<std::string>{"X25519", "CurveP256"}));
  EXPECT_FALSE(c->tls.prefer_server_cipher_suites);
  EXPECT_FALSE(c->http2);
  ASSERT_EQ(c->headers.size(), 2u);
  EXPECT_EQ(c->headers[0], std::make_pair(std::string("X-Frame-Options"), std::string("deny")));
  EXPECT_EQ(c->basic_auth_users.at("alice"), hash);
}

TEST_F(WebConfigTest, Defaults) {
  auto c = Load("tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tls.min_version, kTls12);
  EXPECT_EQ(c->tls.max_version, kTls13);
  EXPECT_EQ(c->tls.client_auth, ClientAuth::kNoClientCert);
  EXPECT_TRUE(c->tls.prefer_server_cipher_suites);
  EXPECT_TRUE(c->http2);
}

TEST_F(WebConfigTest, AbsolutePathsStay) {
  auto c = Load("tls_server_config:\n  cert_file: " + certs_.server_cert +
                "\n  key_file: " + certs_.server_key + "\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tls.cert_file, certs_.server_cert);
}

TEST_F(WebConfigTest, LegacyRequireClientCert) {
  auto c = Load(
      "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
      "  client_auth_type: RequireClientCert\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tls.client_auth, ClientAuth::kRequireAnyClientCert);
}

// Each error names the file, the line and the field.
TEST_F(WebConfigTest, Errors) {
  const std::string file = dir_.path() + "/web.yml";
  struct Case {
    std::string yaml;
    std::string expected;  // substring of the message
  };
  const std::vector<Case> cases = {
      {"tls_config: {}\n", file + ":1:1: field \"tls_config\": unknown field"},
      {"tls_server_config:\n  cert_file: server.pem\n  certfile: x\n",
       file + ":3:3: field \"tls_server_config.certfile\": unknown field"},
      {"http_server_config:\n  http3: true\n", ":2:3: field \"http_server_config.http3\""},
      {"tls_server_config:\n  key_file: server.key\n", "missing cert_file"},
      {"tls_server_config:\n  cert_file: server.pem\n", "missing key_file"},
      {"tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n", "missing cert_file"},
      {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
       "  client_ca_file: ca.pem\n",
       "client CAs have been configured without a client_auth_type"},
      {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
       "  client_auth_type: RequireSomething\n",
       ":4:21: field \"tls_server_config.client_auth_type\": invalid client_auth_type"},
      {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
       "  min_version: TLS14\n",
       "field \"tls_server_config.min_version\": unknown TLS version: TLS14"},
      {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
       "  cipher_suites: [TLS_INVENTED]\n",
       "unknown cipher: TLS_INVENTED"},
      {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
       "  curve_preferences: [CurveP999]\n",
       "unknown curve: CurveP999"},
      {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
       "  prefer_server_cipher_suites: perhaps\n",
       "expected true or false"},
      {"tls_server_config:\n  cert_file: missing.pem\n  key_file: server.key\n",
       "cannot load certificate cert_file"},
      {"tls_server_config:\n  cert_file: server.pem\n  key_file: client.key\n",
       "does not match cert_file"},
      {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
       "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: nowhere.pem\n",
       "client_ca_file"},
      {"http_server_config:\n  headers:\n    Server: gpumon\n",
       ":3:5: field \"http_server_config.headers.Server\": HTTP header \"Server\" can not be "
       "configured"},
      {"http_server_config:\n  headers:\n    X-Frame-Options: allow\n", "invalid value \"allow\""},
      {"http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n",
       "expected one of \"nosniff\""},
      {"basic_auth_users:\n  alice: plaintext\n",
       ":2:10: field \"basic_auth_users.alice\": not a bcrypt hash"},
      {"basic_auth_users:\n  alice: $2b$99$" + std::string(53, 'a') + "\n", "bcrypt cost 99"},
      {"basic_auth_users:\n  alice: " + testing::BcryptHash("a") +
           "\n  alice: " + testing::BcryptHash("b") + "\n",
       ":3:3: field \"basic_auth_users.alice\": duplicate key"},
      {"- a\n- b\n", "expected a mapping"},
      {"tls_server_config: [1, 2]\n", "field \"tls_server_config\": expected a mapping"},
      {"tls_server_config:\n  cert_file: [a]\n", "expected a string"},
      {"tls_server_config: {cert_file: \"a\"\n", file + ":2:1: invalid YAML"},
  };
  for (const auto& c : cases) {
    const std::string message = Error(c.yaml);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "config:\n"
        << c.yaml << "message: " << message << "\nexpected: " << c.expected;
  }
}

TEST(WebConfigFileTest, MissingFile) {
  auto c = LoadWebConfig("/nonexistent/web.yml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/nonexistent/web.yml"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::web
