// Targets: turning discovered addresses into scrape targets with their
// final label sets, as Prometheus's target label population does.
//
// Contract:
// - BuildTarget starts from the group's labels plus __address__, adds the
//   job defaults when absent (job, __scheme__, __metrics_path__,
//   __scrape_interval__, __scrape_timeout__, __param_<name> from params),
//   applies relabel_configs, and then: a dropped target yields
//   std::nullopt; a missing __address__, an unparsable or inconsistent
//   interval/timeout label is an error; labels starting with "__" are
//   removed and instance defaults to __address__ (Prometheus 3.x: no
//   default port is added).
// - A target's identity (Hash) is its final labels plus URL; the scrape
//   loop derives its jittered offset from it, so it is stable across
//   restarts and reloads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "scrape/config.h"

namespace gpumon::scrape {

struct Target {
  Labels labels;      // after relabeling, "__" labels removed
  Labels discovered;  // before relabeling
  std::string scrape_pool;
  std::string url;
  int64_t interval_ms = 0;
  int64_t timeout_ms = 0;

  uint64_t Hash() const;
};

Result<std::optional<Target>> BuildTarget(const std::string& address, const TargetGroup& group,
                                          const ScrapeConfig& config);

// All targets of the groups; targets that fail to build are skipped and
// described in `errors`. Duplicates (same hash) are kept once.
std::vector<Target> BuildTargets(const std::vector<TargetGroup>& groups, const ScrapeConfig& config,
                                 std::vector<std::string>* errors);

}  // namespace gpumon::scrape
