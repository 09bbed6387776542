#include "scrape/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
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

const std::set<std::string> kUnsupportedScrapeFields = {"basic_auth",
                                                        "authorization",
                                                        "oauth2",
                                                        "bearer_token",
                                                        "bearer_token_file",
                                                        "tls_config",
                                                        "proxy_url",
                                                        "no_proxy",
                                                        "proxy_from_environment",
                                                        "proxy_connect_header",
                                                        "follow_redirects",
                                                        "enable_http2",
                                                        "kubernetes_sd_configs",
                                                        "consul_sd_configs",
                                                        "dns_sd_configs",
                                                        "ec2_sd_configs",
                                                        "gce_sd_configs",
                                                        "azure_sd_configs",
                                                        "http_sd_configs",
                                                        "docker_sd_configs",
                                                        "dockerswarm_sd_configs",
                                                        "openstack_sd_configs",
                                                        "marathon_sd_configs",
                                                        "nerve_sd_configs",
                                                        "serverset_sd_configs",
                                                        "digitalocean_sd_configs",
                                                        "hetzner_sd_configs",
                                                        "linode_sd_configs",
                                                        "triton_sd_configs",
                                                        "eureka_sd_configs",
                                                        "scaleway_sd_configs",
                                                        "kuma_sd_configs",
                                                        "puppetdb_sd_configs",
                                                        "uyuni_sd_configs",
                                                        "ionos_sd_configs",
                                                        "vultr_sd_configs",
                                                        "lightsail_sd_configs",
                                                        "nomad_sd_configs",
                                                        "scrape_classic_histograms",
                                                        "native_histogram_bucket_limit",
                                                        "keep_dropped_targets",
                                                        "enable_compression",
                                                        "track_timestamps_staleness",
                                                        "scrape_protocols",
                                                        "scrape_failure_log_file",
                                                        "always_scrape_classic_histograms"};

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
                        TargetGroup& tg) {
  return r.Fields(node, path, {"targets", "labels"},
                  [&](const std::string& key, const YAML::Node& v, const std::string& field) {
                    if (key == "targets") {
                      GPUMON_ASSIGN(tg.targets, r.Strings(v, field));
                      for (const auto& t : tg.targets) {
                        // A URL instead of host:port is a common mistake.
                        if (t.find('/') != std::string::npos) {
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
  bool has_job = false;
  Status s = r.Fields(
      node, path, known,
      [&](const std::string& key, const YAML::Node& v, const std::string& field) -> Status {
        if (kUnsupportedScrapeFields.count(key)) return r.Error(v, field, "not supported yet");
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
        if (key == "static_configs") {
          return r.Each<TargetGroup>(v, field, [&](const YAML::Node& n, const std::string& p) {
            TargetGroup tg;
            if (Status e = ParseTargetGroup(r, n, p, tg); !e.ok()) return e;
            tg.source = p;
            sc.static_configs.push_back(std::move(tg));
            return Status::Ok();
          });
        }
        if (key == "file_sd_configs") {
          return r.Each<FileSdConfig>(v, field, [&](const YAML::Node& n, const std::string& p) {
            FileSdConfig fc;
            Status e = r.Fields(
                n, p, {"files", "refresh_interval"},
                [&](const std::string& k, const YAML::Node& fv, const std::string& f) -> Status {
                  if (k == "files") {
                    GPUMON_ASSIGN(fc.files, r.Strings(fv, f));
                    for (auto& pattern : fc.files) {
                      if (!IsValidSdPattern(pattern)) {
                        return r.Error(
                            fv, f, "path name \"" + pattern + "\" is not valid for file discovery");
                      }
                      pattern = Resolve(r.file(), pattern);
                    }
                  }
                  if (k == "refresh_interval") {
                    GPUMON_ASSIGN(fc.refresh_interval_ms, r.Duration(fv, f));
                  }
                  return Status::Ok();
                });
            if (!e.ok()) return e;
            if (fc.files.empty()) {
              return r.Error(n, p,
                             "file service discovery config must contain at least one path name");
            }
            sc.file_sd_configs.push_back(std::move(fc));
            return Status::Ok();
          });
        }
        if (key == "relabel_configs") return ParseRelabelList(r, v, field, sc.relabel_configs);
        if (key == "metric_relabel_configs") {
          return ParseRelabelList(r, v, field, sc.metric_relabel_configs);
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;
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

}  // namespace gpumon::scrape
