#include "gpu/agent_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "common/duration.h"

namespace gpumon::gpu {
namespace {

std::string Where(const std::string& file, const YAML::Mark& mark) {
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

Status FieldError(const std::string& file, const YAML::Node& node, const std::string& field,
                  const std::string& what) {
  return Status::Error(Where(file, node.Mark()) + ": field \"" + field + "\": " + what);
}

Result<std::string> Scalar(const std::string& file, const YAML::Node& node,
                           const std::string& field) {
  if (!node.IsScalar()) return FieldError(file, node, field, "expected a single value");
  return node.Scalar();
}

std::string GroupList() {
  std::string s;
  for (int g = 0; g < kGroupCount; ++g) {
    if (!IsSelectableGroup(static_cast<Group>(g))) continue;
    if (!s.empty()) s += ", ";
    s += GroupName(static_cast<Group>(g));
  }
  return s;
}

}  // namespace

AgentConfig::AgentConfig() {
  enabled.fill(true);
  for (int g = 0; g < kGroupCount; ++g) interval[g] = DefaultInterval(static_cast<Group>(g));
}

Result<AgentConfig> ParseAgentConfig(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::Error(Where(file, e.mark) + ": invalid YAML: " + e.msg);
  }
  AgentConfig cfg;
  if (root.IsNull()) return cfg;  // an empty file means all defaults
  if (!root.IsMap()) {
    return Status::Error(Where(file, root.Mark()) + ": expected a mapping of settings");
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    const YAML::Node value = it->second;  // a copy: the iterator yields temporaries
    if (key == "listen" || key == "hostname" || key == "nvml_library" || key == "names") {
      auto s = Scalar(file, value, key);
      if (!s.ok()) return s.status();
      if (key == "listen") cfg.listen = *s;
      if (key == "hostname") cfg.hostname = *s;
      if (key == "nvml_library") cfg.nvml_library = *s;
      if (key == "names") {
        cfg.names = NameSchemeFromString(*s);
        if (!cfg.names) {
          return FieldError(file, value, key,
                            "unknown naming scheme \"" + *s + "\" (use native, dcgm or both)");
        }
      }
    } else if (key == "groups") {
      if (!value.IsMap()) return FieldError(file, value, key, "expected a mapping of groups");
      for (auto g = value.begin(); g != value.end(); ++g) {
        const std::string name = g->first.as<std::string>();
        const std::string field = "groups." + name;
        auto group = GroupFromName(name);
        if (!group || !IsSelectableGroup(*group)) {
          return FieldError(file, g->first, field,
                            "unknown metric group (valid: " + GroupList() + ")");
        }
        auto s = Scalar(file, g->second, field);
        if (!s.ok()) return s.status();
        int gi = static_cast<int>(*group);
        if (*s == "off" || *s == "false") {
          cfg.enabled[gi] = false;
          continue;
        }
        auto d = ParseDuration(*s);
        if (!d.ok()) return FieldError(file, g->second, field, d.status().message());
        if (d->count() < 100) {
          return FieldError(file, g->second, field, "interval must be at least 100ms");
        }
        cfg.enabled[gi] = true;
        cfg.interval[gi] = *d;
      }
    } else {
      return FieldError(file, it->first, key,
                        "unknown field (valid: listen, names, hostname, nvml_library, groups)");
    }
  }
  return cfg;
}

Result<AgentConfig> LoadAgentConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot open config file");
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseAgentConfig(buf.str(), path);
}

}  // namespace gpumon::gpu
