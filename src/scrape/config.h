// The server's configuration file: the Prometheus YAML format, for the
// parts gpumon supports.
//
// Contract:
// - Parsing is strict like Prometheus's: an unknown field anywhere is an
//   error. Every error names the file, line and column and the field
//   ("prometheus.yml:7:5: field \"scrape_configs[0].foo\": unknown field").
// - Defaults are Prometheus's: scrape_interval 1m, scrape_timeout 10s
//   (capped at the interval when not set), evaluation_interval 1m,
//   metrics_path /metrics, scheme http, honor_timestamps true; a job
//   without its own interval/timeout inherits the global ones.
// - Validation follows Prometheus: unique non-empty job names, timeout not
//   above interval, valid label names, relabel rules (RelabelConfig::
//   Compile), file_sd patterns ending in .json/.yml/.yaml.
// - rule_files are kept as given (globs resolved relative to the file).
//   alerting and remote_write are parsed into AlertingConfig and
//   RemoteWriteConfig with Prometheus 3's validation (Alertmanager
//   api_version v2 only; remote_write url required, names unique, reserved
//   headers rejected, queue_config bounds); remote_read, storage and
//   tracing, and any sub-field we do not implement (oauth2, sigv4, proxies,
//   service discovery other than static, file, dns, http, consul and
//   kubernetes pod/node), are rejected with "not supported yet" naming the
//   field. Alertmanager sets take static and file discovery only.
// - Scrape jobs' dns_sd_configs, http_sd_configs, consul_sd_configs and
//   kubernetes_sd_configs take Prometheus's fields, defaults and checks
//   (DNS names required and a port for non-SRV types; http URL absolute
//   http(s); consul server non-empty, username/password exclusive with
//   basic_auth, token exclusive with authorization; kubernetes role
//   required, api_server exclusive with own_namespace, HTTP client fields
//   only with api_server, selector roles allowed for the role). remote_write metadata_config is
//   validated and ignored (remote-write 1.0 senders may omit metadata).
// - HTTP client settings (basic_auth with password or password_file,
//   authorization type/credentials/credentials_file, bearer_token(_file),
//   tls_config ca_file/cert_file/key_file/server_name/
//   insecure_skip_verify, follow_redirects) are parsed the same way wherever
//   Prometheus allows them: scrape configs, alertmanagers, remote_write,
//   with its mutual-exclusion rules (e.g. basic_auth with authorization or
//   bearer_token is an error). bearer_token(_file) becomes authorization
//   type Bearer. Files are resolved relative to the config file and read
//   when used, not parsed.
// - Target files of file_sd_configs (ReadTargetFile) hold a list of
//   {targets: [...], labels: {...}} groups, in YAML or JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "scrape/relabel.h"

namespace gpumon::scrape {

// A group of targets sharing labels, as static_configs and file SD give.
struct TargetGroup {
  std::vector<std::string> targets;  // host:port addresses
  Labels labels;
  std::string source;  // where it came from, for messages
};

// Client-side HTTP settings shared by scraping, Alertmanager and remote
// write. Empty strings mean "not set".
struct HttpClientConfig {
  std::string basic_auth_username;
  std::string basic_auth_password;
  std::string basic_auth_password_file;  // resolved against the config file's directory
  std::string authorization_type;        // "Bearer" when credentials are set
  std::string authorization_credentials;
  std::string authorization_credentials_file;  // resolved against the config file's directory
  std::string tls_ca_file;                     // resolved against the config file's directory
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_server_name;
  bool tls_insecure_skip_verify = false;
  bool follow_redirects = true;
  bool basic_auth_set = false;  // a basic_auth block was given (username may be empty)
  bool has_basic_auth() const { return basic_auth_set || !basic_auth_username.empty(); }
  bool has_authorization() const {
    return !authorization_credentials.empty() || !authorization_credentials_file.empty();
  }
};

struct FileSdConfig {
  std::vector<std::string> files;  // glob patterns
  int64_t refresh_interval_ms = 5 * 60 * 1000;
};

// dns_sd_configs[i]: targets from DNS records, looked up with the system
// resolver (resolv.conf, search domains).
struct DnsSdConfig {
  std::vector<std::string> names;
  std::string type = "SRV";  // SRV, A, AAAA, MX or NS (upper case after parsing)
  int port = 0;              // required except for SRV
  int64_t refresh_interval_ms = 30 * 1000;
};

// http_sd_configs[i]: a URL answering a JSON list of target groups.
struct HttpSdConfig {
  std::string url;
  int64_t refresh_interval_ms = 60 * 1000;
  HttpClientConfig http;
};

// consul_sd_configs[i]: services from Consul's catalog and health APIs.
struct ConsulSdConfig {
  std::string server = "localhost:8500";
  std::string path_prefix;
  std::string scheme = "http";
  std::string token;       // sent as a bearer token (Consul accepts it like X-Consul-Token)
  std::string datacenter;  // empty: the agent's own (asked at /v1/agent/self)
  std::string namespace_;
  std::string partition;
  std::string tag_separator = ",";
  bool allow_stale = true;
  int64_t refresh_interval_ms = 30 * 1000;
  std::vector<std::string> services;  // empty: all
  std::vector<std::string> tags;      // a service needs all of them
  std::map<std::string, std::string> node_meta;
  std::string filter;         // Consul filter expression for the service list
  std::string health_filter;  // Consul filter expression for the instances
  HttpClientConfig http;
};

// kubernetes_sd_configs[i]: pods or nodes listed from the API server.
struct KubernetesSdConfig {
  std::string role;                     // "pod" or "node"
  std::string api_server;               // empty: in-cluster (service account)
  std::vector<std::string> namespaces;  // empty: all
  bool own_namespace = false;
  struct Selector {
    std::string role;
    std::string label;  // label selector, passed to the API server as given
    std::string field;  // field selector, likewise
  };
  std::vector<Selector> selectors;
  HttpClientConfig http;
};

struct ScrapeConfig {
  std::string job_name;
  int64_t scrape_interval_ms = 0;  // resolved: never 0 after parsing
  int64_t scrape_timeout_ms = 0;
  std::string metrics_path = "/metrics";
  std::string scheme = "http";
  std::map<std::string, std::vector<std::string>> params;
  bool honor_labels = false;
  bool honor_timestamps = true;
  uint64_t sample_limit = 0;  // 0: no limit
  uint64_t label_limit = 0;
  uint64_t label_name_length_limit = 0;
  uint64_t label_value_length_limit = 0;
  uint64_t target_limit = 0;
  uint64_t body_size_limit = 0;  // bytes
  std::vector<TargetGroup> static_configs;
  std::vector<FileSdConfig> file_sd_configs;
  std::vector<DnsSdConfig> dns_sd_configs;
  std::vector<HttpSdConfig> http_sd_configs;
  std::vector<ConsulSdConfig> consul_sd_configs;
  std::vector<KubernetesSdConfig> kubernetes_sd_configs;
  std::vector<RelabelConfig> relabel_configs;
  std::vector<RelabelConfig> metric_relabel_configs;
  HttpClientConfig http;
  // The job's YAML as written, to tell whether a reload changed it.
  std::string fingerprint;
};

struct GlobalConfig {
  int64_t scrape_interval_ms = 60 * 1000;
  int64_t scrape_timeout_ms = 10 * 1000;
  int64_t evaluation_interval_ms = 60 * 1000;
  Labels external_labels;
};

// alerting.alertmanagers[i]: where notifications go.
struct AlertmanagerConfig {
  std::string scheme = "http";
  std::string path_prefix = "/";
  std::string api_version = "v2";  // only v2 is accepted (as Prometheus 3)
  int64_t timeout_ms = 10 * 1000;
  std::vector<TargetGroup> static_configs;
  std::vector<FileSdConfig> file_sd_configs;
  std::vector<RelabelConfig> relabel_configs;  // applied to the AM targets
  // Applied to each alert after the global alert_relabel_configs, for this
  // Alertmanager set only (Prometheus 3).
  std::vector<RelabelConfig> alert_relabel_configs;
  HttpClientConfig http;
};

struct AlertingConfig {
  std::vector<RelabelConfig> alert_relabel_configs;  // applied to each alert
  std::vector<AlertmanagerConfig> alertmanagers;
};

// remote_write[i].queue_config, with Prometheus's defaults.
struct RemoteWriteQueueConfig {
  int capacity = 10000;  // samples buffered per shard
  int max_shards = 50;
  int min_shards = 1;
  int max_samples_per_send = 2000;
  int64_t batch_send_deadline_ms = 5 * 1000;
  int64_t min_backoff_ms = 30;
  int64_t max_backoff_ms = 5 * 1000;
  bool retry_on_http_429 = false;
  int64_t sample_age_limit_ms = 0;  // 0: no limit; older samples are dropped
};

struct RemoteWriteConfig {
  std::string url;   // required, absolute http(s) URL
  std::string name;  // unique when set; defaults to a hash of the config
  int64_t remote_timeout_ms = 30 * 1000;
  std::map<std::string, std::string> headers;
  std::vector<RelabelConfig> write_relabel_configs;
  RemoteWriteQueueConfig queue;
  HttpClientConfig http;
};

struct Config {
  GlobalConfig global;
  std::vector<std::string> rule_files;
  AlertingConfig alerting;
  std::vector<RemoteWriteConfig> remote_write;
  std::vector<ScrapeConfig> scrape_configs;
  std::string file;  // path it was loaded from
  std::string yaml;  // text as given (for /api/v1/status/config)
};

// Parses configuration text; `file` names it in messages and anchors
// relative paths (file SD and rule files).
Result<Config> ParseConfig(const std::string& text, const std::string& file);
Result<Config> LoadConfig(const std::string& path);

// Reads one file_sd target file (YAML or JSON by extension).
Result<std::vector<TargetGroup>> ReadTargetFile(const std::string& path);

// Whether a remote_write header is one the sender owns (case-insensitive).
bool IsReservedRemoteWriteHeader(std::string_view name);

// Parses a byte size such as "10MB", "512KiB" or "0" (Prometheus units).
Result<uint64_t> ParseByteSize(std::string_view text);

}  // namespace gpumon::scrape
