// Grafana dashboards: the DCGM-named variant (dashboards_convert.h).

#include "cli/dashboards_convert.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <map>
#include <regex>
#include <set>

#include "cli/dashboards_placeholders.h"
#include "cli/dashboards_queries.h"
#include "cli/dashboards_variable_query.h"
#include "promql/parser.h"
#include "promql/printer.h"

namespace gpumon::cli {
namespace {

using rapidjson::Value;

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

std::string Str(const Value& v) {
  return v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : "";
}

void SetString(Value& v, const std::string& s, rapidjson::Document::AllocatorType& a) {
  v.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// The label names a dashboard may use as keys (the DCGM-renamed ones).
bool IsRenamedLabel(const promql::RewriteMap& map, std::string_view name) {
  return map.labels.find(name) != map.labels.end();
}

// Renames the keys of an object whose keys are field (label) names.
void RenameKeys(const promql::RewriteMap& map, Value& obj, rapidjson::Document::AllocatorType& a) {
  if (!obj.IsObject()) return;
  for (auto& m : obj.GetObject()) {
    std::string key = Str(m.name);
    if (IsRenamedLabel(map, key)) SetString(m.name, promql::RenameLabel(map, key), a);
  }
}

void RenameFieldReferences(const promql::RewriteMap& map, Value& panel,
                           rapidjson::Document::AllocatorType& a) {
  auto transformations = panel.FindMember("transformations");
  if (transformations != panel.MemberEnd() && transformations->value.IsArray()) {
    for (auto& t : transformations->value.GetArray()) {
      if (!t.IsObject()) continue;
      auto options = t.FindMember("options");
      if (options == t.MemberEnd() || !options->value.IsObject()) continue;
      for (const char* key : {"renameByName", "indexByName", "excludeByName", "fields"}) {
        auto m = options->value.FindMember(key);
        if (m != options->value.MemberEnd()) RenameKeys(map, m->value, a);
      }
      auto by = options->value.FindMember("byField");
      if (by != options->value.MemberEnd() && by->value.IsString() &&
          IsRenamedLabel(map, Str(by->value))) {
        SetString(by->value, promql::RenameLabel(map, Str(by->value)), a);
      }
    }
  }
  auto fc = panel.FindMember("fieldConfig");
  if (fc == panel.MemberEnd() || !fc->value.IsObject()) return;
  auto overrides = fc->value.FindMember("overrides");
  if (overrides == fc->value.MemberEnd() || !overrides->value.IsArray()) return;
  for (auto& o : overrides->value.GetArray()) {
    if (!o.IsObject()) continue;
    auto matcher = o.FindMember("matcher");
    if (matcher == o.MemberEnd() || !matcher->value.IsObject()) continue;
    auto id = matcher->value.FindMember("id");
    auto opt = matcher->value.FindMember("options");
    if (id == matcher->value.MemberEnd() || Str(id->value) != "byName" ||
        opt == matcher->value.MemberEnd() || !opt->value.IsString())
      continue;
    if (IsRenamedLabel(map, Str(opt->value))) {
      SetString(opt->value, promql::RenameLabel(map, Str(opt->value)), a);
    }
  }
}

void RenameStringMember(const promql::RewriteMap& map, Value& obj, const char* name,
                        rapidjson::Document::AllocatorType& a) {
  auto m = obj.FindMember(name);
  if (m != obj.MemberEnd() && m->value.IsString()) {
    SetString(m->value, RenameTemplateLabels(map, Str(m->value)), a);
  }
}

// A panel's description with `note` appended as its own paragraph.
void AppendDescription(Value& panel, const std::string& note,
                       rapidjson::Document::AllocatorType& a) {
  auto d = panel.FindMember("description");
  std::string text = d != panel.MemberEnd() ? Str(d->value) : "";
  text += (text.empty() ? "" : "\n\n") + note;
  if (d != panel.MemberEnd()) {
    SetString(d->value, text, a);
  } else {
    Value v;
    SetString(v, text, a);
    panel.AddMember("description", v, a);
  }
}

// Replaces `panel` by a text panel with the same id, title and place.
void ReplaceByTextPanel(Value& panel, const std::string& why,
                        rapidjson::Document::AllocatorType& a) {
  Value text(rapidjson::kObjectType);
  for (const char* keep : {"id", "gridPos"}) {
    auto m = panel.FindMember(keep);
    if (m != panel.MemberEnd()) text.AddMember(Value(keep, a), Value(m->value, a), a);
  }
  auto title = panel.FindMember("title");
  std::string t = title != panel.MemberEnd() ? Str(title->value) : "";
  Value v;
  SetString(v, t, a);
  text.AddMember("title", v, a);
  text.AddMember("type", "text", a);
  std::string note = "Not available with dcgm-exporter's metric names: " + why;
  SetString(v, note, a);
  text.AddMember("description", v, a);
  Value options(rapidjson::kObjectType);
  options.AddMember("mode", "markdown", a);
  SetString(v, "*" + note + "*", a);
  options.AddMember("content", v, a);
  text.AddMember("options", options, a);
  panel = text;
}

}  // namespace

std::string RenameTemplateLabels(const promql::RewriteMap& map, std::string_view text) {
  static const std::regex kRef(R"(\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\})");
  std::string in(text), out;
  auto begin = std::sregex_iterator(in.begin(), in.end(), kRef);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    out += in.substr(last, m.position(0) - last);
    out += "{{" + promql::RenameLabel(map, m.str(1)) + "}}";
    last = m.position(0) + m.length(0);
  }
  out += in.substr(last);
  return out;
}

Result<std::string> ConvertGrafanaExpr(const promql::RewriteMap& map, std::string_view expr) {
  GrafanaPlaceholders placeholders;
  auto text = placeholders.Substitute(expr);
  if (!text.ok()) return text.status();
  auto rewritten = promql::RewriteQuery(*text, map, /*pretty=*/true);
  if (!rewritten.ok()) return rewritten.status();
  size_t start = rewritten->find_first_not_of(' ');
  return placeholders.Restore(start == std::string::npos ? *rewritten : rewritten->substr(start));
}

Result<std::string> ConvertVariableQuery(const promql::RewriteMap& map, std::string_view query) {
  auto q = ParseVariableQuery(query);
  if (!q.ok()) return q.status();
  switch (q->kind) {
    case VariableQuery::Kind::kLabelValues: {
      if (map.unmapped_labels.count(q->label)) {
        return Status::Error("label \"" + q->label + "\" has no DCGM equivalent");
      }
      q->label = promql::RenameLabel(map, q->label);
      if (q->selector.empty()) break;
      GrafanaPlaceholders placeholders;
      auto text = placeholders.Substitute(q->selector);
      if (!text.ok()) return text.status();
      auto rewritten = promql::RewriteQuery(*text, map);
      if (!rewritten.ok()) return rewritten.status();
      auto parsed = promql::Parse(*rewritten);
      if (!parsed.ok() || !std::holds_alternative<promql::VectorSelector>(parsed.expr->node)) {
        return Status::Error("label_values(" + q->selector + ", ...) becomes " + *rewritten +
                             ", not a series selector: use a metric the DCGM names rename "
                             "without a scale");
      }
      auto restored = placeholders.Restore(*rewritten);
      if (!restored.ok()) return restored.status();
      q->selector = *restored;
      break;
    }
    case VariableQuery::Kind::kQueryResult: {
      auto e = ConvertGrafanaExpr(map, q->argument);
      if (!e.ok()) return e.status();
      q->argument = OneLine(*e);
      break;
    }
    case VariableQuery::Kind::kLabelNames:
    case VariableQuery::Kind::kMetrics:
      return Status::Error("metric names differ between the schemes; " + FormatVariableQuery(*q) +
                           " cannot be converted");
  }
  return FormatVariableQuery(*q);
}

Result<std::string> DashboardConverter::Convert(std::string_view json,
                                                std::string_view source_name) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  std::string source(source_name);
  if (doc.HasParseError()) {
    return Status::Error(source + ": invalid JSON at offset " +
                         std::to_string(doc.GetErrorOffset()) + ": " +
                         rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return Status::Error(source + ": not a dashboard (JSON object)");
  auto& a = doc.GetAllocator();

  // Queries first; targets that fail are collected per panel.
  std::map<Value*, std::vector<std::string>> failed_targets;  // panel -> why, per target
  std::set<Value*> failed_exprs;
  std::vector<Value*> failed_annotations;
  Status variable_error = Status::Ok();
  ForEachQuery(doc, [&](const DashboardQuery& q) {
    std::string text = Str(*q.value);
    bool variable =
        q.kind == DashboardQueryKind::kVariable || q.kind == DashboardQueryKind::kVariableLabel;
    Result<std::string> converted =
        variable ? ConvertVariableQuery(map_, text) : ConvertGrafanaExpr(map_, text);
    if (variable && !converted.ok() && variable_error.ok()) {
      variable_error = converted.status().WithContext(source + ": " + q.location);
    }
    if (converted.ok()) {
      SetString(*q.value, *converted, a);
      return;
    }
    std::string why = OneLine(converted.status().message());
    if (q.kind == DashboardQueryKind::kTarget) {
      failed_targets[q.owner].push_back(why);
      failed_exprs.insert(q.value);
      notes_.push_back(source + ": " + q.location + ": " + why);
    } else if (q.kind == DashboardQueryKind::kAnnotation) {
      failed_annotations.push_back(q.owner);
      notes_.push_back(source + ": " + q.location + ": " + why);
    }
  });
  if (!variable_error.ok()) return variable_error;

  ForEachPanel(doc, [&](Value& panel) {
    RenameFieldReferences(map_, panel, a);
    auto targets = panel.FindMember("targets");
    if (targets != panel.MemberEnd() && targets->value.IsArray()) {
      for (auto& t : targets->value.GetArray()) {
        if (t.IsObject()) RenameStringMember(map_, t, "legendFormat", a);
      }
    }
    auto failed = failed_targets.find(&panel);
    if (failed == failed_targets.end()) return;
    // Keep the targets that converted.
    Value kept(rapidjson::kArrayType);
    std::vector<std::string> dropped_refs;
    for (auto& t : targets->value.GetArray()) {
      auto expr = t.FindMember("expr");
      bool bad = expr != t.MemberEnd() && failed_exprs.count(&expr->value);
      if (bad) {
        auto ref = t.FindMember("refId");
        dropped_refs.push_back(ref != t.MemberEnd() ? Str(ref->value) : "?");
      } else {
        kept.PushBack(Value(t, a), a);
      }
    }
    std::string why;
    for (size_t i = 0; i < failed->second.size(); ++i) {
      why += (i ? "; " : "") + failed->second[i];
    }
    if (kept.Empty()) {
      ReplaceByTextPanel(panel, why, a);
      return;
    }
    targets->value = kept;
    std::string refs;
    for (size_t i = 0; i < dropped_refs.size(); ++i) refs += (i ? ", " : "") + dropped_refs[i];
    AppendDescription(
        panel, "With dcgm-exporter's metric names, query " + refs + " is left out: " + why, a);
  });

  auto annotations = doc.FindMember("annotations");
  if (annotations != doc.MemberEnd() && annotations->value.IsObject()) {
    auto list = annotations->value.FindMember("list");
    if (list != annotations->value.MemberEnd() && list->value.IsArray()) {
      Value kept(rapidjson::kArrayType);
      for (auto& an : list->value.GetArray()) {
        bool bad = false;
        for (Value* f : failed_annotations) bad = bad || f == &an;
        if (bad) continue;
        if (an.IsObject()) {
          RenameStringMember(map_, an, "titleFormat", a);
          RenameStringMember(map_, an, "textFormat", a);
          auto keys = an.FindMember("tagKeys");
          if (keys != an.MemberEnd() && keys->value.IsString()) {
            std::string in = Str(keys->value), out;
            size_t start = 0;
            while (start <= in.size()) {
              size_t comma = in.find(',', start);
              std::string k = in.substr(start, comma == std::string::npos ? comma : comma - start);
              out += (out.empty() && start == 0 ? "" : ",") + promql::RenameLabel(map_, k);
              if (comma == std::string::npos) break;
              start = comma + 1;
            }
            SetString(keys->value, out, a);
          }
        }
        kept.PushBack(Value(an, a), a);
      }
      list->value = kept;
    }
  }

  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetIndent(' ', 2);
  doc.Accept(w);
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

}  // namespace gpumon::cli
