#include "web/ui/graph_redirect.h"

#include <vector>

namespace gpumon::web::ui {

std::string ExploreTargetForGraphQuery(std::string_view query) {
  std::vector<std::string> params;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (name == "g0.expr") {
      params.push_back("expr=" + std::string(value));
    } else if (name == "g0.tab") {
      if (value == "0") params.emplace_back("tab=graph");
      if (value == "1") params.emplace_back("tab=table");
    } else if (name == "g0.range_input") {
      if (!value.empty()) params.push_back("from=now-" + std::string(value));
    } else if (!name.starts_with("g0.")) {
      params.emplace_back(pair);
    }
  }
  std::string target = "/explore";
  for (size_t i = 0; i < params.size(); ++i) {
    target.push_back(i == 0 ? '?' : '&');
    target.append(params[i]);
  }
  return target;
}

}  // namespace gpumon::web::ui
