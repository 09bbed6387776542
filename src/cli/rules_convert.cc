// Rule files: the DCGM-named variant (rules_convert.h).

#include "cli/rules_convert.h"

#include <yaml-cpp/yaml.h>

#include "cli/template_rewrite.h"
#include "cli/yaml_doc.h"
#include "gpu/catalog.h"
#include "gpu/dcgm_names.h"
#include "rules/rule_file.h"

namespace gpumon::cli {
namespace {

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

// The name a rule node goes by: its alert or record.
std::string RuleName(const YamlNode& rule, bool* alert) {
  const YamlNode* a = rule.Find("alert");
  *alert = a && a->IsScalar() && !a->text.empty();
  if (*alert) return a->text;
  const YamlNode* r = rule.Find("record");
  return r && r->IsScalar() ? r->text : "";
}

// The loader's verdict, except for template functions gpumon's template
// engine does not implement but Prometheus does (such as query): templates
// are converted as text, and the generated files are Prometheus's to run.
Status OnlyUnsupportedTemplates(const Status& loaded) {
  std::string kept;
  size_t start = 0;
  const std::string& msg = loaded.message();
  while (start <= msg.size()) {
    size_t end = msg.find('\n', start);
    std::string line = msg.substr(start, end == std::string::npos ? end : end - start);
    bool template_only = line.find(": template: ") != std::string::npos &&
                         line.find("is not supported in alert templates") != std::string::npos;
    if (!template_only && !line.empty()) kept += (kept.empty() ? "" : "\n") + line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return kept.empty() ? Status::Ok() : Status::Error(kept);
}

Result<std::string> Label(const promql::RewriteMap& map, std::string_view name) {
  if (map.unmapped_labels.count(name)) {
    return Status::Error("label \"" + std::string(name) + "\" has no DCGM equivalent");
  }
  return promql::RenameLabel(map, name);
}

// Renames the keys of a label map (and rewrites templated values).
Status ConvertLabelMap(const promql::RewriteMap& map, bool templates, YamlNode* labels) {
  if (!labels->IsMap()) return Status::Ok();
  for (auto& [k, v] : labels->map) {
    auto l = Label(map, k);
    if (!l.ok()) return l.status();
    k = *l;
    if (templates && v.IsScalar()) {
      auto t = RewriteTemplate(v.text, map);
      if (!t.ok()) return t.status().WithContext("labels." + k);
      v.SetText(*t);
    }
  }
  return Status::Ok();
}

Result<YamlNode> ConvertRule(const promql::RewriteMap& map, const YamlNode& rule) {
  YamlNode out = rule;
  bool alert = false;
  RuleName(rule, &alert);
  if (YamlNode* expr = out.Find("expr"); expr && expr->IsScalar()) {
    auto r = ConvertExpr(map, expr->text);
    if (!r.ok()) return r.status();
    expr->SetText(*r);
  }
  if (YamlNode* labels = out.Find("labels")) {
    Status s = ConvertLabelMap(map, alert, labels);
    if (!s.ok()) return s;
  }
  if (YamlNode* annotations = out.Find("annotations"); annotations && annotations->IsMap()) {
    for (auto& [k, v] : annotations->map) {
      if (!v.IsScalar()) continue;
      auto t = RewriteTemplate(v.text, map);
      if (!t.ok()) return t.status().WithContext("annotations." + k);
      v.SetText(*t);
    }
  }
  return out;
}

}  // namespace

Result<std::string> ConvertExpr(const promql::RewriteMap& map, const std::string& expr) {
  auto r = promql::RewriteQuery(expr, map, /*pretty=*/true);
  if (!r.ok()) return r.status();
  size_t start = r->find_first_not_of(' ');
  return start == std::string::npos ? *r : r->substr(start);
}

promql::RewriteMap DcgmRewriteMap() {
  promql::RewriteMap map;
  for (const auto& m : gpu::DcgmMappingTable()) {
    promql::MetricMapping mm;
    mm.complete = m.complete;
    for (const auto& s : m.series) {
      promql::SelectorVariant v;
      v.name = std::string(s.name);
      for (const auto& [l, value] : s.fixed)
        v.fixed_labels.push_back({std::string(l), std::string(value)});
      v.scale = s.scale;
      v.bit = s.bit;
      for (const auto& c : s.conditions) {
        auto matcher =
            tsdb::Matcher::Make(c.present ? tsdb::MatchType::kNotEqual : tsdb::MatchType::kEqual,
                                std::string(c.label), "");
        if (matcher.ok()) v.matchers.push_back(std::move(*matcher));
      }
      mm.variants.push_back(std::move(v));
    }
    map.metrics.emplace(std::string(m.def->name), std::move(mm));
  }
  for (const auto& p : gpu::DcgmLabelNames()) {
    map.labels.emplace(std::string(p.native), std::string(p.dcgm));
  }
  for (auto l : gpu::NativeOnlyLabels()) map.unmapped_labels.insert(std::string(l));
  return map;
}

DcgmRuleConverter::DcgmRuleConverter() : map_(DcgmRewriteMap()) {
  map_.unknown_metric = [this](std::string_view name) { return UnknownMetric(name); };
}

Status DcgmRuleConverter::UnknownMetric(std::string_view name) const {
  std::string n(name);
  if (dropped_records_.count(name)) {
    return Status::Error("uses " + n + ", whose recording rule has no DCGM version");
  }
  if (defined_records_.count(name)) return Status::Ok();
  for (const auto& def : gpu::Catalog()) {
    if (def.name == name) return Status::Error(n + " has no DCGM equivalent in the metric catalog");
  }
  if (n.rfind("gpu_", 0) == 0 || n.rfind("gpumon_", 0) == 0) {
    return Status::Error(n + " is not in the metric catalog");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> DcgmRuleConverter::ConvertRuleFiles(
    const std::vector<SourceFile>& inputs) {
  std::set<std::string> dropped_alerts;
  return Convert(inputs, &dropped_alerts);
}

Result<std::vector<std::string>> DcgmRuleConverter::Convert(const std::vector<SourceFile>& inputs,
                                                            std::set<std::string>* dropped_alerts) {
  std::vector<YamlNode> docs;
  defined_records_.clear();
  dropped_records_.clear();
  for (const auto& in : inputs) {
    auto spec = rules::ParseRuleFile(in.text, in.path);
    if (!spec.ok()) {
      Status s = OnlyUnsupportedTemplates(spec.status());
      if (!s.ok()) return s;
    }
    try {
      docs.push_back(FromYaml(YAML::Load(in.text)));
    } catch (const YAML::Exception& e) {
      return Status::Error(in.path + ": invalid YAML: " + e.msg);
    }
    if (const YamlNode* groups = docs.back().Find("groups"); groups && groups->IsSeq()) {
      for (const auto& g : groups->seq) {
        const YamlNode* rules = g.Find("rules");
        for (size_t i = 0; rules && rules->IsSeq() && i < rules->seq.size(); ++i) {
          bool alert = false;
          std::string name = RuleName(rules->seq[i], &alert);
          if (!alert && !name.empty()) defined_records_.insert(name);
        }
      }
    }
  }
  // Each rule's conversion, or why it has none; repeated until no further
  // recording rule is dropped (a dropped one drops the rules using it).
  std::vector<std::vector<std::vector<Result<YamlNode>>>> results;
  while (true) {
    results.clear();
    size_t before = dropped_records_.size();
    for (const auto& doc : docs) {
      auto& file = results.emplace_back();
      const YamlNode* groups = doc.Find("groups");
      if (!groups || !groups->IsSeq()) continue;
      for (const auto& g : groups->seq) {
        auto& group = file.emplace_back();
        const YamlNode* rules = g.Find("rules");
        if (!rules || !rules->IsSeq()) continue;
        for (const auto& r : rules->seq) {
          group.push_back(ConvertRule(map_, r));
          bool alert = false;
          std::string name = RuleName(r, &alert);
          if (!alert && !group.back().ok()) dropped_records_.insert(name);
        }
      }
    }
    if (dropped_records_.size() == before) break;
  }
  std::vector<std::string> outputs;
  dropped_.clear();
  for (size_t f = 0; f < docs.size(); ++f) {
    YamlNode doc = docs[f];
    if (YamlNode* groups = doc.Find("groups"); groups && groups->IsSeq()) {
      for (size_t gi = 0; gi < groups->seq.size(); ++gi) {
        YamlNode& g = groups->seq[gi];
        const YamlNode* gname = g.Find("name");
        std::string group_name = gname ? gname->text : "";
        if (YamlNode* labels = g.Find("labels")) {
          Status s = ConvertLabelMap(map_, false, labels);
          if (!s.ok()) return s.WithContext(inputs[f].path + ": group \"" + group_name + "\"");
        }
        YamlNode* rules = g.Find("rules");
        if (!rules || !rules->IsSeq()) continue;
        std::vector<YamlNode> kept;
        for (size_t ri = 0; ri < rules->seq.size(); ++ri) {
          auto& res = results[f][gi][ri];
          if (res.ok()) {
            kept.push_back(std::move(*res));
            continue;
          }
          bool alert = false;
          std::string name = RuleName(rules->seq[ri], &alert);
          std::string why = OneLine(res.status().message());
          if (alert) dropped_alerts->insert(name);
          std::string kind = alert ? "alert" : "record";
          kept.push_back(YamlNode::Comment(kind + " " + name + " not converted: " + why));
          dropped_.push_back(inputs[f].path + ": group \"" + group_name + "\": " + kind + " \"" +
                             name + "\": " + why);
        }
        rules->seq = std::move(kept);
      }
    }
    outputs.push_back(WriteYaml(doc, {"generated by gpumon rules convert from " +
                                      inputs[f].header_name + "; do not edit"}));
  }
  return outputs;
}

}  // namespace gpumon::cli
