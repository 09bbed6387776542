#include "scrape/discovery/file.h"

#include <set>

#include "common/log.h"
#include "common/path_glob.h"

namespace gpumon::scrape::discovery {

Result<std::vector<TargetGroup>> FileDiscoverer::Refresh() {
  std::set<std::string> present;
  for (const auto& pattern : config_.files) {
    for (const auto& path : GlobPaths(pattern)) {
      present.insert(path);
      auto groups = ReadTargetFile(path);
      if (!groups.ok()) {
        LogWarn("file discovery: " + groups.status().message());
        continue;  // keep what the file gave before
      }
      for (auto& g : *groups) {
        std::vector<Label> labels(g.labels.begin(), g.labels.end());
        labels.push_back({"__meta_filepath", path});
        g.labels = Labels::FromUnsorted(std::move(labels));
      }
      by_file_[path] = std::move(*groups);
    }
  }
  std::erase_if(by_file_, [&](const auto& kv) { return !present.count(kv.first); });
  std::vector<TargetGroup> out;
  for (const auto& [path, groups] : by_file_) out.insert(out.end(), groups.begin(), groups.end());
  return out;
}

}  // namespace gpumon::scrape::discovery
