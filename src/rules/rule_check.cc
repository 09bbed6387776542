#include "rules/rule_check.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <utility>

#include "promql/parser.h"
#include "rules/prometheus2_compat.h"
#include "rules/yaml_util.h"

namespace gpumon::rules {

namespace {

void SplitLines(const std::string& text, std::vector<std::string>* out) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out->push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

}  // namespace

std::string Prometheus3OnlyFields(std::string_view yaml, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception&) {
    return "";  // the loader reports invalid YAML
  }
  if (!root.IsMap() || !root["groups"] || !root["groups"].IsSequence()) return "";
  std::string out;
  for (const auto& g : root["groups"]) {
    if (!g.IsMap()) continue;
    std::string name = g["name"] && g["name"].IsScalar() ? g["name"].Scalar() : "";
    for (auto it = g.begin(); it != g.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      if (key != "query_offset" && key != "labels") continue;
      const YAML::Mark m = it->first.Mark();
      out += (out.empty() ? "" : "\n") + YamlPosition(path, m) + "group \"" + name +
             "\": field \"" + key + "\": field " + key +
             " not found in Prometheus 2.x rule groups (a Prometheus 3 field; "
             "--prometheus3 accepts it)";
    }
  }
  return out;
}

std::string Prometheus3OnlyPromql(const RuleFileSpec& spec) {
  std::string out;
  for (const auto& g : spec.groups) {
    int index = 0;
    for (const auto& r : g.rules) {
      ++index;
      promql::ParseResult p = promql::Parse(r.expr);
      if (!p.ok()) continue;
      std::string why = Prometheus2Incompatibility(*p.expr);
      if (why.empty()) continue;
      out += (out.empty() ? "" : "\n") + spec.path + ":" + std::to_string(r.line) + ": group \"" +
             g.name + "\", rule " + std::to_string(index) + " \"" +
             (r.alert.empty() ? r.record : r.alert) +
             "\": field \"expr\": could not parse expression: " + why +
             " (--prometheus3 accepts it)";
    }
  }
  return out;
}

Result<RuleFileSpec> LoadRuleFileChecked(const std::string& path, bool prometheus3) {
  Result<std::string> text = ReadSourceFile(path);
  if (!text.ok()) return text.status();
  Result<RuleFileSpec> spec = ParseRuleFile(*text, path);
  if (prometheus3) return spec;
  std::string extra = Prometheus3OnlyFields(*text, path);
  if (spec.ok()) {
    std::string promql = Prometheus3OnlyPromql(*spec);
    if (!promql.empty()) extra += (extra.empty() ? "" : "\n") + promql;
  }
  if (extra.empty()) return spec;
  if (!spec.ok()) return Status::Error(spec.status().message() + "\n" + extra);
  return Status::Error(extra);
}

std::string DuplicateRulesLint(const RuleFileSpec& spec) {
  std::vector<std::pair<std::string, Labels>> rules;
  for (const auto& g : spec.groups) {
    for (const auto& r : g.rules)
      rules.emplace_back(r.alert.empty() ? r.record : r.alert, r.labels);
  }
  std::sort(rules.begin(), rules.end());
  std::vector<const std::pair<std::string, Labels>*> dups;
  for (size_t i = 1; i < rules.size(); ++i) {
    if (rules[i] == rules[i - 1] && (dups.empty() || !(*dups.back() == rules[i]))) {
      dups.push_back(&rules[i]);
    }
  }
  if (dups.empty()) return "";
  std::string msg = "lint error " + std::to_string(dups.size()) + " duplicate rule(s) found.\n";
  for (const auto* d : dups) {
    msg += "Metric: " + d->first + "\nLabel(s):\n";
    for (const auto& l : d->second) msg += "\t" + l.name + ": " + l.value + "\n";
  }
  return msg + "Might cause inconsistency while recording expressions";
}

RuleCheckResult CheckRuleFile(const std::string& path, const RuleCheckOptions& opts) {
  RuleCheckResult out;
  Result<RuleFileSpec> spec = LoadRuleFileChecked(path, opts.prometheus3);
  if (!spec.ok()) {
    SplitLines(spec.status().message(), &out.errors);
    return out;
  }
  if (opts.lint_duplicates) out.lint = DuplicateRulesLint(*spec);
  if (out.lint.empty()) {
    for (const auto& g : spec->groups) out.rules += static_cast<int>(g.rules.size());
  }
  return out;
}

}  // namespace gpumon::rules
