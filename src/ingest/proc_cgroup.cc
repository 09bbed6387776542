#include "ingest/proc_cgroup.h"

#include <fstream>
#include <sstream>

namespace gpumon::ingest {
namespace {

constexpr size_t kIdLength = 64;

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool IsId(std::string_view s) {
  if (s.size() != kIdLength) return false;
  for (char c : s) {
    if (!IsHex(c)) return false;
  }
  return true;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The container id one path component names, or "".
std::string_view IdOf(std::string_view component) {
  if (component.size() > 6 && component.substr(component.size() - 6) == ".scope") {
    component.remove_suffix(6);
  }
  if (StartsWith(component, "crio-conmon-") || StartsWith(component, "libpod-conmon-")) return {};
  for (std::string_view prefix :
       {"docker-", "cri-containerd-", "crio-", "libpod-", "containerd-"}) {
    if (StartsWith(component, prefix)) {
      component.remove_prefix(prefix.size());
      break;
    }
  }
  return IsId(component) ? component : std::string_view();
}

}  // namespace

std::string ContainerIdFromCgroup(std::string_view text) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    // "hierarchy-id:controllers:path"; the path may itself contain ':'.
    const size_t first = line.find(':');
    if (first == std::string_view::npos) continue;
    const size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    std::string_view found;
    while (!path.empty()) {
      const size_t slash = path.find('/');
      const std::string_view component = path.substr(0, slash);
      path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
      if (std::string_view id = IdOf(component); !id.empty()) found = id;
    }
    if (!found.empty()) {
      std::string id(found);
      for (char& c : id) {
        if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
      }
      return id;
    }
  }
  return {};
}

std::string ReadContainerId(const std::string& proc_root, int pid) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/cgroup", std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return ContainerIdFromCgroup(s.str());
}

}  // namespace gpumon::ingest
