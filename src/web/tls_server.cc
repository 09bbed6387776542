#include "web/tls_server.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <array>
#include <string_view>

namespace gpumon::web {
namespace {

struct NamePair {
  std::string_view go;
  std::string_view openssl;  // empty: a TLS 1.3 suite
};

// Go's tls.CipherSuites() (the secure list; insecure ones are rejected in
// the file as Go rejects them).
constexpr std::array<NamePair, 17> kCiphers = {{
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_AES_128_GCM_SHA256", ""},
    {"TLS_AES_256_GCM_SHA384", ""},
    {"TLS_CHACHA20_POLY1305_SHA256", ""},
}};

constexpr std::array<NamePair, 4> kCurves = {{
    {"CurveP256", "P-256"},
    {"CurveP384", "P-384"},
    {"CurveP521", "P-521"},
    {"X25519", "X25519"},
}};

// The newest OpenSSL error, for messages.
std::string OpenSslError() {
  unsigned long code = ERR_get_error();  // NOLINT(runtime/int): OpenSSL's type
  unsigned long last = code;             // NOLINT(runtime/int)
  while (code != 0) {
    last = code;
    code = ERR_get_error();
  }
  if (last == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(last, buf, sizeof buf);
  return buf;
}

// Accepts any presented certificate: the policy asks for one without
// verifying it (RequestClientCert, RequireAnyClientCert).
int AcceptAnyCertificate(int /*preverify_ok*/, X509_STORE_CTX* /*ctx*/) { return 1; }

}  // namespace

bool GoCipherToOpenSsl(const std::string& go_name, std::string* openssl_name) {
  for (const auto& c : kCiphers) {
    if (c.go == go_name) {
      *openssl_name = std::string(c.openssl);
      return true;
    }
  }
  return false;
}

bool GoCurveToOpenSsl(const std::string& go_name, std::string* openssl_name) {
  for (const auto& c : kCurves) {
    if (c.go == go_name) {
      *openssl_name = std::string(c.openssl);
      return true;
    }
  }
  return false;
}

Status ConfigureServerTls(SSL_CTX* ctx, const TlsServerConfig& config) {
  ERR_clear_error();
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION |
                               SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(ctx, config.cert_file.c_str()) != 1) {
    return Status::Error("cannot load certificate cert_file \"" + config.cert_file +
                         "\": " + OpenSslError());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, config.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return Status::Error("key_file \"" + config.key_file + "\" does not match cert_file \"" +
                           config.cert_file + "\"");
    }
    return Status::Error("cannot load private key key_file \"" + config.key_file +
                         "\": " + OpenSslError());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Status::Error("key_file \"" + config.key_file + "\" does not match cert_file \"" +
                         config.cert_file + "\"");
  }
  if (SSL_CTX_set_min_proto_version(ctx, config.min_version) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, config.max_version) != 1) {
    return Status::Error("unsupported min_version/max_version: " + OpenSslError());
  }
  if (config.prefer_server_cipher_suites) {
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  } else {
    SSL_CTX_clear_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  }
  std::string ciphers;
  for (const auto& name : config.cipher_suites) {
    std::string openssl;
    if (!GoCipherToOpenSsl(name, &openssl)) return Status::Error("unknown cipher: " + name);
    if (openssl.empty()) continue;  // TLS 1.3 suites are not configurable
    if (!ciphers.empty()) ciphers += ':';
    ciphers += openssl;
  }
  if (!ciphers.empty() && SSL_CTX_set_cipher_list(ctx, ciphers.c_str()) != 1) {
    return Status::Error("cipher_suites not available: " + OpenSslError());
  }
  std::string groups;
  for (const auto& name : config.curve_preferences) {
    std::string openssl;
    if (!GoCurveToOpenSsl(name, &openssl)) return Status::Error("unknown curve: " + name);
    if (!groups.empty()) groups += ':';
    groups += openssl;
  }
  if (!groups.empty() && SSL_CTX_set1_groups_list(ctx, groups.c_str()) != 1) {
    return Status::Error("curve_preferences not available: " + OpenSslError());
  }

  const bool verify = config.client_auth == ClientAuth::kVerifyClientCertIfGiven ||
                      config.client_auth == ClientAuth::kRequireAndVerifyClientCert;
  if (!config.client_ca_file.empty()) {
    if (verify && SSL_CTX_load_verify_locations(ctx, config.client_ca_file.c_str(), nullptr) != 1) {
      return Status::Error("cannot load client_ca_file \"" + config.client_ca_file +
                           "\": " + OpenSslError());
    }
    // Tells clients which CAs we accept, so they pick the right certificate.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.client_ca_file.c_str());
    if (names == nullptr) {
      return Status::Error("cannot load client_ca_file \"" + config.client_ca_file +
                           "\": no certificates found");
    }
    SSL_CTX_set_client_CA_list(ctx, names);
  } else if (verify && SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return Status::Error("cannot load the system CA certificates: " + OpenSslError());
  }
  switch (config.client_auth) {
    case ClientAuth::kNoClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::kRequestClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, AcceptAnyCertificate);
      break;
    case ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         AcceptAnyCertificate);
      break;
    case ClientAuth::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  return Status::Ok();
}

}  // namespace gpumon::web
