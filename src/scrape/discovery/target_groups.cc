#include "scrape/discovery/target_groups.h"

#include <algorithm>

namespace gpumon::scrape::discovery {

std::string JoinHostPort(std::string_view host, std::string_view port) {
  if (host.find(':') != std::string_view::npos) {
    return "[" + std::string(host) + "]:" + std::string(port);
  }
  return std::string(host) + ":" + std::string(port);
}

std::string SanitizeLabelName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) c = '_';
  }
  return out;
}

TargetGroup SingleTarget(const std::string& address, std::vector<Label> labels,
                         const std::string& source) {
  std::erase_if(labels, [](const Label& l) { return l.value.empty(); });
  TargetGroup g;
  g.targets.push_back(address);
  g.labels = Labels::FromUnsorted(std::move(labels));
  g.source = source;
  return g;
}

}  // namespace gpumon::scrape::discovery
