// Parsing every query of a Grafana dashboard (dashboards_check.h).

#include "cli/dashboards_check.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <variant>

#include "cli/dashboards_placeholders.h"
#include "cli/dashboards_queries.h"
#include "cli/dashboards_variable_query.h"
#include "promql/parser.h"

namespace gpumon::cli {

std::string CheckGrafanaExpr(std::string_view expr) {
  GrafanaPlaceholders placeholders;
  auto text = placeholders.Substitute(expr);
  if (!text.ok()) return text.status().message();
  auto parsed = promql::Parse(*text);
  if (!parsed.ok()) return parsed.error->ToString();
  return "";
}

namespace {

std::string CheckVariableQuery(std::string_view query) {
  auto q = ParseVariableQuery(query);
  if (!q.ok()) return q.status().message();
  if (q->kind == VariableQuery::Kind::kQueryResult) return CheckGrafanaExpr(q->argument);
  if (q->kind != VariableQuery::Kind::kLabelValues || q->selector.empty()) return "";
  GrafanaPlaceholders placeholders;
  auto text = placeholders.Substitute(q->selector);
  if (!text.ok()) return text.status().message();
  auto parsed = promql::Parse(*text);
  if (!parsed.ok()) return parsed.error->ToString();
  if (!std::holds_alternative<promql::VectorSelector>(parsed.expr->node)) {
    return "label_values(" + q->selector + ", ...): not a series selector";
  }
  return "";
}

}  // namespace

std::vector<std::string> CheckDashboard(std::string_view json, std::string_view source) {
  std::vector<std::string> problems;
  std::string src(source);
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    problems.push_back(src + ": invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) +
                       ": " + rapidjson::GetParseError_En(doc.GetParseError()));
    return problems;
  }
  if (!doc.IsObject()) {
    problems.push_back(src + ": not a dashboard (JSON object)");
    return problems;
  }
  ForEachQuery(doc, [&](const DashboardQuery& q) {
    std::string_view text(q.value->GetString(), q.value->GetStringLength());
    std::string error =
        q.kind == DashboardQueryKind::kVariable || q.kind == DashboardQueryKind::kVariableLabel
            ? CheckVariableQuery(text)
            : CheckGrafanaExpr(text);
    if (!error.empty()) problems.push_back(src + ": " + q.location + ": " + error);
  });
  return problems;
}

}  // namespace gpumon::cli
