#include "scrape/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "common/duration.h"

namespace gpumon::scrape {
namespace {

std::string Where(const std::string& file, const YAML::Mark& mark) {
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// Reads one YAML document, tracking the file for messages.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Status Error(const YAML::Node& node, const std::string& field, const std::string& what) const {
    return Status::Error(Where(file_, node.Mark()) + ": field \"" + field + "\": " + what);
  }

  // Calls fn(key, value, path) for each entry of a mapping; keys outside
  // `known` and repeated keys are errors. A null node is an empty mapping.
  Status Fields(const YAML::Node& node, const std::string& path, const std::set<std::string>& known,
                const std::function<Status(const std::string&, const YAML::Node&,
                                           const std::string&)>& fn) const {
    if (node.IsNull()) return Status::Ok();
    if (!node.IsMap()) return Error(node, path, "expected a mapping");
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      if (!key.IsScalar()) return Error(key, path, "expected a field name");
      const std::string name = key.Scalar();
      const std::string sub = path.empty() ? name : path + "." + name;
      if (!known.count(name)) return Error(key, sub, "unknown field");
      if (!seen.insert(name).second) return Error(key, sub, "field given twice");
      if (Status s = fn(name, value, sub); !s.ok()) return s;
    }
    return Status::Ok();
  }

  Result<std::string> String(const YAML::Node& node, const std::string& field) const {
    if (node.IsNull()) return std::string();
    if (!node.IsScalar()) return Error(node, field, "expected a single value");
    return node.Scalar();
  }

  Result<bool> Bool(const YAML::Node& node, const std::string& field) const {
    auto s = String(node, field);
    if (!s.ok()) return s.status();
    static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "on"};
    static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no", "off"};
    if (kTrue.count(*s)) return true;
    if (kFalse.count(*s)) return false;
    return Error(node, field, "expected true or false, got \"" + *s + "\"");
  }

  Result<uint64_t> Uint(const YAML::Node& node, const std::string& field) const {
    auto s = String(node, field);
    if (!s.ok()) return s.status();
    if (s->empty() || s->size() > 19 ||
        !std::all_of(s->begin(), s->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Error(node, field, "expected a non-negative integer, got \"" + *s + "\"");
    }
    return std::stoull(*s);
  }

  Result<int64_t> Int(const YAML::Node& node, const std::string& field) const {
    auto s = String(node, field);
    if (!s.ok()) return s.status();
    const size_t start = (!s->empty() && (*s)[0] == '-') ? 1 : 0;
    if (s->size() == start || s->size() > start + 18 ||
        !std::all_of(s->begin() + start, s->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Error(node, field, "expected an integer, got \"" + *s + "\"");
    }
    return static_cast<int64_t>(std::stoll(*s));
  }

  Result<int64_t> Duration(const YAML::Node& node, const std::string& field) const {
    auto s = String(node, field);
    if (!s.ok()) return s.status();
    if (*s == "0") return int64_t{0};
    auto d = ParseDuration(*s);
    if (!d.ok()) return Error(node, field, d.status().message());
    return static_cast<int64_t>(d->count());
  }

  Result<std::vector<std::string>> Strings(const YAML::Node& node, const std::string& field) const {
    std::vector<std::string> out;
    if (node.IsNull()) return out;
    if (!node.IsSequence()) return Error(node, field, "expected a list");
    for (size_t i = 0; i < node.size(); ++i) {
      auto s = String(node[i], field + "[" + std::to_string(i) + "]");
      if (!s.ok()) return s.status();
      out.push_back(*s);
    }
    return out;
  }

  // A label-name → value mapping.
  Result<Labels> LabelMap(const YAML::Node& node, const std::string& field) const {
    std::vector<Label> labels;
    if (node.IsNull()) return Labels();
    if (!node.IsMap()) return Error(node, field, "expected a mapping of labels");
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      auto name = String(key, field);
      if (!name.ok()) return name.status();
      if (!IsValidLabelName(*name)) {
        return Error(key, field, "\"" + *name + "\" is not a valid label name");
      }
      if (!seen.insert(*name).second)
        return Error(key, field, "label \"" + *name + "\" given twice");
      auto v = String(value, field + "." + *name);
      if (!v.ok()) return v.status();
      labels.push_back({*name, *v});
    }
    return Labels::FromUnsorted(std::move(labels));
  }

  template <typename T>
  Status Each(const YAML::Node& node, const std::string& field,
              const std::function<Status(const YAML::Node&, const std::string&)>& fn) const {
    if (node.IsNull()) return Status::Ok();
    if (!node.IsSequence()) return Error(node, field, "expected a list");
    for (size_t i = 0; i < node.size(); ++i) {
      if (Status s = fn(node[i], field + "[" + std::to_string(i) + "]"); !s.ok()) return s;
    }
    return Status::Ok();
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// Assigns a parsed value or returns its error.
#define GPUMON_ASSIGN(lhs, expr)      \
  do {                                \
    auto r_ = (expr);                 \
    if (!r_.ok()) return r_.status(); \
    lhs = std::move(r_).value();      \
  } while (0)

// Service discovery mechanisms Prometheus has and gpumon does not (dns,
// http, consul and kubernetes are implemented for scrape jobs only).
const std::set<std::string> kUnsupportedSdFields = {
    "kubernetes_sd_configs", "consul_sd_configs",       "dns_sd_configs",
    "ec2_sd_configs",        "gce_sd_configs",          "azure_sd_configs",
    "http_sd_configs",       "docker_sd_configs",       "dockerswarm_sd_configs",
    "openstack_sd_configs",  "marathon_sd_configs",     "nerve_sd_configs",
    "serverset_sd_configs",  "digitalocean_sd_configs", "hetzner_sd_configs",
    "linode_sd_configs",     "triton_sd_configs",       "eureka_sd_configs",
    "scaleway_sd_configs",   "kuma_sd_configs",         "puppetdb_sd_configs",
    "uyuni_sd_configs",      "ionos_sd_configs",        "vultr_sd_configs",
    "lightsail_sd_configs",  "nomad_sd_configs",        "stackit_sd_configs",
    "ovhcloud_sd_configs"};

// Inline HTTP client fields (Prometheus's HTTPClientConfig) that we parse,
// and those we recognise but do not implement.
const std::set<std::string> kHttpClientFields = {
    "basic_auth", "authorization",    "bearer_token", "bearer_token_file",
    "tls_config", "follow_redirects", "enable_http2"};
const std::set<std::string> kUnsupportedHttpFields = {
    "oauth2",      "proxy_url", "no_proxy", "proxy_from_environment", "proxy_connect_header",
    "http_headers"};

const std::set<std::string> kUnsupportedScrapeFields = {
    "scrape_classic_histograms", "native_histogram_bucket_limit",   "keep_dropped_targets",
    "enable_compression",        "track_timestamps_staleness",      "scrape_protocols",
    "scrape_failure_log_file",   "always_scrape_classic_histograms"};

Status ParseRelabel(const Reader& r, const YAML::Node& node, const std::string& path,
                    RelabelConfig& rc) {
  Status s = r.Fields(
      node, path,
      {"source_labels", "separator", "regex", "modulus", "target_label", "replacement", "action"},
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        if (key == "source_labels") GPUMON_ASSIGN(rc.source_labels, r.Strings(v, field));
        if (key == "separator") GPUMON_ASSIGN(rc.separator, r.String(v, field));
        if (key == "regex") GPUMON_ASSIGN(rc.regex, r.String(v, field));
        if (key == "modulus") GPUMON_ASSIGN(rc.modulus, r.Uint(v, field));
        if (key == "target_label") GPUMON_ASSIGN(rc.target_label, r.String(v, field));
        if (key == "replacement") GPUMON_ASSIGN(rc.replacement, r.String(v, field));
        if (key == "action") {
          std::string name;
          GPUMON_ASSIGN(name, r.String(v, field));
          // Prometheus accepts actions in any case.
          std::transform(name.begin(), name.end(), name.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
          if (name.empty()) return r.Error(v, field, "relabel action cannot be empty");
          auto a = RelabelActionFromName(name);
          if (!a) return r.Error(v, field, "unknown relabel action \"" + v.Scalar() + "\"");
          rc.action = *a;
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (node.IsNull()) return r.Error(node, path, "empty relabel rule");
  if (Status c = rc.Compile(); !c.ok()) return r.Error(node, path, c.message());
  return Status::Ok();
}

Status ParseRelabelList(const Reader& r, const YAML::Node& node, const std::string& path,
                        std::vector<RelabelConfig>& out) {
  return r.Each<RelabelConfig>(node, path, [&](const YAML::Node& n, const std::string& p) {
    RelabelConfig rc;
    if (Status s = ParseRelabel(r, n, p, rc); !s.ok()) return s;
    out.push_back(std::move(rc));
    return Status::Ok();
  });
}

// A target group: {targets: [...], labels: {...}} (static_configs and
// file SD share the format).
Status ParseTargetGroup(const Reader& r, const YAML::Node& node, const std::string& path,
                        TargetGroup& tg, bool check_addresses = true) {
  return r.Fields(node, path, {"targets", "labels"},
                  [&](const std::string& key, const YAML::Node& v, const std::string& field) {
                    if (key == "targets") {
                      GPUMON_ASSIGN(tg.targets, r.Strings(v, field));
                      for (const auto& t : tg.targets) {
                        // A URL instead of host:port is a common mistake.
                        if (check_addresses && t.find('/') != std::string::npos) {
                          return r.Error(v, field, "\"" + t + "\" is not a valid hostname");
                        }
                      }
                    }
                    if (key == "labels") GPUMON_ASSIGN(tg.labels, r.LabelMap(v, field));
                    return Status::Ok();
                  });
}

bool IsValidSdPattern(const std::string& p) {
  static const RE2 kRe(R"(^[^*]*(\*[^/]*)?\.(json|yml|yaml|JSON|YML|YAML)$)");
  return RE2::FullMatch(p, kRe);
}

std::string Resolve(const std::string& base_file, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  auto dir = std::filesystem::path(base_file).parent_path();
  return dir.empty() ? path : (dir / path).string();
}

// Keys seen in one mapping, with their value nodes, so that checks made
// after the whole mapping was read can point at the offending field.
using SeenFields = std::map<std::string, YAML::Node>;

Status ParseBasicAuth(const Reader& r, const YAML::Node& node, const std::string& path,
                      HttpClientConfig& http) {
  SeenFields seen;
  Status s = r.Fields(
      node, path,
      {"username", "password", "password_file", "username_file", "username_ref", "password_ref"},
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        seen[key] = v;
        if (key == "username") GPUMON_ASSIGN(http.basic_auth_username, r.String(v, field));
        if (key == "password") GPUMON_ASSIGN(http.basic_auth_password, r.String(v, field));
        if (key == "password_file") {
          GPUMON_ASSIGN(http.basic_auth_password_file, r.String(v, field));
          http.basic_auth_password_file = Resolve(r.file(), http.basic_auth_password_file);
        }
        if (key == "username_file" || key == "username_ref" || key == "password_ref") {
          return r.Error(v, field, "not supported yet");
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;
  http.basic_auth_set = true;
  if (!http.basic_auth_password.empty() && !http.basic_auth_password_file.empty()) {
    return r.Error(seen["password_file"], path + ".password_file",
                   "at most one of basic_auth password & password_file must be configured");
  }
  return Status::Ok();
}

Status ParseAuthorization(const Reader& r, const YAML::Node& node, const std::string& path,
                          HttpClientConfig& http) {
  SeenFields seen;
  Status s = r.Fields(
      node, path, {"type", "credentials", "credentials_file", "credentials_ref"},
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        seen[key] = v;
        if (key == "type") GPUMON_ASSIGN(http.authorization_type, r.String(v, field));
        if (key == "credentials") {
          GPUMON_ASSIGN(http.authorization_credentials, r.String(v, field));
        }
        if (key == "credentials_file") {
          GPUMON_ASSIGN(http.authorization_credentials_file, r.String(v, field));
          http.authorization_credentials_file =
              Resolve(r.file(), http.authorization_credentials_file);
        }
        if (key == "credentials_ref") return r.Error(v, field, "not supported yet");
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (!http.authorization_credentials.empty() && !http.authorization_credentials_file.empty()) {
    return r.Error(seen["credentials_file"], path + ".credentials_file",
                   "at most one of authorization credentials & credentials_file must be "
                   "configured");
  }
  // Prometheus trims the type and defaults it to Bearer.
  std::string& type = http.authorization_type;
  type.erase(0, type.find_first_not_of(" \t"));
  type.erase(type.find_last_not_of(" \t") + 1);
  if (type.empty()) type = "Bearer";
  std::string lower = type;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "basic") {
    return r.Error(seen.count("type") ? seen["type"] : node, path + ".type",
                   "authorization type cannot be set to \"basic\", use \"basic_auth\" instead");
  }
  return Status::Ok();
}

Status ParseTlsConfig(const Reader& r, const YAML::Node& node, const std::string& path,
                      HttpClientConfig& http) {
  Status s = r.Fields(
      node, path,
      {"ca_file", "cert_file", "key_file", "server_name", "insecure_skip_verify", "ca", "cert",
       "key", "ca_ref", "cert_ref", "key_ref", "min_version", "max_version"},
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        auto file = [&](std::string& out) -> Status {
          GPUMON_ASSIGN(out, r.String(v, field));
          out = Resolve(r.file(), out);
          return Status::Ok();
        };
        if (key == "ca_file") return file(http.tls_ca_file);
        if (key == "cert_file") return file(http.tls_cert_file);
        if (key == "key_file") return file(http.tls_key_file);
        if (key == "server_name") GPUMON_ASSIGN(http.tls_server_name, r.String(v, field));
        if (key == "insecure_skip_verify") {
          GPUMON_ASSIGN(http.tls_insecure_skip_verify, r.Bool(v, field));
        }
        if (key != "server_name" && key != "insecure_skip_verify") {
          return r.Error(v, field, "not supported yet");
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (!http.tls_cert_file.empty() && http.tls_key_file.empty()) {
    return r.Error(node, path,
                   "exactly one of key or key_file must be configured when a client certificate "
                   "is configured");
  }
  if (!http.tls_key_file.empty() && http.tls_cert_file.empty()) {
    return r.Error(node, path,
                   "exactly one of cert or cert_file must be configured when a client key is "
                   "configured");
  }
  return Status::Ok();
}

// One inline HTTP client field of a scrape, Alertmanager or remote write
// config; `seen` collects them for ValidateHttpClient.
Status ParseHttpClientField(const Reader& r, const std::string& key, const YAML::Node& v,
                            const std::string& field, HttpClientConfig& http, SeenFields& seen) {
  if (kUnsupportedHttpFields.count(key)) return r.Error(v, field, "not supported yet");
  seen[key] = v;
  if (key == "basic_auth") return ParseBasicAuth(r, v, field, http);
  if (key == "authorization") return ParseAuthorization(r, v, field, http);
  if (key == "tls_config") return ParseTlsConfig(r, v, field, http);
  if (key == "follow_redirects") GPUMON_ASSIGN(http.follow_redirects, r.Bool(v, field));
  if (key == "enable_http2") {
    bool ignored;  // we always speak HTTP/1.1; the setting is only a preference
    GPUMON_ASSIGN(ignored, r.Bool(v, field));
    (void)ignored;
  }
  if (key == "bearer_token" || key == "bearer_token_file") {
    std::string value;
    GPUMON_ASSIGN(value, r.String(v, field));
    seen.erase(key);
    if (value.empty()) return Status::Ok();  // unset, as in Prometheus
    seen[key] = v;
    if (key == "bearer_token") {
      http.authorization_credentials = value;
    } else {
      http.authorization_credentials_file = Resolve(r.file(), value);
    }
  }
  return Status::Ok();
}

// Prometheus's mutual-exclusion rules between the authentication methods.
Status ValidateHttpClient(const Reader& r, const std::string& path, HttpClientConfig& http,
                          SeenFields& seen) {
  auto at = [&](const std::string& key, const std::string& what) {
    return r.Error(seen[key], path.empty() ? key : path + "." + key, what);
  };
  const bool token = seen.count("bearer_token") > 0;
  const bool token_file = seen.count("bearer_token_file") > 0;
  const bool basic = seen.count("basic_auth") > 0;
  const bool authz = seen.count("authorization") > 0;
  if (token && token_file) {
    return at("bearer_token_file",
              "at most one of bearer_token & bearer_token_file must be configured");
  }
  if (basic && (token || token_file)) {
    return at("basic_auth",
              "at most one of basic_auth, oauth2, bearer_token & bearer_token_file must be "
              "configured");
  }
  if (authz && (token || token_file)) {
    return at("authorization",
              "authorization is not compatible with bearer_token & bearer_token_file");
  }
  if (authz && basic) {
    return at("authorization",
              "at most one of basic_auth, oauth2 & authorization must be configured");
  }
  if (token || token_file) http.authorization_type = "Bearer";
  return Status::Ok();
}

Status ParseStaticConfigs(const Reader& r, const YAML::Node& v, const std::string& field,
                          std::vector<TargetGroup>& out, bool check_addresses = true) {
  return r.Each<TargetGroup>(v, field, [&](const YAML::Node& n, const std::string& p) {
    TargetGroup tg;
    if (Status e = ParseTargetGroup(r, n, p, tg, check_addresses); !e.ok()) return e;
    tg.source = p;
    out.push_back(std::move(tg));
    return Status::Ok();
  });
}

Status ParseFileSdConfigs(const Reader& r, const YAML::Node& v, const std::string& field,
                          std::vector<FileSdConfig>& out) {
  return r.Each<FileSdConfig>(v, field, [&](const YAML::Node& n, const std::string& p) {
    FileSdConfig fc;
    Status e = r.Fields(
        n, p, {"files", "refresh_interval"},
        [&](const std::string& k, const YAML::Node& fv, const std::string& f) -> Status {
          if (k == "files") {
            GPUMON_ASSIGN(fc.files, r.Strings(fv, f));
            for (auto& pattern : fc.files) {
              if (!IsValidSdPattern(pattern)) {
                return r.Error(fv, f,
                               "path name \"" + pattern + "\" is not valid for file discovery");
              }
              pattern = Resolve(r.file(), pattern);
            }
          }
          if (k == "refresh_interval") GPUMON_ASSIGN(fc.refresh_interval_ms, r.Duration(fv, f));
          return Status::Ok();
        });
    if (!e.ok()) return e;
    if (fc.files.empty()) {
      return r.Error(n, p, "file service discovery config must contain at least one path name");
    }
    out.push_back(std::move(fc));
    return Status::Ok();
  });
}

// Whether a URL is absolute http(s) with a host, as Prometheus requires of
// discovery endpoints.
Status CheckHttpUrl(const Reader& r, const YAML::Node& node, const std::string& field,
                    const std::string& url) {
  const size_t sep = url.find("://");
  const std::string scheme = sep == std::string::npos ? "" : url.substr(0, sep);
  if (scheme != "http" && scheme != "https") {
    return r.Error(node, field, "URL scheme must be 'http' or 'https'");
  }
  const std::string rest = url.substr(sep + 3);
  if (rest.empty() || rest[0] == '/' || rest[0] == '?' || rest[0] == '#') {
    return r.Error(node, field, "host is missing in URL");
  }
  return Status::Ok();
}

// Parses a list of SD configs whose entries take the inline HTTP client
// fields besides their own (`own`); `fn` handles the own fields and
// `check` validates one entry once read.
template <typename T>
Status ParseSdList(
    const Reader& r, const YAML::Node& v, const std::string& field,
    const std::set<std::string>& own, std::vector<T>& out,
    const std::function<Status(T&, const std::string&, const YAML::Node&, const std::string&)>& fn,
    const std::function<Status(T&, const YAML::Node&, const std::string&, SeenFields&,
                               SeenFields&)>& check) {
  return r.Each<T>(v, field, [&](const YAML::Node& n, const std::string& p) -> Status {
    T c;
    std::set<std::string> known = own;
    known.insert(kHttpClientFields.begin(), kHttpClientFields.end());
    known.insert(kUnsupportedHttpFields.begin(), kUnsupportedHttpFields.end());
    SeenFields seen, http_seen;
    Status s = r.Fields(n, p, known,
                        [&](const std::string& key, const YAML::Node& fv, const std::string& f) {
                          seen[key] = fv;
                          if (kHttpClientFields.count(key) || kUnsupportedHttpFields.count(key)) {
                            return ParseHttpClientField(r, key, fv, f, c.http, http_seen);
                          }
                          return fn(c, key, fv, f);
                        });
    if (!s.ok()) return s;
    if (Status e = check(c, n, p, seen, http_seen); !e.ok()) return e;
    if (Status e = ValidateHttpClient(r, p, c.http, http_seen); !e.ok()) return e;
    out.push_back(std::move(c));
    return Status::Ok();
  });
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

Status ParseDnsSdConfigs(const Reader& r, const YAML::Node& v, const std::string& field,
                         std::vector<DnsSdConfig>& out) {
  return r.Each<DnsSdConfig>(v, field, [&](const YAML::Node& n, const std::string& p) -> Status {
    DnsSdConfig c;
    SeenFields seen;
    Status s =
        r.Fields(n, p, {"names", "refresh_interval", "type", "port"},
                 [&](const std::string& k, const YAML::Node& fv, const std::string& f) -> Status {
                   seen[k] = fv;
                   if (k == "names") GPUMON_ASSIGN(c.names, r.Strings(fv, f));
                   if (k == "refresh_interval")
                     GPUMON_ASSIGN(c.refresh_interval_ms, r.Duration(fv, f));
                   if (k == "type") {
                     GPUMON_ASSIGN(c.type, r.String(fv, f));
                     if (c.type.empty()) c.type = "SRV";
                   }
                   if (k == "port") {
                     int64_t port;
                     GPUMON_ASSIGN(port, r.Int(fv, f));
                     if (port < 0 || port > 65535) return r.Error(fv, f, "port out of range");
                     c.port = static_cast<int>(port);
                   }
                   return Status::Ok();
                 });
    if (!s.ok()) return s;
    if (c.names.empty()) {
      return r.Error(n, p + ".names", "DNS-SD config must contain at least one SRV record name");
    }
    const YAML::Node at = seen.count("type") ? seen["type"] : n;
    c.type = Upper(c.type);
    if (c.type != "SRV" && c.type != "A" && c.type != "AAAA" && c.type != "MX" && c.type != "NS") {
      return r.Error(at, p + ".type", "invalid DNS-SD records type " + c.type);
    }
    if (c.type != "SRV" && c.port == 0) {
      return r.Error(seen.count("port") ? seen["port"] : n, p + ".port",
                     "a port is required in DNS-SD configs for all record types except SRV");
    }
    out.push_back(std::move(c));
    return Status::Ok();
  });
}

Status ParseHttpSdConfigs(const Reader& r, const YAML::Node& v, const std::string& field,
                          std::vector<HttpSdConfig>& out) {
  return ParseSdList<HttpSdConfig>(
      r, v, field, {"url", "refresh_interval"}, out,
      [&](HttpSdConfig& c, const std::string& k, const YAML::Node& fv,
          const std::string& f) -> Status {
        if (k == "url") GPUMON_ASSIGN(c.url, r.String(fv, f));
        if (k == "refresh_interval") GPUMON_ASSIGN(c.refresh_interval_ms, r.Duration(fv, f));
        return Status::Ok();
      },
      [&](HttpSdConfig& c, const YAML::Node& n, const std::string& p, SeenFields& seen,
          SeenFields&) -> Status {
        if (c.url.empty()) return r.Error(n, p + ".url", "URL is missing");
        return CheckHttpUrl(r, seen["url"], p + ".url", c.url);
      });
}

Status ParseConsulSdConfigs(const Reader& r, const YAML::Node& v, const std::string& field,
                            std::vector<ConsulSdConfig>& out) {
  return ParseSdList<ConsulSdConfig>(
      r, v, field,
      {"server", "path_prefix", "token", "datacenter", "namespace", "partition", "tag_separator",
       "scheme", "username", "password", "allow_stale", "refresh_interval", "services", "tags",
       "node_meta", "filter", "health_filter"},
      out,
      [&](ConsulSdConfig& c, const std::string& k, const YAML::Node& fv,
          const std::string& f) -> Status {
        if (k == "server") GPUMON_ASSIGN(c.server, r.String(fv, f));
        if (k == "path_prefix") GPUMON_ASSIGN(c.path_prefix, r.String(fv, f));
        if (k == "token") GPUMON_ASSIGN(c.token, r.String(fv, f));
        if (k == "datacenter") GPUMON_ASSIGN(c.datacenter, r.String(fv, f));
        if (k == "namespace") GPUMON_ASSIGN(c.namespace_, r.String(fv, f));
        if (k == "partition") GPUMON_ASSIGN(c.partition, r.String(fv, f));
        if (k == "tag_separator") {
          GPUMON_ASSIGN(c.tag_separator, r.String(fv, f));
          if (c.tag_separator.empty()) c.tag_separator = ",";
        }
        if (k == "scheme") {
          GPUMON_ASSIGN(c.scheme, r.String(fv, f));
          if (c.scheme.empty()) c.scheme = "http";
          if (c.scheme != "http" && c.scheme != "https") {
            return r.Error(fv, f, "scheme must be http or https, got \"" + c.scheme + "\"");
          }
        }
        if (k == "username") GPUMON_ASSIGN(c.http.basic_auth_username, r.String(fv, f));
        if (k == "password") GPUMON_ASSIGN(c.http.basic_auth_password, r.String(fv, f));
        if (k == "allow_stale") GPUMON_ASSIGN(c.allow_stale, r.Bool(fv, f));
        if (k == "refresh_interval") GPUMON_ASSIGN(c.refresh_interval_ms, r.Duration(fv, f));
        if (k == "services") GPUMON_ASSIGN(c.services, r.Strings(fv, f));
        if (k == "tags") GPUMON_ASSIGN(c.tags, r.Strings(fv, f));
        if (k == "filter") GPUMON_ASSIGN(c.filter, r.String(fv, f));
        if (k == "health_filter") GPUMON_ASSIGN(c.health_filter, r.String(fv, f));
        if (k == "node_meta") {
          if (fv.IsNull()) return Status::Ok();
          if (!fv.IsMap()) return r.Error(fv, f, "expected a mapping");
          for (auto it = fv.begin(); it != fv.end(); ++it) {
            std::string name;
            GPUMON_ASSIGN(name, r.String(it->first, f));
            GPUMON_ASSIGN(c.node_meta[name], r.String(it->second, f + "." + name));
          }
        }
        return Status::Ok();
      },
      [&](ConsulSdConfig& c, const YAML::Node& n, const std::string& p, SeenFields& seen,
          SeenFields& http_seen) -> Status {
        std::string server = c.server;
        server.erase(0, server.find_first_not_of(" \t\r\n"));
        if (server.empty()) {
          return r.Error(seen.count("server") ? seen["server"] : n, p + ".server",
                         "consul SD configuration requires a server address");
        }
        auto given = [&](const char* key) {
          return seen.count(key) && seen[key].IsScalar() && !seen[key].Scalar().empty();
        };
        if (given("username") || given("password")) {
          if (http_seen.count("basic_auth")) {
            return r.Error(http_seen["basic_auth"], p + ".basic_auth",
                           "at most one of consul SD configuration username and password and "
                           "basic auth can be configured");
          }
          c.http.basic_auth_set = true;
          http_seen["basic_auth"] = seen.count("username") ? seen["username"] : seen["password"];
        }
        if (!c.token.empty() && http_seen.count("authorization")) {
          return r.Error(http_seen["authorization"], p + ".authorization",
                         "at most one of consul SD token, authorization, or oauth2 can be "
                         "configured");
        }
        return Status::Ok();
      });
}

// Kubernetes roles: those Prometheus knows, and the two we implement.
const std::set<std::string> kKubernetesRoles = {"pod",           "service", "endpoints",
                                                "endpointslice", "node",    "ingress"};

Status ParseKubernetesSdConfigs(const Reader& r, const YAML::Node& v, const std::string& field,
                                std::vector<KubernetesSdConfig>& out) {
  return ParseSdList<KubernetesSdConfig>(
      r, v, field,
      {"api_server", "role", "kubeconfig_file", "namespaces", "selectors", "attach_metadata"}, out,
      [&](KubernetesSdConfig& c, const std::string& k, const YAML::Node& fv,
          const std::string& f) -> Status {
        if (k == "api_server") GPUMON_ASSIGN(c.api_server, r.String(fv, f));
        if (k == "role") {
          GPUMON_ASSIGN(c.role, r.String(fv, f));
          if (!kKubernetesRoles.count(c.role)) {
            return r.Error(fv, f, "unknown Kubernetes SD role \"" + c.role + "\"");
          }
          if (c.role != "pod" && c.role != "node") {
            return r.Error(fv, f, "role \"" + c.role + "\" not supported yet (pod, node)");
          }
        }
        if (k == "kubeconfig_file") {
          std::string file;
          GPUMON_ASSIGN(file, r.String(fv, f));
          if (!file.empty()) return r.Error(fv, f, "not supported yet");
        }
        if (k == "namespaces") {
          return r.Fields(fv, f, {"names", "own_namespace"},
                          [&](const std::string& nk, const YAML::Node& nv, const std::string& nf) {
                            if (nk == "names") GPUMON_ASSIGN(c.namespaces, r.Strings(nv, nf));
                            if (nk == "own_namespace") {
                              GPUMON_ASSIGN(c.own_namespace, r.Bool(nv, nf));
                            }
                            return Status::Ok();
                          });
        }
        if (k == "attach_metadata") {
          return r.Fields(fv, f, {"node", "namespace"},
                          [&](const std::string&, const YAML::Node& av, const std::string& af) {
                            bool on;
                            GPUMON_ASSIGN(on, r.Bool(av, af));
                            if (on) return r.Error(av, af, "not supported yet");
                            return Status::Ok();
                          });
        }
        if (k == "selectors") {
          return r.Each<KubernetesSdConfig::Selector>(
              fv, f, [&](const YAML::Node& sn, const std::string& sp) {
                KubernetesSdConfig::Selector sel;
                Status e = r.Fields(
                    sn, sp, {"role", "label", "field"},
                    [&](const std::string& sk, const YAML::Node& sv, const std::string& sf) {
                      if (sk == "role") GPUMON_ASSIGN(sel.role, r.String(sv, sf));
                      if (sk == "label") GPUMON_ASSIGN(sel.label, r.String(sv, sf));
                      if (sk == "field") GPUMON_ASSIGN(sel.field, r.String(sv, sf));
                      return Status::Ok();
                    });
                if (!e.ok()) return e;
                c.selectors.push_back(std::move(sel));
                return Status::Ok();
              });
        }
        return Status::Ok();
      },
      [&](KubernetesSdConfig& c, const YAML::Node& n, const std::string& p, SeenFields& seen,
          SeenFields& http_seen) -> Status {
        if (c.role.empty()) {
          return r.Error(n, p + ".role",
                         "role missing (one of: pod, service, endpoints, endpointslice, node, "
                         "ingress)");
        }
        // Only settings that differ from the defaults count as a custom
        // client (follow_redirects: true and enable_http2 do not).
        bool custom = false;
        for (const auto& [key, node] : http_seen) {
          if (key == "enable_http2") continue;
          if (key == "follow_redirects" && c.http.follow_redirects) continue;
          custom = true;
        }
        if (c.api_server.empty() && custom) {
          return r.Error(n, p,
                         "to use custom HTTP client configuration please provide the "
                         "'api_server' URL explicitly");
        }
        if (!c.api_server.empty()) {
          if (Status e = CheckHttpUrl(r, seen["api_server"], p + ".api_server", c.api_server);
              !e.ok()) {
            return e;
          }
          if (c.own_namespace) {
            return r.Error(seen["namespaces"], p + ".namespaces.own_namespace",
                           "cannot use 'api_server' and 'namespaces.own_namespace' "
                           "simultaneously");
          }
        }
        const std::map<std::string, std::set<std::string>> allowed = {{"pod", {"pod", "node"}},
                                                                      {"node", {"node"}}};
        std::set<std::string> roles;
        for (const auto& sel : c.selectors) {
          const YAML::Node at = seen["selectors"];
          if (!roles.insert(sel.role).second) {
            return r.Error(at, p + ".selectors", "duplicated selector role: " + sel.role);
          }
          if (!allowed.at(c.role).count(sel.role)) {
            return r.Error(at, p + ".selectors",
                           c.role + " role supports only " +
                               (c.role == "pod" ? "pod, node" : "node") + " selectors");
          }
        }
        return Status::Ok();
      });
}

Status ParseAlertmanagerConfig(const Reader& r, const YAML::Node& node, const std::string& path,
                               AlertmanagerConfig& am) {
  std::set<std::string> known = {
      "static_configs", "file_sd_configs", "relabel_configs", "alert_relabel_configs",
      "scheme",         "path_prefix",     "timeout",         "api_version",
      "sigv4"};
  known.insert(kHttpClientFields.begin(), kHttpClientFields.end());
  known.insert(kUnsupportedHttpFields.begin(), kUnsupportedHttpFields.end());
  known.insert(kUnsupportedSdFields.begin(), kUnsupportedSdFields.end());
  SeenFields seen;
  SeenFields http_seen;
  Status s = r.Fields(
      node, path, known,
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        seen[key] = v;
        if (kHttpClientFields.count(key) || kUnsupportedHttpFields.count(key)) {
          return ParseHttpClientField(r, key, v, field, am.http, http_seen);
        }
        if (kUnsupportedSdFields.count(key) || key == "sigv4") {
          return r.Error(v, field, "not supported yet");
        }
        if (key == "static_configs") {
          return ParseStaticConfigs(r, v, field, am.static_configs, /*check_addresses=*/false);
        }
        if (key == "file_sd_configs") return ParseFileSdConfigs(r, v, field, am.file_sd_configs);
        if (key == "relabel_configs") return ParseRelabelList(r, v, field, am.relabel_configs);
        if (key == "alert_relabel_configs") {
          return ParseRelabelList(r, v, field, am.alert_relabel_configs);
        }
        if (key == "scheme") {
          GPUMON_ASSIGN(am.scheme, r.String(v, field));
          if (am.scheme.empty()) am.scheme = "http";
          if (am.scheme != "http" && am.scheme != "https") {
            return r.Error(v, field, "scheme must be http or https, got \"" + am.scheme + "\"");
          }
        }
        if (key == "path_prefix") {
          GPUMON_ASSIGN(am.path_prefix, r.String(v, field));
          if (am.path_prefix.empty()) am.path_prefix = "/";
        }
        if (key == "timeout") GPUMON_ASSIGN(am.timeout_ms, r.Duration(v, field));
        if (key == "api_version") {
          GPUMON_ASSIGN(am.api_version, r.String(v, field));
          // Prometheus 3 removed the v1 API (Alertmanager 0.27 did too).
          if (am.api_version != "v2") {
            return r.Error(
                v, field,
                "expected Alertmanager api version to be one of [v2] but got " + am.api_version);
          }
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (Status e = ValidateHttpClient(r, path, am.http, http_seen); !e.ok()) return e;
  // Addresses that look like URLs are mistakes unless relabeling rewrites
  // them (Prometheus checks only then, too).
  if (am.relabel_configs.empty()) {
    for (size_t i = 0; i < am.static_configs.size(); ++i) {
      for (const auto& t : am.static_configs[i].targets) {
        if (t.find('/') != std::string::npos) {
          const YAML::Node targets = seen["static_configs"][i]["targets"];
          return r.Error(targets, am.static_configs[i].source + ".targets",
                         "\"" + t + "\" is not a valid hostname");
        }
      }
    }
  }
  return Status::Ok();
}

Status ParseAlerting(const Reader& r, const YAML::Node& node, const std::string& path,
                     AlertingConfig& ac) {
  return r.Fields(
      node, path, {"alert_relabel_configs", "alertmanagers"},
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        if (key == "alert_relabel_configs") {
          return ParseRelabelList(r, v, field, ac.alert_relabel_configs);
        }
        return r.Each<AlertmanagerConfig>(v, field, [&](const YAML::Node& n, const std::string& p) {
          AlertmanagerConfig am;
          if (n.IsNull()) return r.Error(n, p, "empty or null alertmanager config section");
          if (Status e = ParseAlertmanagerConfig(r, n, p, am); !e.ok()) return e;
          ac.alertmanagers.push_back(std::move(am));
          return Status::Ok();
        });
      });
}

Status ParseQueueConfig(const Reader& r, const YAML::Node& node, const std::string& path,
                        RemoteWriteQueueConfig& q) {
  SeenFields seen;
  auto as_int = [&](const YAML::Node& v, const std::string& field, int& out) -> Status {
    int64_t n;
    GPUMON_ASSIGN(n, r.Int(v, field));
    if (n < INT32_MIN || n > INT32_MAX) return r.Error(v, field, "value out of range");
    out = static_cast<int>(n);
    return Status::Ok();
  };
  Status s = r.Fields(
      node, path,
      {"capacity", "max_shards", "min_shards", "max_samples_per_send", "batch_send_deadline",
       "min_backoff", "max_backoff", "retry_on_http_429", "sample_age_limit"},
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        seen[key] = v;
        if (key == "capacity") return as_int(v, field, q.capacity);
        if (key == "max_shards") return as_int(v, field, q.max_shards);
        if (key == "min_shards") return as_int(v, field, q.min_shards);
        if (key == "max_samples_per_send") return as_int(v, field, q.max_samples_per_send);
        if (key == "batch_send_deadline") {
          GPUMON_ASSIGN(q.batch_send_deadline_ms, r.Duration(v, field));
        }
        if (key == "min_backoff") GPUMON_ASSIGN(q.min_backoff_ms, r.Duration(v, field));
        if (key == "max_backoff") GPUMON_ASSIGN(q.max_backoff_ms, r.Duration(v, field));
        if (key == "retry_on_http_429") GPUMON_ASSIGN(q.retry_on_http_429, r.Bool(v, field));
        if (key == "sample_age_limit") GPUMON_ASSIGN(q.sample_age_limit_ms, r.Duration(v, field));
        return Status::Ok();
      });
  if (!s.ok()) return s;
  auto at = [&](const std::string& key, const std::string& what) {
    return r.Error(seen.count(key) ? seen[key] : node, path + "." + key, what);
  };
  if (q.max_shards <= 0) return at("max_shards", "remote write queue max_shards must be positive");
  if (q.min_shards <= 0) return at("min_shards", "remote write queue min_shards must be positive");
  if (q.min_shards > q.max_shards) {
    return at("min_shards", "remote write queue min_shards must not be greater than max_shards");
  }
  if (q.max_samples_per_send <= 0) {
    return at("max_samples_per_send", "remote write queue max_samples_per_send must be positive");
  }
  if (q.capacity <= 0) return at("capacity", "remote write queue capacity must be positive");
  if (q.max_backoff_ms < q.min_backoff_ms) {
    return at("max_backoff", "remote write queue max_backoff must not be less than min_backoff");
  }
  return Status::Ok();
}

// metadata_config: validated like Prometheus, then ignored.
Status ParseMetadataConfig(const Reader& r, const YAML::Node& node, const std::string& path) {
  return r.Fields(node, path, {"send", "send_interval", "max_samples_per_send"},
                  [&](const std::string& key, const YAML::Node& v, const std::string& field) {
                    if (key == "send") return r.Bool(v, field).status();
                    if (key == "send_interval") return r.Duration(v, field).status();
                    return r.Int(v, field).status();
                  });
}

Status ParseRemoteWrite(const Reader& r, const YAML::Node& node, const std::string& path,
                        RemoteWriteConfig& rw) {
  std::set<std::string> known = {"url",
                                 "name",
                                 "remote_timeout",
                                 "headers",
                                 "write_relabel_configs",
                                 "queue_config",
                                 "metadata_config",
                                 "send_exemplars",
                                 "send_native_histograms",
                                 "round_robin_dns",
                                 "protobuf_message",
                                 "failed_request_logging",
                                 "sigv4",
                                 "azuread",
                                 "google_iam"};
  known.insert(kHttpClientFields.begin(), kHttpClientFields.end());
  known.insert(kUnsupportedHttpFields.begin(), kUnsupportedHttpFields.end());
  SeenFields http_seen;
  bool has_url = false;
  Status s = r.Fields(
      node, path, known,
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        if (kHttpClientFields.count(key) || kUnsupportedHttpFields.count(key)) {
          return ParseHttpClientField(r, key, v, field, rw.http, http_seen);
        }
        if (key == "url") {
          has_url = true;
          GPUMON_ASSIGN(rw.url, r.String(v, field));
          static const RE2 kUrl(R"(^https?://[^/?#\s]+([/?#]\S*)?$)");
          if (!RE2::FullMatch(rw.url, kUrl)) {
            return r.Error(v, field, "\"" + rw.url + "\" is not an absolute http or https URL");
          }
        }
        if (key == "name") GPUMON_ASSIGN(rw.name, r.String(v, field));
        if (key == "remote_timeout") GPUMON_ASSIGN(rw.remote_timeout_ms, r.Duration(v, field));
        if (key == "headers") {
          if (v.IsNull()) return Status::Ok();
          if (!v.IsMap()) return r.Error(v, field, "expected a mapping of headers");
          for (auto it = v.begin(); it != v.end(); ++it) {
            const YAML::Node k = it->first;
            const YAML::Node val = it->second;
            std::string name;
            GPUMON_ASSIGN(name, r.String(k, field));
            std::string lower = name;
            std::transform(lower.begin(), lower.end(), lower.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (lower == "authorization") {
              return r.Error(k, field + "." + name,
                             "authorization header must be changed via the basic_auth, "
                             "authorization, oauth2, sigv4, azuread or google_iam parameter");
            }
            if (IsReservedRemoteWriteHeader(lower)) {
              return r.Error(k, field + "." + name,
                             name + " is a reserved header. It must not be changed");
            }
            GPUMON_ASSIGN(rw.headers[name], r.String(val, field + "." + name));
          }
        }
        if (key == "write_relabel_configs") {
          return ParseRelabelList(r, v, field, rw.write_relabel_configs);
        }
        if (key == "queue_config") return ParseQueueConfig(r, v, field, rw.queue);
        if (key == "metadata_config") return ParseMetadataConfig(r, v, field);
        if (key == "protobuf_message") {
          std::string m;
          GPUMON_ASSIGN(m, r.String(v, field));
          if (m != "prometheus.WriteRequest") {
            return r.Error(v, field,
                           "\"" + m + "\" not supported yet (only prometheus.WriteRequest)");
          }
        }
        if (key == "send_exemplars" || key == "send_native_histograms" ||
            key == "round_robin_dns" || key == "failed_request_logging") {
          // Off is what we do anyway; on asks for something we lack.
          bool on;
          GPUMON_ASSIGN(on, r.Bool(v, field));
          if (on) return r.Error(v, field, "not supported yet");
        }
        if (key == "sigv4" || key == "azuread" || key == "google_iam") {
          return r.Error(v, field, "not supported yet");
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (!has_url) return r.Error(node, path + ".url", "url for remote_write is empty");
  return ValidateHttpClient(r, path, rw.http, http_seen);
}

Status ParseScrapeConfig(const Reader& r, const YAML::Node& node, const std::string& path,
                         const GlobalConfig& global, ScrapeConfig& sc) {
  std::set<std::string> known = {"job_name",
                                 "honor_labels",
                                 "honor_timestamps",
                                 "params",
                                 "scrape_interval",
                                 "scrape_timeout",
                                 "metrics_path",
                                 "scheme",
                                 "sample_limit",
                                 "label_limit",
                                 "label_name_length_limit",
                                 "label_value_length_limit",
                                 "target_limit",
                                 "body_size_limit",
                                 "static_configs",
                                 "file_sd_configs",
                                 "relabel_configs",
                                 "metric_relabel_configs"};
  known.insert(kUnsupportedScrapeFields.begin(), kUnsupportedScrapeFields.end());
  known.insert(kUnsupportedSdFields.begin(), kUnsupportedSdFields.end());
  known.insert(kHttpClientFields.begin(), kHttpClientFields.end());
  known.insert(kUnsupportedHttpFields.begin(), kUnsupportedHttpFields.end());
  bool has_job = false;
  SeenFields http_seen;
  Status s = r.Fields(
      node, path, known,
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        if (kHttpClientFields.count(key) || kUnsupportedHttpFields.count(key)) {
          return ParseHttpClientField(r, key, v, field, sc.http, http_seen);
        }
        if (key == "dns_sd_configs") return ParseDnsSdConfigs(r, v, field, sc.dns_sd_configs);
        if (key == "http_sd_configs") return ParseHttpSdConfigs(r, v, field, sc.http_sd_configs);
        if (key == "consul_sd_configs") {
          return ParseConsulSdConfigs(r, v, field, sc.consul_sd_configs);
        }
        if (key == "kubernetes_sd_configs") {
          return ParseKubernetesSdConfigs(r, v, field, sc.kubernetes_sd_configs);
        }
        if (kUnsupportedScrapeFields.count(key) || kUnsupportedSdFields.count(key)) {
          return r.Error(v, field, "not supported yet");
        }
        if (key == "job_name") {
          has_job = true;
          GPUMON_ASSIGN(sc.job_name, r.String(v, field));
        }
        if (key == "honor_labels") GPUMON_ASSIGN(sc.honor_labels, r.Bool(v, field));
        if (key == "honor_timestamps") GPUMON_ASSIGN(sc.honor_timestamps, r.Bool(v, field));
        if (key == "scrape_interval") GPUMON_ASSIGN(sc.scrape_interval_ms, r.Duration(v, field));
        if (key == "scrape_timeout") GPUMON_ASSIGN(sc.scrape_timeout_ms, r.Duration(v, field));
        if (key == "metrics_path") GPUMON_ASSIGN(sc.metrics_path, r.String(v, field));
        if (key == "scheme") {
          GPUMON_ASSIGN(sc.scheme, r.String(v, field));
          if (sc.scheme.empty()) sc.scheme = "http";
          if (sc.scheme != "http" && sc.scheme != "https") {
            return r.Error(v, field, "scheme must be http or https, got \"" + sc.scheme + "\"");
          }
        }
        if (key == "sample_limit") GPUMON_ASSIGN(sc.sample_limit, r.Uint(v, field));
        if (key == "label_limit") GPUMON_ASSIGN(sc.label_limit, r.Uint(v, field));
        if (key == "label_name_length_limit") {
          GPUMON_ASSIGN(sc.label_name_length_limit, r.Uint(v, field));
        }
        if (key == "label_value_length_limit") {
          GPUMON_ASSIGN(sc.label_value_length_limit, r.Uint(v, field));
        }
        if (key == "target_limit") GPUMON_ASSIGN(sc.target_limit, r.Uint(v, field));
        if (key == "body_size_limit") {
          std::string text;
          GPUMON_ASSIGN(text, r.String(v, field));
          auto b = ParseByteSize(text);
          if (!b.ok()) return r.Error(v, field, b.status().message());
          sc.body_size_limit = *b;
        }
        if (key == "params") {
          if (v.IsNull()) return Status::Ok();
          if (!v.IsMap()) return r.Error(v, field, "expected a mapping");
          for (auto it = v.begin(); it != v.end(); ++it) {
            const YAML::Node k = it->first;
            const YAML::Node vals = it->second;
            std::string name;
            GPUMON_ASSIGN(name, r.String(k, field));
            GPUMON_ASSIGN(sc.params[name], r.Strings(vals, field + "." + name));
          }
          return Status::Ok();
        }
        if (key == "static_configs") return ParseStaticConfigs(r, v, field, sc.static_configs);
        if (key == "file_sd_configs") return ParseFileSdConfigs(r, v, field, sc.file_sd_configs);
        if (key == "relabel_configs") return ParseRelabelList(r, v, field, sc.relabel_configs);
        if (key == "metric_relabel_configs") {
          return ParseRelabelList(r, v, field, sc.metric_relabel_configs);
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (Status e = ValidateHttpClient(r, path, sc.http, http_seen); !e.ok()) return e;
  if (!has_job || sc.job_name.empty())
    return r.Error(node, path + ".job_name", "job_name is empty");
  if (sc.scrape_interval_ms == 0) sc.scrape_interval_ms = global.scrape_interval_ms;
  if (sc.scrape_timeout_ms > sc.scrape_interval_ms) {
    return r.Error(
        node, path + ".scrape_timeout",
        "scrape timeout greater than scrape interval for scrape config with job name \"" +
            sc.job_name + "\"");
  }
  if (sc.scrape_timeout_ms == 0) {
    sc.scrape_timeout_ms = std::min(global.scrape_timeout_ms, sc.scrape_interval_ms);
  }
  sc.fingerprint = YAML::Dump(node);
  return Status::Ok();
}

}  // namespace

Result<uint64_t> ParseByteSize(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == 0 || i > 19) return Status::Error("invalid size \"" + std::string(text) + "\"");
  uint64_t n = std::stoull(std::string(text.substr(0, i)));
  std::string_view unit = text.substr(i);
  static const std::pair<const char*, int> kUnits[] = {
      {"", 0},   {"B", 0},   {"KB", 1}, {"KiB", 1}, {"MB", 2}, {"MiB", 2},
      {"GB", 3}, {"GiB", 3}, {"TB", 4}, {"TiB", 4}, {"PB", 5}, {"PiB", 5}};
  for (const auto& [name, power] : kUnits) {
    if (unit != name) continue;
    for (int p = 0; p < power; ++p) {
      if (n > UINT64_MAX / 1024)
        return Status::Error("size \"" + std::string(text) + "\" overflows");
      n *= 1024;
    }
    return n;
  }
  return Status::Error("invalid size \"" + std::string(text) + "\": unknown unit");
}

Result<Config> ParseConfig(const std::string& text, const std::string& file) {
  Reader r(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::Error(Where(file, e.mark) + ": invalid YAML: " + e.msg);
  }
  Config cfg;
  cfg.file = file;
  cfg.yaml = text;
  if (!root.IsNull() && !root.IsMap()) {
    return Status::Error(Where(file, root.Mark()) + ": expected a mapping of settings");
  }
  // The global section first: scrape configs inherit from it.
  if (root.IsMap() && root["global"]) {
    const YAML::Node g = root["global"];
    bool timeout_set = false;
    Status s = r.Fields(
        g, "global",
        {"scrape_interval", "scrape_timeout", "evaluation_interval", "external_labels",
         "query_log_file", "body_size_limit", "sample_limit", "target_limit", "label_limit",
         "label_name_length_limit", "label_value_length_limit"},
        [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
          GlobalConfig& gc = cfg.global;
          if (key == "scrape_interval") GPUMON_ASSIGN(gc.scrape_interval_ms, r.Duration(v, field));
          if (key == "scrape_timeout") {
            GPUMON_ASSIGN(gc.scrape_timeout_ms, r.Duration(v, field));
            timeout_set = gc.scrape_timeout_ms != 0;
          }
          if (key == "evaluation_interval") {
            GPUMON_ASSIGN(gc.evaluation_interval_ms, r.Duration(v, field));
          }
          if (key == "external_labels") {
            GPUMON_ASSIGN(gc.external_labels, r.LabelMap(v, field));
            if (gc.external_labels.Has(kMetricName)) {
              return r.Error(v, field, "\"__name__\" is not a valid label name");
            }
          }
          if (key != "scrape_interval" && key != "scrape_timeout" && key != "evaluation_interval" &&
              key != "external_labels") {
            return r.Error(v, field, "not supported yet");
          }
          return Status::Ok();
        });
    if (!s.ok()) return s;
    GlobalConfig& gc = cfg.global;
    if (gc.scrape_interval_ms == 0) gc.scrape_interval_ms = GlobalConfig().scrape_interval_ms;
    if (gc.evaluation_interval_ms == 0) {
      gc.evaluation_interval_ms = GlobalConfig().evaluation_interval_ms;
    }
    if (timeout_set && gc.scrape_timeout_ms > gc.scrape_interval_ms) {
      return r.Error(g, "global.scrape_timeout",
                     "global scrape timeout greater than scrape interval");
    }
    if (!timeout_set) {
      gc.scrape_timeout_ms = std::min(GlobalConfig().scrape_timeout_ms, gc.scrape_interval_ms);
    }
  }
  std::set<std::string> jobs;
  std::set<std::string> rw_names;
  Status s = r.Fields(
      root, "",
      {"global", "rule_files", "scrape_configs", "alerting", "remote_write", "remote_read",
       "storage", "tracing"},
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        if (key == "global") return Status::Ok();
        if (key == "rule_files") {
          GPUMON_ASSIGN(cfg.rule_files, r.Strings(v, field));
          static const RE2 kRulePath(R"(^[^*]*(\*[^/]*)?$)");
          for (auto& f : cfg.rule_files) {
            if (!RE2::FullMatch(f, kRulePath)) {
              return r.Error(v, field, "invalid rule file path \"" + f + "\"");
            }
            f = Resolve(file, f);
          }
          return Status::Ok();
        }
        if (key == "scrape_configs") {
          return r.Each<ScrapeConfig>(v, field, [&](const YAML::Node& n, const std::string& p) {
            ScrapeConfig sc;
            if (n.IsNull()) return r.Error(n, p, "empty or null scrape config section");
            if (Status e = ParseScrapeConfig(r, n, p, cfg.global, sc); !e.ok()) return e;
            if (!jobs.insert(sc.job_name).second) {
              return r.Error(n, p + ".job_name",
                             "found multiple scrape configs with job name \"" + sc.job_name + "\"");
            }
            cfg.scrape_configs.push_back(std::move(sc));
            return Status::Ok();
          });
        }
        if (key == "alerting") return ParseAlerting(r, v, field, cfg.alerting);
        if (key == "remote_write") {
          return r.Each<RemoteWriteConfig>(
              v, field, [&](const YAML::Node& n, const std::string& p) {
                if (n.IsNull()) return r.Error(n, p, "empty or null remote write config section");
                RemoteWriteConfig rw;
                if (Status e = ParseRemoteWrite(r, n, p, rw); !e.ok()) return e;
                // Unnamed queues are told apart by a hash of their config.
                if (!rw.name.empty() && !rw_names.insert(rw.name).second) {
                  return r.Error(
                      n, p + ".name",
                      "found multiple remote write configs with job name \"" + rw.name + "\"");
                }
                cfg.remote_write.push_back(std::move(rw));
                return Status::Ok();
              });
        }
        // Known Prometheus sections gpumon does not implement yet.
        if (v.IsNull() || (v.IsSequence() && v.size() == 0)) return Status::Ok();
        return r.Error(v, field, "not supported yet");
      });
  if (!s.ok()) return s;
  return cfg;
}

Result<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot open config file");
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseConfig(buf.str(), path);
}

Result<std::vector<TargetGroup>> ReadTargetFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot open target file");
  std::stringstream buf;
  buf << in.rdbuf();
  // JSON is a subset of YAML for these files, so one parser reads both.
  Reader r(path);
  YAML::Node root;
  try {
    root = YAML::Load(buf.str());
  } catch (const YAML::Exception& e) {
    return Status::Error(Where(path, e.mark) + ": invalid " +
                         (path.ends_with(".json") ? "JSON" : "YAML") + ": " + e.msg);
  }
  std::vector<TargetGroup> groups;
  Status s = r.Each<TargetGroup>(root, "", [&](const YAML::Node& n, const std::string& p) {
    TargetGroup tg;
    if (Status e = ParseTargetGroup(r, n, p, tg); !e.ok()) return e;
    tg.source = path + p;
    groups.push_back(std::move(tg));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return groups;
}

bool IsReservedRemoteWriteHeader(std::string_view name) {
  // Prometheus's list: headers the protocol or the HTTP client own.
  static const std::set<std::string, std::less<>> kReserved = {
      "authorization",
      "host",
      "content-encoding",
      "content-length",
      "content-type",
      "user-agent",
      "connection",
      "keep-alive",
      "proxy-authenticate",
      "proxy-authorization",
      "www-authenticate",
      "accept-encoding",
      "x-prometheus-remote-write-version",
      "x-prometheus-remote-read-version",
      "x-prometheus-scrape-timeout-seconds",
      "x-amz-date",
      "x-amz-security-token",
      "x-amz-content-sha256"};
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return kReserved.count(lower) > 0;
}

}  // namespace gpumon::scrape
