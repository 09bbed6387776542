#include "test_certs.h"

#include <crypt.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

namespace gpumon::web::testing {
namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

KeyPtr NewKey() { return KeyPtr(EVP_EC_gen("P-256"), EVP_PKEY_free); }

bool AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named `cn`, signed by issuer_key (self-signed
// when issuer is null).
CertPtr NewCert(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key, bool ca,
                const char* san, const char* eku, long serial) {  // NOLINT(runtime/int)
  CertPtr cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600L * 24 * 365);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  bool ok = AddExt(cert.get(), signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (ca) ok = ok && AddExt(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  if (san) ok = ok && AddExt(cert.get(), signer, NID_subject_alt_name, san);
  if (eku) ok = ok && AddExt(cert.get(), signer, NID_ext_key_usage, eku);
  if (!ok || X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0) {
    return CertPtr(nullptr, X509_free);
  }
  return cert;
}

bool WritePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = cert ? PEM_write_X509(f, cert) == 1
                       : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpumon-web-XXXXXX").string();
  if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

bool MakeTestCerts(const std::string& dir, TestCerts* out) {
  out->dir = dir;
  out->ca_cert = dir + "/ca.pem";
  out->server_cert = dir + "/server.pem";
  out->server_key = dir + "/server.key";
  out->client_cert = dir + "/client.pem";
  out->client_key = dir + "/client.key";
  out->rogue_cert = dir + "/rogue.pem";
  out->rogue_key = dir + "/rogue.key";
  KeyPtr ca_key = NewKey(), server_key = NewKey(), client_key = NewKey(), rogue_key = NewKey();
  if (!ca_key || !server_key || !client_key || !rogue_key) return false;
  CertPtr ca = NewCert(ca_key.get(), "gpumon test CA", nullptr, nullptr, true, nullptr, nullptr, 1);
  if (!ca) return false;
  CertPtr server = NewCert(server_key.get(), "localhost", ca.get(), ca_key.get(), false,
                           "DNS:localhost,IP:127.0.0.1", "serverAuth", 2);
  CertPtr client =
      NewCert(client_key.get(), "scraper", ca.get(), ca_key.get(), false, nullptr, "clientAuth", 3);
  CertPtr rogue =
      NewCert(rogue_key.get(), "rogue", nullptr, nullptr, false, nullptr, "clientAuth", 4);
  if (!server || !client || !rogue) return false;
  return WritePem(out->ca_cert, ca.get(), nullptr) &&
         WritePem(out->server_cert, server.get(), nullptr) &&
         WritePem(out->server_key, nullptr, server_key.get()) &&
         WritePem(out->client_cert, client.get(), nullptr) &&
         WritePem(out->client_key, nullptr, client_key.get()) &&
         WritePem(out->rogue_cert, rogue.get(), nullptr) &&
         WritePem(out->rogue_key, nullptr, rogue_key.get());
}

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = dir + "/" + name;
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string BcryptHash(const std::string& password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt) == nullptr) return "";
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  const char* hash = crypt_r(password.c_str(), salt, data.get());
  return hash && hash[0] != '*' ? hash : "";
}

}  // namespace gpumon::web::testing
