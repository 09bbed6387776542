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
// - rule_files are kept as given (globs resolved relative to the file);
//   alerting, remote_write, remote_read, storage and tracing are rejected
//   with "not supported yet" naming the field.
// - Target files of file_sd_configs (ReadTargetFile) hold a list of
//   {targets: [...], labels: {...}} groups, in YAML or JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
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

struct FileSdConfig {
  std::vector<std::string> files;  // glob patterns
  int64_t refresh_interval_ms = 5 * 60 * 1000;
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
  std::vector<RelabelConfig> relabel_configs;
  std::vector<RelabelConfig> metric_relabel_configs;
  // The job's YAML as written, to tell whether a reload changed it.
  std::string fingerprint;
};

struct GlobalConfig {
  int64_t scrape_interval_ms = 60 * 1000;
  int64_t scrape_timeout_ms = 10 * 1000;
  int64_t evaluation_interval_ms = 60 * 1000;
  Labels external_labels;
};

struct Config {
  GlobalConfig global;
  std::vector<std::string> rule_files;
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

// Parses a byte size such as "10MB", "512KiB" or "0" (Prometheus units).
Result<uint64_t> ParseByteSize(std::string_view text);

}  // namespace gpumon::scrape
