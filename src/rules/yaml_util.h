// What the rules module's YAML readers share (rule files, rule unit test
// files, `rules check`): reading the source, loading its YAML, and the
// "<file>:<line>:<column>: " prefix of their error messages. Internal to
// gpumon_rules (yaml-cpp is a private dependency); include it from .cc
// files only.
//
// Contract:
// - ReadSourceFile: the file's bytes, or "<path>: cannot read the file".
// - YamlPosition: "<path>:<line>:<column>: " with 1-based line and column,
//   or "<path>: " for a mark without a position (yaml-cpp's null mark).
// - LoadYaml: the document of `text`; a syntax error becomes
//   "<position>invalid YAML: <yaml-cpp's message>". `path` only names the
//   source.
// - ErrorLines: the errors, one per line, as one error status (`errors`
//   must not be empty).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::rules {

Result<std::string> ReadSourceFile(const std::string& path);
std::string YamlPosition(const std::string& path, const YAML::Mark& m);
Result<YAML::Node> LoadYaml(std::string_view text, const std::string& path);
Status ErrorLines(const std::vector<std::string>& errors);

}  // namespace gpumon::rules
