// http_sd_configs[i] as a discoverer: GET the URL, expect a JSON list of
// {"targets": [...], "labels": {...}} groups.
//
// Contract (Prometheus's http SD): only status 200 with Content-Type
// application/json is accepted; a null group, a non-string target or label
// value, or an invalid label name fails the refresh (the previous targets
// stay). Every group gets __meta_url = the configured URL. The request is
// bounded by the refresh interval, and uses the entry's HTTP client
// settings.
#pragma once

#include <string>
#include <vector>

#include "scrape/discovery/discoverer.h"

namespace gpumon::scrape::discovery {

class HttpDiscoverer : public Discoverer {
 public:
  HttpDiscoverer(HttpSdConfig config, std::string name)
      : config_(std::move(config)), name_(std::move(name)) {}
  std::string Name() const override { return name_; }
  int64_t RefreshIntervalMs() const override { return config_.refresh_interval_ms; }
  Result<std::vector<TargetGroup>> Refresh() override;

 private:
  HttpSdConfig config_;
  std::string name_;
};

}  // namespace gpumon::scrape::discovery
