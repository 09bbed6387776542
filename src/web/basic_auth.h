// BasicAuth: checks HTTP basic-auth credentials against bcrypt hashes (a web
// config's basic_auth_users), as Prometheus's exporter-toolkit does.
//
// Contract:
// - Check(header) takes the request's Authorization header value and is
//   true only for "Basic <base64 user:password>" naming a configured user
//   whose bcrypt hash (libxcrypt crypt_r) matches the password.
// - An unknown user is checked against a fixed hash anyway, so response
//   time does not reveal which users exist.
// - Outcomes are cached (up to 100 entries, random eviction) keyed by a
//   SHA-256 of user, hash and password, because bcrypt costs tens of
//   milliseconds per check; the plaintext password is never stored.
//   bcrypt runs one at a time, bounding the CPU a flood of bad
//   passwords can take.
// - A password containing a NUL byte never matches: crypt_r() reads a C
//   string, so it would otherwise check only the part before the NUL.
// - CachedCheck() answers from the cache alone (never runs bcrypt):
//   nullopt when the credentials have not been checked yet, so the HTTP
//   server can decide on its network thread and defer only real checks.
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace gpumon::web {

class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users);

  bool Check(const std::string& authorization_header);
  std::optional<bool> CachedCheck(const std::string& authorization_header);

  // True when `password` matches the bcrypt `hash` (no caching).
  static bool VerifyBcrypt(const std::string& password, const std::string& hash);

  // Decodes "Basic dXNlcjpwYXNz" into user and password; false when it is
  // not a well-formed basic-auth value.
  static bool ParseHeader(const std::string& header, std::string* user, std::string* password);

 private:
  // One request's credentials, resolved against the configured users.
  struct Attempt {
    std::string password;
    std::string hash;  // the user's, or the fixed one for unknown users
    std::string key;   // of the outcome cache
    bool known = false;
  };
  // False when the header is not a usable basic-auth value (never matches).
  bool Resolve(const std::string& authorization_header, Attempt* out) const;
  std::optional<bool> Cached(const Attempt& attempt);

  std::map<std::string, std::string> users_;
  std::mutex cache_mu_;
  std::unordered_map<std::string, bool> cache_;
  std::mutex bcrypt_mu_;
};

}  // namespace gpumon::web
