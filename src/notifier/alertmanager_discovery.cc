#include "notifier/alertmanager_discovery.h"

#include <sys/stat.h>

#include <set>

#include "common/path_glob.h"
#include "scrape/relabel.h"

namespace gpumon::notifier {
namespace {

constexpr std::string_view kAddressLabel = "__address__";
constexpr std::string_view kSchemeLabel = "__scheme__";
constexpr std::string_view kAlertsPathLabel = "__alerts_path__";

}  // namespace

std::string AlertsPath(const std::string& path_prefix) {
  std::vector<std::string> parts;
  auto add = [&](const std::string& p) {
    size_t i = 0;
    while (i <= p.size()) {
      size_t j = p.find('/', i);
      if (j == std::string::npos) j = p.size();
      std::string seg = p.substr(i, j - i);
      if (seg == "..") {
        if (!parts.empty()) parts.pop_back();
      } else if (!seg.empty() && seg != ".") {
        parts.push_back(seg);
      }
      i = j + 1;
    }
  };
  add(path_prefix);
  add("/api/v2/alerts");
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

std::vector<scrape::TargetGroup> CollectTargetGroups(const scrape::AlertmanagerConfig& config,
                                                     std::vector<std::string>* errors) {
  std::vector<scrape::TargetGroup> groups = config.static_configs;
  for (const auto& sd : config.file_sd_configs) {
    for (const auto& pattern : sd.files) {
      for (const auto& path : GlobPaths(pattern)) {
        auto read = scrape::ReadTargetFile(path);
        if (!read.ok()) {
          if (errors) errors->push_back(read.status().message());
          continue;
        }
        for (auto& g : read.value()) groups.push_back(std::move(g));
      }
    }
  }
  return groups;
}

std::string TargetFilesFingerprint(const scrape::AlertmanagerConfig& config) {
  std::string out;
  for (const auto& sd : config.file_sd_configs) {
    for (const auto& pattern : sd.files) {
      for (const auto& path : GlobPaths(pattern)) {
        struct stat st {};
        if (stat(path.c_str(), &st) != 0) continue;
        out += path + "\n" + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) +
               "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
      }
    }
  }
  return out;
}

DiscoveredAlertmanagers BuildAlertmanagers(const std::vector<scrape::TargetGroup>& groups,
                                           const scrape::AlertmanagerConfig& config) {
  DiscoveredAlertmanagers out;
  std::set<std::string> seen;
  const std::string alerts_path = AlertsPath(config.path_prefix);
  for (const auto& group : groups) {
    for (const auto& address : group.targets) {
      std::vector<Label> items = {{std::string(kAddressLabel), address},
                                  {std::string(kSchemeLabel), config.scheme},
                                  {std::string(kAlertsPathLabel), alerts_path}};
      // Group labels do not override the target's own (Prometheus merges
      // the same way).
      for (const Label& l : group.labels) {
        if (l.name != kAddressLabel) items.push_back(l);
      }
      Labels before = Labels::FromUnsorted(items);
      auto after = scrape::Relabel(before, config.relabel_configs);
      if (!after) {
        out.dropped.push_back({std::string(before.Get(kSchemeLabel)) + "://" +
                                   std::string(before.Get(kAddressLabel)) +
                                   std::string(before.Get(kAlertsPathLabel)),
                               before});
        continue;
      }
      const std::string addr(after->Get(kAddressLabel));
      if (addr.empty() || addr.find('/') != std::string::npos) {
        out.errors.push_back(group.source + ": \"" + addr + "\" is not a valid hostname");
        continue;
      }
      std::string url = std::string(after->Get(kSchemeLabel)) + "://" + addr +
                        std::string(after->Get(kAlertsPathLabel));
      if (!seen.insert(url).second) continue;
      out.active.push_back({std::move(url), *after});
    }
  }
  return out;
}

}  // namespace gpumon::notifier
