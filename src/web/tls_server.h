// Server-side TLS from a web config's tls_server_config, on OpenSSL.
//
// Contract: ConfigureServerTls() loads the certificate chain and key, sets
// the protocol range, cipher suites (Go names mapped to OpenSSL's),
// curves, server cipher preference, and the client-certificate policy:
//   NoClientCert                no certificate requested
//   RequestClientCert           requested, not required, not verified
//   RequireAnyClientCert        required, not verified
//   VerifyClientCertIfGiven     requested, verified against client_ca_file
//   RequireAndVerifyClientCert  required and verified
// (verification uses the system CA store when client_ca_file is empty, as
// Go does). Any failure is returned naming the file or the field.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "common/status.h"
#include "web/web_config.h"

namespace gpumon::web {

Status ConfigureServerTls(SSL_CTX* ctx, const TlsServerConfig& config);

// Maps a Go cipher suite name to OpenSSL's: false when Go does not accept
// the name (unknown, or on Go's insecure list); "" for the TLS 1.3 suites,
// which are not configurable (in Go as here).
bool GoCipherToOpenSsl(const std::string& go_name, std::string* openssl_name);

// "CurveP256" -> "P-256" etc.; false for unknown names.
bool GoCurveToOpenSsl(const std::string& go_name, std::string* openssl_name);

}  // namespace gpumon::web
