// static_configs as a discoverer: the job's fixed target groups, never
// refreshed.
#pragma once

#include <string>
#include <vector>

#include "scrape/discovery/discoverer.h"

namespace gpumon::scrape::discovery {

class StaticDiscoverer : public Discoverer {
 public:
  explicit StaticDiscoverer(std::vector<TargetGroup> groups) : groups_(std::move(groups)) {}
  std::string Name() const override { return "static_configs"; }
  int64_t RefreshIntervalMs() const override { return INT64_MAX / 4; }
  bool Local() const override { return true; }
  Result<std::vector<TargetGroup>> Refresh() override { return groups_; }

 private:
  std::vector<TargetGroup> groups_;
};

}  // namespace gpumon::scrape::discovery
