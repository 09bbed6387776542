// The PromQL queries of a Grafana dashboard (JSON model), found where Grafana
// keeps them, for checking and rewriting them in place.
//
// Contract:
// - ForEachQuery() visits, in document order: every panel's targets[].expr
//   (panels nested in rows' `panels` too), every templating variable of
//   type "query" (its `query`, a string or an object's `query` member, and
//   its `definition`), and every annotation's `expr` or `target.expr`. The
//   callback gets the kind, a location naming the panel (id and title),
//   target (refId) or variable/annotation (name) for messages, the JSON
//   string value, which it may replace (with the document's allocator), and
//   the object holding it.
// - Documents that are not objects, and members of unexpected types, are
//   skipped, never an error: Grafana's own schema check is separate.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <string>

namespace gpumon::cli {

enum class DashboardQueryKind {
  kTarget,         // a panel target's PromQL expression
  kVariable,       // a query variable's query (label_values(...), query_result(...))
  kVariableLabel,  // a query variable's `definition` (the same text, shown in the editor)
  kAnnotation,     // an annotation's PromQL expression
};

struct DashboardQuery {
  DashboardQueryKind kind;
  std::string location;     // e.g. `panel 12 "Die temperature": target A`
  rapidjson::Value* value;  // the JSON string holding the query
  rapidjson::Value* owner;  // the panel, variable or annotation object
};

using DashboardQueryVisitor = std::function<void(const DashboardQuery&)>;

void ForEachQuery(rapidjson::Document& dashboard, const DashboardQueryVisitor& visit);

// The panels of a dashboard, rows' nested panels included, in document order.
void ForEachPanel(rapidjson::Document& dashboard,
                  const std::function<void(rapidjson::Value& panel)>& visit);

// `panel <id> "<title>"` for messages.
std::string PanelLocation(const rapidjson::Value& panel);

}  // namespace gpumon::cli
