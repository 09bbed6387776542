#include "web/web_config.h"

#include <openssl/ssl.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "web/tls_server.h"

namespace gpumon::web {
namespace {

std::string Where(const std::string& file, const YAML::Mark& mark) {
  if (mark.line < 0) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// Walks the document, turning each problem into "file:line:col: field
// "a.b": what".
class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  Status Error(const YAML::Node& node, const std::string& field, const std::string& what) const {
    return Status::Error(Where(file_, node.Mark()) + ": field \"" + field + "\": " + what);
  }

  // Checks that `node` is a mapping (or null) with only `allowed` keys, each
  // once, and calls `each(key, value)` in file order.
  template <typename Fn>
  Status Mapping(const YAML::Node& node, const std::string& field,
                 const std::set<std::string>& allowed, Fn each) const {
    if (!node || node.IsNull()) return Status::Ok();
    if (!node.IsMap()) return Error(node, field, "expected a mapping");
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return Error(kv.first, field, "keys must be strings");
      const std::string key = kv.first.Scalar();
      const std::string path = field.empty() ? key : field + "." + key;
      if (!allowed.empty() && !allowed.count(key)) {
        return Error(kv.first, path, "unknown field");
      }
      if (!seen.insert(key).second) return Error(kv.first, path, "duplicate key");
      Status s = each(key, path, kv.first, kv.second);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  Status String(const YAML::Node& node, const std::string& field, std::string* out) const {
    if (node.IsNull()) {
      out->clear();
      return Status::Ok();
    }
    if (!node.IsScalar()) return Error(node, field, "expected a string");
    *out = node.Scalar();
    return Status::Ok();
  }

  Status Bool(const YAML::Node& node, const std::string& field, bool* out) const {
    if (node.IsNull()) return Status::Ok();
    bool v = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v)) {
      return Error(node, field, "expected true or false");
    }
    *out = v;
    return Status::Ok();
  }

  Status StringList(const YAML::Node& node, const std::string& field,
                    std::vector<std::string>* out) const {
    out->clear();
    if (node.IsNull()) return Status::Ok();
    if (!node.IsSequence()) return Error(node, field, "expected a list of strings");
    for (const auto& item : node) {
      if (!item.IsScalar()) return Error(item, field, "expected a list of strings");
      out->push_back(item.Scalar());
    }
    return Status::Ok();
  }

  Status TlsVersion(const YAML::Node& node, const std::string& field, int* out) const {
    std::string v;
    Status s = String(node, field, &v);
    if (!s.ok()) return s;
    static const std::map<std::string, int> kVersions = {
        {"TLS10", kTls10}, {"TLS11", kTls11}, {"TLS12", kTls12}, {"TLS13", kTls13}};
    auto it = kVersions.find(v);
    if (it == kVersions.end()) return Error(node, field, "unknown TLS version: " + v);
    *out = it->second;
    return Status::Ok();
  }

  Status Tls(const YAML::Node& node, TlsServerConfig* tls) const {
    return Mapping(
        node, "tls_server_config",
        {"cert_file", "key_file", "client_auth_type", "client_ca_file", "cipher_suites",
         "curve_preferences", "min_version", "max_version", "prefer_server_cipher_suites"},
        [&](const std::string& key, const std::string& path, const YAML::Node&,
            const YAML::Node& value) -> Status {
          if (key == "cert_file") return String(value, path, &tls->cert_file);
          if (key == "key_file") return String(value, path, &tls->key_file);
          if (key == "client_ca_file") return String(value, path, &tls->client_ca_file);
          if (key == "min_version") return TlsVersion(value, path, &tls->min_version);
          if (key == "max_version") return TlsVersion(value, path, &tls->max_version);
          if (key == "prefer_server_cipher_suites") {
            return Bool(value, path, &tls->prefer_server_cipher_suites);
          }
          if (key == "client_auth_type") {
            std::string v;
            Status s = String(value, path, &v);
            if (!s.ok()) return s;
            // "RequireClientCert" is Go's older spelling, still accepted.
            static const std::map<std::string, ClientAuth> kAuth = {
                {"", ClientAuth::kNoClientCert},
                {"NoClientCert", ClientAuth::kNoClientCert},
                {"RequestClientCert", ClientAuth::kRequestClientCert},
                {"RequireAnyClientCert", ClientAuth::kRequireAnyClientCert},
                {"RequireClientCert", ClientAuth::kRequireAnyClientCert},
                {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
                {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
            };
            auto it = kAuth.find(v);
            if (it == kAuth.end()) return Error(value, path, "invalid client_auth_type: " + v);
            tls->client_auth = it->second;
            client_auth_set_ = !v.empty();
            return Status::Ok();
          }
          if (key == "cipher_suites") {
            Status s = StringList(value, path, &tls->cipher_suites);
            if (!s.ok()) return s;
            for (const auto& name : tls->cipher_suites) {
              std::string ignored;
              if (!GoCipherToOpenSsl(name, &ignored)) {
                return Error(value, path, "unknown cipher: " + name);
              }
            }
            return Status::Ok();
          }
          // curve_preferences
          Status s = StringList(value, path, &tls->curve_preferences);
          if (!s.ok()) return s;
          for (const auto& name : tls->curve_preferences) {
            std::string ignored;
            if (!GoCurveToOpenSsl(name, &ignored)) {
              return Error(value, path, "unknown curve: " + name);
            }
          }
          return Status::Ok();
        });
  }

  Status Http(const YAML::Node& node, WebConfig* out) const {
    return Mapping(node, "http_server_config", {"http2", "headers"},
                   [&](const std::string& key, const std::string& path, const YAML::Node&,
                       const YAML::Node& value) -> Status {
                     if (key == "http2") return Bool(value, path, &out->http2);
                     return Headers(value, path, &out->headers);
                   });
  }

  // Only these headers may be set, some only to fixed values, so that all
  // Prometheus-style servers agree on what a config means.
  Status Headers(const YAML::Node& node, const std::string& field,
                 std::vector<std::pair<std::string, std::string>>* out) const {
    static const std::map<std::string, std::vector<std::string>> kAllowed = {
        {"Strict-Transport-Security", {}},
        {"X-Content-Type-Options", {"nosniff"}},
        {"X-Frame-Options", {"deny", "sameorigin"}},
        {"X-XSS-Protection", {}},
        {"Content-Security-Policy", {}},
    };
    return Mapping(
        node, field, {},
        [&](const std::string& key, const std::string& path, const YAML::Node& key_node,
            const YAML::Node& value) -> Status {
          auto it = kAllowed.find(key);
          if (it == kAllowed.end()) {
            return Error(key_node, path, "HTTP header \"" + key + "\" can not be configured");
          }
          std::string v;
          Status s = String(value, path, &v);
          if (!s.ok()) return s;
          if (!it->second.empty()) {
            bool ok = false;
            std::string expected;
            for (const auto& allowed : it->second) {
              ok = ok || v == allowed;
              expected += (expected.empty() ? "\"" : ", \"") + allowed + "\"";
            }
            if (!ok) {
              return Error(value, path, "invalid value \"" + v + "\", expected one of " + expected);
            }
          }
          out->emplace_back(key, v);
          return Status::Ok();
        });
  }

  Status Users(const YAML::Node& node, std::map<std::string, std::string>* out) const {
    return Mapping(node, "basic_auth_users", {},
                   [&](const std::string& key, const std::string& path, const YAML::Node&,
                       const YAML::Node& value) -> Status {
                     std::string hash;
                     Status s = String(value, path, &hash);
                     if (!s.ok()) return s;
                     s = CheckBcryptHash(hash);
                     if (!s.ok()) return Error(value, path, s.message());
                     (*out)[key] = hash;
                     return Status::Ok();
                   });
  }

  // What Go's bcrypt.Cost() checks: "$2<minor>$<cost>$" then 53 characters
  // of salt and hash, cost 4..31. libxcrypt knows the minors a, b and y.
  static Status CheckBcryptHash(const std::string& hash) {
    if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' || hash[6] != '$' ||
        (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y')) {
      return Status::Error("not a bcrypt hash (expected $2a$, $2b$ or $2y$ and 60 characters)");
    }
    if (!isdigit(static_cast<unsigned char>(hash[4])) ||
        !isdigit(static_cast<unsigned char>(hash[5]))) {
      return Status::Error("bcrypt hash has no cost");
    }
    const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
    if (cost < 4 || cost > 31) {
      return Status::Error("bcrypt cost " + std::to_string(cost) + " is outside 4..31");
    }
    for (size_t i = 7; i < hash.size(); ++i) {
      const char c = hash[i];
      if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '/') {
        return Status::Error("bcrypt hash has an invalid character");
      }
    }
    return Status::Ok();
  }

  bool client_auth_set() const { return client_auth_set_; }

 private:
  std::string file_;
  mutable bool client_auth_set_ = false;
};

std::string JoinDir(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return (std::filesystem::path(dir) / path).lexically_normal().string();
}

}  // namespace

const char* ClientAuthName(ClientAuth auth) {
  switch (auth) {
    case ClientAuth::kNoClientCert:
      return "NoClientCert";
    case ClientAuth::kRequestClientCert:
      return "RequestClientCert";
    case ClientAuth::kRequireAnyClientCert:
      return "RequireAnyClientCert";
    case ClientAuth::kVerifyClientCertIfGiven:
      return "VerifyClientCertIfGiven";
    case ClientAuth::kRequireAndVerifyClientCert:
      return "RequireAndVerifyClientCert";
  }
  return "?";
}

Result<WebConfig> ParseWebConfig(const std::string& yaml, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    return Status::Error(Where(file, e.mark) + ": invalid YAML: " + e.msg);
  }
  WebConfig out;
  out.file = file;
  if (!root || root.IsNull()) return out;
  if (!root.IsMap()) {
    return Status::Error(Where(file, root.Mark()) + ": expected a mapping of settings");
  }
  Parser p(file);
  YAML::Node tls_node;
  Status s = p.Mapping(root, "", {"tls_server_config", "http_server_config", "basic_auth_users"},
                       [&](const std::string& key, const std::string&, const YAML::Node& key_node,
                           const YAML::Node& value) -> Status {
                         if (key == "tls_server_config") {
                           tls_node = key_node;
                           return p.Tls(value, &out.tls);
                         }
                         if (key == "http_server_config") return p.Http(value, &out);
                         return p.Users(value, &out.basic_auth_users);
                       });
  if (!s.ok()) return s;

  // Go's rules: any TLS setting turns TLS on, which then needs both files;
  // a client CA is meaningless without a policy that asks for certificates.
  TlsServerConfig& tls = out.tls;
  const bool any_tls = !tls.cert_file.empty() || !tls.key_file.empty() || p.client_auth_set() ||
                       !tls.client_ca_file.empty();
  if (any_tls) {
    if (tls.cert_file.empty()) {
      return p.Error(tls_node, "tls_server_config.cert_file", "missing cert_file");
    }
    if (tls.key_file.empty()) {
      return p.Error(tls_node, "tls_server_config.key_file", "missing key_file");
    }
    if (!tls.client_ca_file.empty() && tls.client_auth == ClientAuth::kNoClientCert) {
      return p.Error(tls_node, "tls_server_config.client_ca_file",
                     "client CAs have been configured without a client_auth_type");
    }
  }
  if (tls.min_version > tls.max_version) {
    return p.Error(tls_node, "tls_server_config.min_version", "is above max_version");
  }
  const std::string dir = std::filesystem::path(file).parent_path().string();
  tls.cert_file = JoinDir(dir, tls.cert_file);
  tls.key_file = JoinDir(dir, tls.key_file);
  tls.client_ca_file = JoinDir(dir, tls.client_ca_file);
  return out;
}

Result<WebConfig> LoadWebConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Error("cannot read web config file \"" + path + "\"");
  std::stringstream text;
  text << in.rdbuf();
  auto config = ParseWebConfig(text.str(), path);
  if (!config.ok()) return config.status();
  if (config->tls.enabled()) {
    // Building a throwaway context checks the files the server will load.
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_server_method()),
                                                          SSL_CTX_free);
    if (!ctx) return Status::Error("cannot create a TLS context");
    Status s = ConfigureServerTls(ctx.get(), config->tls);
    if (!s.ok()) return s.WithContext(path + ": tls_server_config");
  }
  return config;
}

}  // namespace gpumon::web
