// Interoperability: every web config file here gets the same accept/reject
// answer from LoadWebConfig as from Prometheus's `promtool check
// web-config`. Skips when promtool is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "test_certs.h"
#include "web/web_config.h"

namespace gpumon::web {
namespace {

// True when promtool exits 0 for the file.
bool PromtoolAccepts(const std::string& promtool, const std::string& file) {
  const std::string cmd = "'" + promtool + "' check web-config '" + file + "' >/dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
}

TEST(WebConfigPromtoolTest, SameAnswerAsPromtool) {
  const std::string promtool = testing::FindOnPath("promtool");
  if (promtool.empty()) GTEST_SKIP() << "promtool not installed";
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  testing::TestCerts certs;
  ASSERT_TRUE(testing::MakeTestCerts(dir.path(), &certs));
  std::string hash = testing::BcryptHash("pw");
  ASSERT_FALSE(hash.empty());
  std::string hash_y = hash;
  hash_y[2] = 'y';  // as htpasswd -B writes them
  const std::string tls = "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n";

  struct Case {
    const char* name;
    std::string yaml;
    bool valid;  // what the exporter-toolkit documentation says
  };
  const std::vector<Case> cases = {
      {"empty", "", true},
      {"tls", tls, true},
      {"tls_all_fields",
       tls + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
             "  min_version: TLS11\n  max_version: TLS13\n"
             "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n"
             "  curve_preferences: [X25519, CurveP384]\n  prefer_server_cipher_suites: false\n",
       true},
      {"missing_key", "tls_server_config:\n  cert_file: server.pem\n", false},
      {"missing_cert_file", "tls_server_config:\n  cert_file: nope.pem\n  key_file: server.key\n",
       false},
      {"key_mismatch", "tls_server_config:\n  cert_file: server.pem\n  key_file: client.key\n",
       false},
      {"unknown_tls_field", tls + "  client_allowed_sans: [a]\n", false},
      {"unknown_top_field", "web:\n  x: 1\n", false},
      {"bad_client_auth", tls + "  client_auth_type: Always\n", false},
      {"ca_without_client_auth", tls + "  client_ca_file: ca.pem\n", false},
      {"legacy_require_client_cert", tls + "  client_auth_type: RequireClientCert\n", true},
      {"bad_tls_version", tls + "  min_version: TLS1.2\n", false},
      {"unknown_cipher", tls + "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", false},
      {"unknown_curve", tls + "  curve_preferences: [CurveP224]\n", false},
      {"users_2b", "basic_auth_users:\n  alice: " + hash + "\n", true},
      {"users_2y_with_tls", tls + "basic_auth_users:\n  alice: " + hash_y + "\n", true},
      {"plaintext_password", "basic_auth_users:\n  alice: pw\n", false},
      {"duplicate_user", "basic_auth_users:\n  alice: " + hash + "\n  alice: " + hash_y + "\n",
       false},
      {"headers",
       "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: sameorigin\n"
       "    X-Content-Type-Options: nosniff\n    Content-Security-Policy: default-src 'self'\n",
       true},
      {"forbidden_header", "http_server_config:\n  headers:\n    Server: x\n", false},
      {"bad_header_value", "http_server_config:\n  headers:\n    X-Frame-Options: allow\n", false},
      {"unknown_http_field", "http_server_config:\n  rate_limit: {}\n", false},
  };
  for (const auto& c : cases) {
    const std::string file = dir.Write(std::string(c.name) + ".yml", c.yaml);
    const bool ours = LoadWebConfig(file).ok();
    const bool theirs = PromtoolAccepts(promtool, file);
    EXPECT_EQ(theirs, c.valid) << c.name << ": promtool disagrees with the documentation";
    EXPECT_EQ(ours, theirs) << c.name << ": ours " << (ours ? "accepts" : "rejects")
                            << ", promtool " << (theirs ? "accepts" : "rejects") << "\n"
                            << (ours ? "" : LoadWebConfig(file).status().message());
  }
}

}  // namespace
}  // namespace gpumon::web
