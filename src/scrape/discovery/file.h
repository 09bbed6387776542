// file_sd_configs[i] as a discoverer: the target files matched by the
// globs, re-read every refresh_interval.
//
// Contract: a matched file that cannot be read or parsed keeps the groups
// it gave before (the reason is logged); a file no longer matched drops
// its groups. Refresh never fails as a whole. Groups get
// __meta_filepath (the file's path), as in Prometheus.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scrape/discovery/discoverer.h"

namespace gpumon::scrape::discovery {

class FileDiscoverer : public Discoverer {
 public:
  FileDiscoverer(FileSdConfig config, std::string name)
      : config_(std::move(config)), name_(std::move(name)) {}
  std::string Name() const override { return name_; }
  int64_t RefreshIntervalMs() const override { return config_.refresh_interval_ms; }
  bool Local() const override { return true; }
  Result<std::vector<TargetGroup>> Refresh() override;

 private:
  FileSdConfig config_;
  std::string name_;
  std::map<std::string, std::vector<TargetGroup>> by_file_;
};

}  // namespace gpumon::scrape::discovery
