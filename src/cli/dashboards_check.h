// `gpumon dashboards check`: every PromQL query of a Grafana dashboard parses
// with gpumon's PromQL parser once its Grafana variables are replaced by
// placeholders (dashboards_placeholders.h).
//
// Contract:
// - Panel targets and annotation expressions must parse as PromQL (the
//   parser's own type checks included). Variable queries must be one of
//   Grafana's Prometheus forms (dashboards_variable_query.h), with
//   label_values's selector a plain series selector and query_result's
//   argument a valid expression.
// - Returns one message per problem, "<source>: <location>: <error>" with the
//   parser's line:column inside the query; none when the file is fine. A
//   file that is not a JSON object is one problem.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpumon::cli {

std::vector<std::string> CheckDashboard(std::string_view json, std::string_view source);

// The parse error of one Grafana PromQL expression, or "" when it parses.
std::string CheckGrafanaExpr(std::string_view expr);

}  // namespace gpumon::cli
