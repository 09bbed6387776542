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

// A positive whole number (sizes and counts).
Result<size_t> Count(const std::string& file, const YAML::Node& node, const std::string& field) {
  auto s = Scalar(file, node, field);
  if (!s.ok()) return s.status();
  const std::string& text = *s;
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return FieldError(file, node, field, "expected a positive whole number, got \"" + text + "\"");
  }
  size_t v = std::stoull(text);
  if (v == 0) return FieldError(file, node, field, "must be at least 1");
  return v;
}

Status ParsePush(const std::string& file, const YAML::Node& value, AgentPushConfig* push) {
  if (!value.IsMap()) return FieldError(file, value, "push", "expected a mapping of settings");
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    const std::string field = "push." + key;
    const YAML::Node v = it->second;
    if (key == "enabled") {
      auto s = Scalar(file, v, field);
      if (!s.ok()) return s.status();
      if (*s == "true") {
        push->enabled = true;
      } else if (*s == "false") {
        push->enabled = false;
      } else {
        return FieldError(file, v, field, "expected true or false, got \"" + *s + "\"");
      }
    } else if (key == "expiry") {
      auto s = Scalar(file, v, field);
      if (!s.ok()) return s.status();
      auto d = *s == "0" ? Result<std::chrono::milliseconds>(std::chrono::milliseconds(0))
                         : ParseDuration(*s);
      if (!d.ok()) return FieldError(file, v, field, d.status().message());
      if (d->count() % 1000 != 0) {
        return FieldError(file, v, field, "must be whole seconds (or 0: never expire)");
      }
      push->expiry = std::chrono::duration_cast<std::chrono::seconds>(*d);
    } else if (key == "max_groups" || key == "max_series_per_group" || key == "max_series" ||
               key == "max_labels_per_series" || key == "max_body_bytes") {
      auto n = Count(file, v, field);
      if (!n.ok()) return n.status();
      if (key == "max_groups") push->max_groups = *n;
      if (key == "max_series_per_group") push->max_series_per_group = *n;
      if (key == "max_series") push->max_series = *n;
      if (key == "max_labels_per_series") push->max_labels_per_series = *n;
      if (key == "max_body_bytes") push->max_body_bytes = *n;
    } else {
      return FieldError(file, it->first, field,
                        "unknown field (valid: enabled, expiry, max_groups, "
                        "max_series_per_group, max_series, max_labels_per_series, "
                        "max_body_bytes)");
    }
  }
  if (push->max_series_per_group > push->max_series) {
    return FieldError(file, value, "push.max_series_per_group", "must not exceed push.max_series");
  }
  return Status::Ok();
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
    } else if (key == "push") {
      if (Status st = ParsePush(file, value, &cfg.push); !st.ok()) return st;
    } else {
      return FieldError(file, it->first, key,
                        "unknown field (valid: listen, names, hostname, nvml_library, groups, "
                        "push)");
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
