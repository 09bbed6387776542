#include "scrape/discovery/file.h"

#include <glob.h>

#include <set>

#include "common/log.h"

namespace gpumon::scrape::discovery {
namespace {

std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

}  // namespace

Result<std::vector<TargetGroup>> FileDiscoverer::Refresh() {
  std::set<std::string> present;
  for (const auto& pattern : config_.files) {
    for (const auto& path : Glob(pattern)) {
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
