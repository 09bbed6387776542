// Finding the PromQL queries of a Grafana dashboard (dashboards_queries.h).

#include "cli/dashboards_queries.h"

namespace gpumon::cli {
namespace {

std::string StringMember(const rapidjson::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

void VisitPanels(rapidjson::Value& panels, const std::function<void(rapidjson::Value&)>& visit) {
  if (!panels.IsArray()) return;
  for (auto& panel : panels.GetArray()) {
    if (!panel.IsObject()) continue;
    visit(panel);
    auto nested = panel.FindMember("panels");
    if (nested != panel.MemberEnd()) VisitPanels(nested->value, visit);
  }
}

}  // namespace

std::string PanelLocation(const rapidjson::Value& panel) {
  std::string id;
  auto it = panel.FindMember("id");
  if (it != panel.MemberEnd() && it->value.IsInt64()) id = std::to_string(it->value.GetInt64());
  return "panel " + id + " \"" + StringMember(panel, "title") + "\"";
}

void ForEachPanel(rapidjson::Document& dashboard,
                  const std::function<void(rapidjson::Value& panel)>& visit) {
  if (!dashboard.IsObject()) return;
  auto panels = dashboard.FindMember("panels");
  if (panels != dashboard.MemberEnd()) VisitPanels(panels->value, visit);
}

void ForEachQuery(rapidjson::Document& dashboard, const DashboardQueryVisitor& visit) {
  if (!dashboard.IsObject()) return;
  ForEachPanel(dashboard, [&](rapidjson::Value& panel) {
    auto targets = panel.FindMember("targets");
    if (targets == panel.MemberEnd() || !targets->value.IsArray()) return;
    for (auto& target : targets->value.GetArray()) {
      if (!target.IsObject()) continue;
      auto expr = target.FindMember("expr");
      if (expr == target.MemberEnd() || !expr->value.IsString()) continue;
      visit({DashboardQueryKind::kTarget,
             PanelLocation(panel) + ": target " + StringMember(target, "refId"), &expr->value,
             &panel});
    }
  });
  auto templating = dashboard.FindMember("templating");
  if (templating != dashboard.MemberEnd() && templating->value.IsObject()) {
    auto list = templating->value.FindMember("list");
    if (list != templating->value.MemberEnd() && list->value.IsArray()) {
      for (auto& var : list->value.GetArray()) {
        if (!var.IsObject() || StringMember(var, "type") != "query") continue;
        std::string where = "variable \"" + StringMember(var, "name") + "\"";
        auto query = var.FindMember("query");
        if (query != var.MemberEnd() && query->value.IsObject()) {
          auto inner = query->value.FindMember("query");
          if (inner != query->value.MemberEnd() && inner->value.IsString()) {
            visit({DashboardQueryKind::kVariable, where, &inner->value, &var});
          }
        } else if (query != var.MemberEnd() && query->value.IsString()) {
          visit({DashboardQueryKind::kVariable, where, &query->value, &var});
        }
        auto definition = var.FindMember("definition");
        if (definition != var.MemberEnd() && definition->value.IsString()) {
          visit({DashboardQueryKind::kVariableLabel, where + " (definition)", &definition->value,
                 &var});
        }
      }
    }
  }
  auto annotations = dashboard.FindMember("annotations");
  if (annotations != dashboard.MemberEnd() && annotations->value.IsObject()) {
    auto list = annotations->value.FindMember("list");
    if (list != annotations->value.MemberEnd() && list->value.IsArray()) {
      for (auto& a : list->value.GetArray()) {
        if (!a.IsObject()) continue;
        // Grafana 10+ keeps a Prometheus annotation's query in target.expr;
        // older dashboards have it at the top.
        std::string where = "annotation \"" + StringMember(a, "name") + "\"";
        auto expr = a.FindMember("expr");
        if (expr != a.MemberEnd() && expr->value.IsString()) {
          visit({DashboardQueryKind::kAnnotation, where, &expr->value, &a});
        }
        auto target = a.FindMember("target");
        if (target == a.MemberEnd() || !target->value.IsObject()) continue;
        auto texpr = target->value.FindMember("expr");
        if (texpr != target->value.MemberEnd() && texpr->value.IsString()) {
          visit({DashboardQueryKind::kAnnotation, where, &texpr->value, &a});
        }
      }
    }
  }
}

}  // namespace gpumon::cli
