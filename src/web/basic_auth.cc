#include "web/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>
#include <memory>
#include <random>

namespace gpumon::web {
namespace {

constexpr size_t kCacheSize = 100;

// bcrypt of a password nobody knows; compared against for unknown users.
constexpr char kUnknownUserHash[] = "$2b$10$KSBkM4dENz.CB0xaM5ZkUeXBSd6aqIwHMgfcyMpIU6fm8E9Pt2EbO";

std::string CacheKey(const std::string& user, const std::string& hash,
                     const std::string& password) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  // Length prefixes keep ("ab","c") and ("a","bc") apart.
  for (const std::string* part : {&user, &hash, &password}) {
    const uint64_t n = part->size();
    EVP_DigestUpdate(ctx.get(), &n, sizeof n);
    EVP_DigestUpdate(ctx.get(), part->data(), part->size());
  }
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  return std::string(reinterpret_cast<const char*>(digest), len);
}

}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {}

bool BasicAuth::ParseHeader(const std::string& header, std::string* user, std::string* password) {
  constexpr std::string_view kPrefix = "Basic ";
  if (header.size() < kPrefix.size()) return false;
  // The scheme name is case-insensitive (RFC 7617).
  for (size_t i = 0; i < kPrefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(kPrefix[i]))) {
      return false;
    }
  }
  const std::string encoded = header.substr(kPrefix.size());
  if (encoded.size() % 4 != 0) return false;
  std::string decoded(encoded.size() / 4 * 3 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                reinterpret_cast<const unsigned char*>(encoded.data()),
                                static_cast<int>(encoded.size()));
  if (n < 0) return false;
  size_t len = static_cast<size_t>(n);
  // EVP_DecodeBlock counts the bytes '=' padding stands for; drop them.
  for (size_t i = encoded.size(); i > 0 && encoded[i - 1] == '='; --i) --len;
  decoded.resize(len);
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  *user = decoded.substr(0, colon);
  *password = decoded.substr(colon + 1);
  return true;
}

bool BasicAuth::VerifyBcrypt(const std::string& password, const std::string& hash) {
  // crypt_data is about 32 KiB: too big for a worker thread's stack.
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  const char* out = crypt_r(password.c_str(), hash.c_str(), data.get());
  // On a bad setting crypt_r returns NULL or a string starting with '*'.
  if (out == nullptr || out[0] == '*') return false;
  const size_t len = std::strlen(out);
  return len == hash.size() && CRYPTO_memcmp(out, hash.data(), len) == 0;
}

bool BasicAuth::Resolve(const std::string& authorization_header, Attempt* out) const {
  std::string user;
  if (!ParseHeader(authorization_header, &user, &out->password)) return false;
  if (out->password.find('\0') != std::string::npos) return false;
  auto it = users_.find(user);
  out->known = it != users_.end();
  out->hash = out->known ? it->second : std::string(kUnknownUserHash);
  out->key = CacheKey(user, out->hash, out->password);
  return true;
}

std::optional<bool> BasicAuth::Cached(const Attempt& attempt) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  auto hit = cache_.find(attempt.key);
  if (hit == cache_.end()) return std::nullopt;
  return hit->second && attempt.known;
}

std::optional<bool> BasicAuth::CachedCheck(const std::string& authorization_header) {
  Attempt attempt;
  if (!Resolve(authorization_header, &attempt)) return false;
  return Cached(attempt);
}

bool BasicAuth::Check(const std::string& authorization_header) {
  Attempt attempt;
  if (!Resolve(authorization_header, &attempt)) return false;
  if (std::optional<bool> cached = Cached(attempt)) return *cached;
  bool ok;
  {
    std::lock_guard<std::mutex> lock(bcrypt_mu_);
    ok = VerifyBcrypt(attempt.password, attempt.hash) && attempt.known;
  }
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (cache_.size() >= kCacheSize) {
    // Drop about a tenth at random, so eviction is not needed on every miss.
    thread_local std::mt19937 rng{std::random_device{}()};
    size_t drop = std::max<size_t>(1, cache_.size() / 10);
    while (drop-- > 0 && !cache_.empty()) {
      auto victim = cache_.begin();
      std::advance(victim, std::uniform_int_distribution<size_t>(0, cache_.size() - 1)(rng));
      cache_.erase(victim);
    }
  }
  cache_[attempt.key] = ok;
  return ok;
}

}  // namespace gpumon::web
