// Alertmanager discovery: which Alertmanagers one alerting.alertmanagers
// entry points at, as Prometheus's notifier derives them.
//
// Contract:
// - Each target address of static_configs and of the file_sd_configs files
//   (globs expanded, files read with scrape::ReadTargetFile) starts with
//   its group's labels, __address__, __scheme__ (the config's scheme) and
//   __alerts_path__ (AlertsPath(path_prefix)); relabel_configs then run.
//   A dropped target is listed in `dropped` with its labels before
//   relabeling; a kept one becomes <__scheme__>://<__address__>
//   <__alerts_path__>, deduplicated by URL.
// - An address that still contains "/" after relabeling, or an unreadable
//   target file, is reported in `errors` and skipped, the rest still count.
#pragma once

#include <string>
#include <vector>

#include "common/labels.h"
#include "scrape/config.h"

namespace gpumon::notifier {

struct AlertmanagerEndpoint {
  std::string url;
  Labels labels;
};

struct DiscoveredAlertmanagers {
  std::vector<AlertmanagerEndpoint> active;
  std::vector<AlertmanagerEndpoint> dropped;
  std::vector<std::string> errors;
};

// path.Join("/", prefix, "/api/v2/alerts"), cleaned of "//", "." and "..".
std::string AlertsPath(const std::string& path_prefix);

// The target groups of the config: static ones, then those read from the
// files its file_sd_configs match now.
std::vector<scrape::TargetGroup> CollectTargetGroups(const scrape::AlertmanagerConfig& config,
                                                     std::vector<std::string>* errors);

// Files matched by the config's file_sd globs with their sizes and
// modification times, to tell cheaply whether discovery must run again.
std::string TargetFilesFingerprint(const scrape::AlertmanagerConfig& config);

DiscoveredAlertmanagers BuildAlertmanagers(const std::vector<scrape::TargetGroup>& groups,
                                           const scrape::AlertmanagerConfig& config);

}  // namespace gpumon::notifier
