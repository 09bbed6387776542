#include "rules/yaml_util.h"

#include <fstream>
#include <sstream>

namespace gpumon::rules {

Result<std::string> ReadSourceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string YamlPosition(const std::string& path, const YAML::Mark& m) {
  if (m.line < 0) return path + ": ";
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

Result<YAML::Node> LoadYaml(std::string_view text, const std::string& path) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::Error(YamlPosition(path, e.mark) + "invalid YAML: " + e.msg);
  }
}

Status ErrorLines(const std::vector<std::string>& errors) {
  std::string msg;
  for (const auto& e : errors) msg += (msg.empty() ? "" : "\n") + e;
  return Status::Error(msg);
}

}  // namespace gpumon::rules
