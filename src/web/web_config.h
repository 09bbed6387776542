// WebConfig: the web configuration file of Prometheus's exporter-toolkit
// (`--web.config.file`), which secures every HTTP endpoint we serve.
//
// Contract:
// - LoadWebConfig(path) reads and validates the file the way Prometheus 2.42
//   (`promtool check web-config`) does: top-level keys tls_server_config,
//   http_server_config and basic_auth_users; unknown or duplicate keys, bad
//   enum values, headers outside the allowed set, passwords that are not
//   bcrypt hashes, a TLS section without cert_file/key_file, and
//   client_ca_file without a client_auth_type are errors naming file, line
//   and field.
// - cert_file, key_file and client_ca_file are resolved relative to the
//   directory of the web config file. Loading also builds a TLS context from
//   them, so a certificate that does not load (or does not match its key) is
//   reported at startup.
// - An empty file is valid: plain HTTP, no authentication.
// - http_server_config.http2 is accepted and ignored (we serve HTTP/1.1
//   only; Prometheus treats it as "allow HTTP/2 when the client offers it").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace gpumon::web {

// Go's crypto/tls ClientAuthType, under the names the file uses.
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,
  kRequireAnyClientCert,
  kVerifyClientCertIfGiven,
  kRequireAndVerifyClientCert,
};

// TLS protocol versions as on the wire (0x0301 = TLS 1.0 ... 0x0304 = 1.3),
// which is also how OpenSSL numbers them.
inline constexpr int kTls10 = 0x0301;
inline constexpr int kTls11 = 0x0302;
inline constexpr int kTls12 = 0x0303;
inline constexpr int kTls13 = 0x0304;

struct TlsServerConfig {
  std::string cert_file;  // absolute after loading; empty: TLS off
  std::string key_file;
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  std::string client_ca_file;  // empty: the system's CA store
  int min_version = kTls12;
  int max_version = kTls13;
  // Go's names (e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); they restrict
  // TLS 1.0-1.2 only, as in Go. Empty: the library's defaults.
  std::vector<std::string> cipher_suites;
  std::vector<std::string> curve_preferences;  // CurveP256 ... X25519
  bool prefer_server_cipher_suites = true;

  bool enabled() const { return !cert_file.empty(); }
};

struct WebConfig {
  std::string file;  // where it was loaded from, for messages
  TlsServerConfig tls;
  bool http2 = true;  // accepted for compatibility; HTTP/2 is never served
  // Extra response headers, sent on every response.
  std::vector<std::pair<std::string, std::string>> headers;
  // user -> bcrypt hash. Non-empty: every request needs basic auth.
  std::map<std::string, std::string> basic_auth_users;
};

// Reads `path` and validates it (including loading the TLS files).
Result<WebConfig> LoadWebConfig(const std::string& path);

// Parses YAML text; `file` names it in messages and relative paths are
// resolved against its directory. Does not touch the TLS files.
Result<WebConfig> ParseWebConfig(const std::string& yaml, const std::string& file);

// Go's name for a client auth type (for messages and logs).
const char* ClientAuthName(ClientAuth auth);

}  // namespace gpumon::web
