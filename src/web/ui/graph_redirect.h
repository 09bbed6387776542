// /graph, Prometheus's query page, kept working as an alias of /explore:
// Prometheus habits and the generatorURL of every alert
// ("<external-url>/graph?g0.expr=...&g0.tab=1") land there.
//
// Contract: ExploreTargetForGraphQuery(query) is the /explore URL for a
// /graph request's raw query string: g0.expr becomes expr, g0.tab 0/1
// becomes tab=graph/tab=table, g0.range_input <d> becomes from=now-<d>;
// the other g0.* parameters (no counterpart) are dropped, any other
// parameter is kept as it was. Values stay percent-encoded as sent.
#pragma once

#include <string>
#include <string_view>

namespace gpumon::web::ui {

std::string ExploreTargetForGraphQuery(std::string_view query);

}  // namespace gpumon::web::ui
