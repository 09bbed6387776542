// `gpumon dashboards convert --names dcgm`: the dcgm-exporter-named variant of
// a Grafana dashboard, generated from the native one through the same
// metric catalog and PromQL rewrite as the rule pack (rules_convert.h,
// promql/rewrite.h).
//
// Contract:
// - Every PromQL query (dashboards_queries.h) is rewritten with its Grafana
//   variables kept (dashboards_placeholders.h): metric names, label names,
//   units (the rewrite divides by the catalog's scale at the selector, so a
//   query returns the native unit and every panel's unit stays right).
// - Variable queries: label_values(label) renames the label;
//   label_values(selector, label) needs a selector that stays a plain
//   selector (a renamed metric, not a scaled one) and renames the label;
//   query_result(expr) rewrites expr. A variable that cannot be converted
//   is an error: the dashboard would not work without it.
// - Label names elsewhere: legendFormat and annotation title/text templates
//   ({{hostname}}), annotation tagKeys, transformations' organize maps
//   (renameByName, indexByName, excludeByName) and field-override matchers
//   by name.
// - A target whose query cannot be converted (a metric without DCGM
//   equivalent, a recording rule the DCGM rule pack lacks, a construct the
//   rewrite rejects) is left out and the panel's description says which and
//   why; a panel left without targets becomes a text panel of the same id,
//   title and place saying why. An annotation that cannot be converted is
//   left out. notes() lists every one of these.
// - The output is the same JSON document (member order kept), written with
//   two-space indentation and a final newline.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "promql/rewrite.h"

namespace gpumon::cli {

// One Grafana PromQL expression, variables kept.
Result<std::string> ConvertGrafanaExpr(const promql::RewriteMap& map, std::string_view expr);
// One variable query (dashboards_variable_query.h).
Result<std::string> ConvertVariableQuery(const promql::RewriteMap& map, std::string_view query);
// legendFormat-style text: {{label}} references renamed.
std::string RenameTemplateLabels(const promql::RewriteMap& map, std::string_view text);

class DashboardConverter {
 public:
  // `map` must outlive the converter (its unknown_metric decides about
  // recording rules and metrics without DCGM equivalent).
  explicit DashboardConverter(const promql::RewriteMap& map) : map_(map) {}

  Result<std::string> Convert(std::string_view json, std::string_view source_name);
  // "<source>: panel 3 "title": target A: <why>" for everything left out.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  const promql::RewriteMap& map_;
  std::vector<std::string> notes_;
};

}  // namespace gpumon::cli
