#include "http/router.h"

#include <algorithm>

namespace gpumon::http {
namespace {

bool IsRegexPattern(std::string_view pattern) {
  return pattern.find_first_of("([*+?\\") != std::string_view::npos;
}

bool MethodMatches(std::string_view route_method, std::string_view method) {
  return route_method == method || (method == "HEAD" && route_method == "GET");
}

void AddAllowed(std::vector<std::string>* allowed, const std::string& method) {
  auto add = [&](const std::string& m) {
    if (std::find(allowed->begin(), allowed->end(), m) == allowed->end()) allowed->push_back(m);
  };
  add(method);
  if (method == "GET") add("HEAD");
}

}  // namespace

void Router::Handle(std::string method, std::string pattern, Handler handler,
                    RouteOptions options) {
  for (Route& r : routes_) {
    if (r.method == method && r.pattern == pattern) {
      r.handler = std::move(handler);
      r.options = options;
      return;
    }
  }
  Route route;
  route.method = std::move(method);
  route.pattern = std::move(pattern);
  route.handler = std::move(handler);
  route.options = options;
  if (IsRegexPattern(route.pattern)) {
    route.regex = std::make_shared<const std::regex>(route.pattern, std::regex::ECMAScript);
  }
  routes_.push_back(std::move(route));
}

Router::Match Router::Find(std::string_view method, std::string_view path) const {
  Match match;
  std::vector<std::string> allowed;
  // Exact routes: an exact GET beats a HEAD-by-GET fallback only when no
  // explicit route for the method exists, so look for the exact method first.
  const Route* fallback = nullptr;
  for (const Route& r : routes_) {
    if (r.regex || r.pattern != path) continue;
    if (r.method == method) {
      match.kind = MatchKind::kFound;
      match.route = &r;
      return match;
    }
    if (MethodMatches(r.method, method) && fallback == nullptr) fallback = &r;
    AddAllowed(&allowed, r.method);
  }
  if (fallback != nullptr) {
    match.kind = MatchKind::kFound;
    match.route = fallback;
    return match;
  }
  std::cmatch groups;
  const char* begin = path.data();
  const char* end = path.data() + path.size();
  for (const Route& r : routes_) {
    if (!r.regex || !std::regex_match(begin, end, groups, *r.regex)) continue;
    if (!MethodMatches(r.method, method)) {
      AddAllowed(&allowed, r.method);
      continue;
    }
    match.kind = MatchKind::kFound;
    match.route = &r;
    for (size_t i = 1; i < groups.size(); ++i) match.captures.push_back(groups[i].str());
    return match;
  }
  // A path whose only routes are OPTIONS (the CORS catch-all on /api/v1/.*)
  // does not exist for other methods: 404, as Prometheus's router answers.
  const bool only_options = std::all_of(allowed.begin(), allowed.end(),
                                        [](const std::string& m) { return m == "OPTIONS"; });
  if (!allowed.empty() && !(only_options && method != "OPTIONS")) {
    match.kind = MatchKind::kMethodNotAllowed;
    for (const std::string& m : allowed) {
      if (!match.allow.empty()) match.allow.append(", ");
      match.allow.append(m);
    }
  }
  return match;
}

}  // namespace gpumon::http
