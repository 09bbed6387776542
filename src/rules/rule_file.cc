#include "rules/rule_file.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "common/duration.h"
#include "common/names.h"
#include "promql/parser.h"
#include "rules/template.h"
#include "rules/yaml_util.h"

namespace gpumon::rules {

bool IsValidMetricName(std::string_view name) { return gpumon::IsValidMetricName(name); }

bool IsValidLabelName(std::string_view name) { return gpumon::IsValidLabelName(name); }

namespace {

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (n < 0 || i + n >= s.size() + (n == 0 ? 1 : 0)) {
      if (n != 0) return false;
    }
    for (int k = 1; k <= n; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    }
    i += n + 1;
  }
  return true;
}

const char* KindName(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence:
      return "!!seq";
    case YAML::NodeType::Map:
      return "!!map";
    default:
      return "!!str";
  }
}

// Collects every problem of one file, each prefixed with its position.
class FileParser {
 public:
  explicit FileParser(std::string path) : path_(std::move(path)) {}

  Result<RuleFileSpec> Run(std::string_view text) {
    RuleFileSpec out;
    out.path = path_;
    Result<YAML::Node> loaded = LoadYaml(text, path_);
    if (!loaded.ok()) return loaded.status();
    YAML::Node root = std::move(loaded).value();
    if (root.IsNull() || !root.IsDefined()) return out;
    if (!root.IsMap()) {
      return Status::Error(YamlPosition(path_, root.Mark()) + "cannot unmarshal " + KindName(root) +
                           " into rule groups (expected a mapping with \"groups\")");
    }
    context_.clear();
    CheckKeys(root, {"groups"}, "rule groups");
    YAML::Node groups = root["groups"];
    if (groups && !groups.IsNull()) {
      if (!groups.IsSequence()) {
        Error(groups.Mark(), "groups", std::string("expected a list, got ") + KindName(groups));
      } else {
        std::set<std::string> names;
        for (const auto& g : groups) {
          RuleGroupSpec spec;
          if (ParseGroup(g, &spec)) {
            if (!spec.name.empty() && !names.insert(spec.name).second) {
              context_.clear();
              Error(g.Mark(), "name",
                    "groupname: \"" + spec.name + "\" is repeated in the same file");
            }
            out.groups.push_back(std::move(spec));
          }
        }
      }
    }
    if (!errors_.empty()) return ErrorLines(errors_);
    return out;
  }

 private:
  void Error(const YAML::Mark& m, const std::string& field, const std::string& what) {
    errors_.push_back(YamlPosition(path_, m) + context_ + "field \"" + field + "\": " + what);
  }

  // Unknown and duplicate keys of a mapping.
  void CheckKeys(const YAML::Node& map, std::initializer_list<const char*> known,
                 const char* type) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (!ok) {
        Error(it->first.Mark(), key, std::string("field not found in ") + type);
      } else if (!seen.insert(key).second) {
        Error(it->first.Mark(), key, "mapping key \"" + key + "\" already defined");
      }
    }
  }

  // A string-typed field: any scalar (null reads as "").
  bool String(const YAML::Node& n, const std::string& field, std::string* out) {
    if (!n || n.IsNull()) {
      out->clear();
      return true;
    }
    if (!n.IsScalar()) {
      Error(n.Mark(), field, std::string("cannot unmarshal ") + KindName(n) + " into string");
      return false;
    }
    *out = n.Scalar();
    return true;
  }

  bool Duration(const YAML::Node& n, const std::string& field, int64_t* out) {
    std::string s;
    if (!String(n, field, &s)) return false;
    if (!n || n.IsNull()) return true;
    if (s == "0") {
      *out = 0;
      return true;
    }
    auto d = ParseDuration(s);
    if (s.empty() || !d.ok()) {
      Error(n.Mark(), field, "not a valid duration string: \"" + s + "\"");
      return false;
    }
    *out = d->count();
    return true;
  }

  bool Int(const YAML::Node& n, const std::string& field, int64_t* out) {
    if (!n || n.IsNull()) return true;
    bool plain = n.IsScalar() && n.Tag() == "?";
    std::string s = n.IsScalar() ? n.Scalar() : "";
    size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    bool digits = i < s.size() && s.find_first_not_of("0123456789", i) == std::string::npos;
    if (!plain || !digits || s.size() > 18) {
      Error(n.Mark(), field,
            std::string("cannot unmarshal ") + (n.IsScalar() ? "!!str `" + s + "`" : KindName(n)) +
                " into int");
      return false;
    }
    *out = std::stoll(s);
    return true;
  }

  bool Map(const YAML::Node& n, const std::string& field, std::vector<Label>* out) {
    if (!n || n.IsNull()) return true;
    if (!n.IsMap()) {
      Error(n.Mark(), field,
            std::string("cannot unmarshal ") + KindName(n) + " into map[string]string");
      return false;
    }
    std::set<std::string> seen;
    bool ok = true;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string k, v;
      if (!String(it->first, field, &k)) {
        ok = false;
        continue;
      }
      if (!seen.insert(k).second) {
        Error(it->first.Mark(), field + "." + k, "mapping key \"" + k + "\" already defined");
        ok = false;
        continue;
      }
      if (!String(it->second, field + "." + k, &v)) {
        ok = false;
        continue;
      }
      out->push_back({k, v});
    }
    return ok;
  }

  void CheckLabels(const YAML::Node& node, const std::vector<Label>& labels) {
    for (const auto& l : labels) {
      if (!IsValidLabelName(l.name) || l.name == kMetricName) {
        Error(node.Mark(), "labels." + l.name, "invalid label name: " + l.name);
      }
      if (!IsValidUtf8(l.value)) {
        Error(node.Mark(), "labels." + l.name, "invalid label value: " + l.value);
      }
    }
  }

  bool ParseGroup(const YAML::Node& g, RuleGroupSpec* spec) {
    context_.clear();
    spec->line = g.Mark().line + 1;
    if (!g.IsMap()) {
      Error(g.Mark(), "groups", std::string("cannot unmarshal ") + KindName(g) + " into a group");
      return false;
    }
    CheckKeys(g, {"name", "interval", "limit", "query_offset", "labels", "rules"}, "group");
    String(g["name"], "name", &spec->name);
    if (spec->name.empty()) Error(g.Mark(), "name", "Groupname must not be empty");
    context_ = "group \"" + spec->name + "\": ";
    Duration(g["interval"], "interval", &spec->interval_ms);
    Int(g["limit"], "limit", &spec->limit);
    if (g["query_offset"]) {
      int64_t off = 0;
      if (Duration(g["query_offset"], "query_offset", &off)) spec->query_offset_ms = off;
    }
    std::vector<Label> glabels;
    if (Map(g["labels"], "labels", &glabels)) {
      CheckLabels(g["labels"], glabels);
      spec->labels = Labels::FromUnsorted(glabels);
    }
    YAML::Node rules = g["rules"];
    if (rules && !rules.IsNull()) {
      if (!rules.IsSequence()) {
        Error(rules.Mark(), "rules", std::string("expected a list, got ") + KindName(rules));
      } else {
        int index = 0;
        for (const auto& r : rules) {
          RuleSpec rs;
          ++index;
          if (ParseRule(r, index, spec->name, &rs)) spec->rules.push_back(std::move(rs));
        }
      }
    }
    return true;
  }

  bool ParseRule(const YAML::Node& r, int index, const std::string& group, RuleSpec* rs) {
    context_ = "group \"" + group + "\", rule " + std::to_string(index) + ": ";
    rs->line = r.Mark().line + 1;
    if (!r.IsMap()) {
      Error(r.Mark(), "rules", std::string("cannot unmarshal ") + KindName(r) + " into a rule");
      return false;
    }
    size_t errors_before = errors_.size();
    CheckKeys(r, {"record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations"},
              "rule");
    // record/alert/expr are taken as YAML nodes by Prometheus: anything
    // that is not a scalar reads as unset.
    auto scalar = [](const YAML::Node& n) {
      return n && n.IsScalar() ? n.Scalar() : std::string();
    };
    rs->record = scalar(r["record"]);
    rs->alert = scalar(r["alert"]);
    rs->expr = scalar(r["expr"]);
    const std::string& name = rs->alert.empty() ? rs->record : rs->alert;
    context_ = "group \"" + group + "\", rule " + std::to_string(index) + " \"" + name + "\": ";
    Duration(r["for"], "for", &rs->for_ms);
    Duration(r["keep_firing_for"], "keep_firing_for", &rs->keep_firing_for_ms);
    std::vector<Label> labels, annotations;
    Map(r["labels"], "labels", &labels);
    Map(r["annotations"], "annotations", &annotations);

    YAML::Node record_node = r["record"] ? r["record"] : r;
    if (!rs->record.empty() && !rs->alert.empty()) {
      Error(record_node.Mark(), "record", "only one of 'record' and 'alert' must be set");
    }
    if (rs->record.empty() && rs->alert.empty()) {
      Error(record_node.Mark(), "record", "one of 'record' or 'alert' must be set");
    }
    YAML::Node expr_node = r["expr"] ? r["expr"] : r;
    if (rs->expr.empty()) {
      Error(expr_node.Mark(), "expr", "field 'expr' must be set in rule");
    } else {
      promql::ParseResult p = promql::Parse(rs->expr);
      if (!p.ok()) {
        Error(expr_node.Mark(), "expr", "could not parse expression: " + p.error->ToString());
      }
    }
    if (!rs->record.empty()) {
      if (!annotations.empty()) {
        Error(record_node.Mark(), "annotations", "invalid field 'annotations' in recording rule");
      }
      if (rs->for_ms != 0)
        Error(record_node.Mark(), "for", "invalid field 'for' in recording rule");
      if (rs->keep_firing_for_ms != 0) {
        Error(record_node.Mark(), "keep_firing_for",
              "invalid field 'keep_firing_for' in recording rule");
      }
      if (!IsValidMetricName(rs->record)) {
        Error(record_node.Mark(), "record", "invalid recording rule name: " + rs->record);
      }
    }
    YAML::Node lnode = r["labels"] ? r["labels"] : r;
    CheckLabels(lnode, labels);
    YAML::Node anode = r["annotations"] ? r["annotations"] : r;
    for (const auto& a : annotations) {
      if (!IsValidLabelName(a.name)) {
        Error(anode.Mark(), "annotations." + a.name, "invalid annotation name: " + a.name);
      }
    }
    if (!rs->alert.empty()) {
      for (const auto& l : labels) {
        auto t = Template::Parse(l.value);
        if (!t.ok()) Error(lnode.Mark(), "labels." + l.name, "template: " + t.status().message());
      }
      for (const auto& a : annotations) {
        auto t = Template::Parse(a.value);
        if (!t.ok()) {
          Error(anode.Mark(), "annotations." + a.name, "template: " + t.status().message());
        }
      }
    }
    rs->labels = Labels::FromUnsorted(labels);
    rs->annotations = Labels::FromUnsorted(annotations);
    return errors_.size() == errors_before;
  }

  std::string path_;
  std::string context_;
  std::vector<std::string> errors_;
};

}  // namespace

Result<RuleFileSpec> ParseRuleFile(std::string_view yaml, const std::string& path) {
  return FileParser(path).Run(yaml);
}

Result<RuleFileSpec> LoadRuleFile(const std::string& path) {
  Result<std::string> text = ReadSourceFile(path);
  if (!text.ok()) return Status::Error(path + ": cannot open rule file");
  return ParseRuleFile(*text, path);
}

}  // namespace gpumon::rules
