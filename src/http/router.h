// Router: maps (method, path) to a handler.
//
// Contract:
// - A pattern is an exact path ("/api/v1/query"), or, when it contains any
//   of ( [ * + ? \ , an ECMAScript regex that must match the whole path; its
//   groups become HttpRequest::captures. Exact patterns are tried first,
//   then regexes in registration order.
// - Registering the same method and pattern twice replaces the handler.
// - GET routes also answer HEAD (the server drops the body).
// - Find(): kFound with the handler; kMethodNotAllowed when the path has
//   routes but none for the method (`allow` lists them, for the Allow
//   header); kNotFound otherwise, also when the path's only routes are
//   OPTIONS ones (a CORS catch-all does not make every path exist).
// - RouteOptions: max_body_bytes overrides the server's body limit for the
//   route (remote write takes larger bodies than a query form);
//   run_inline runs the handler on the network thread instead of the
//   worker pool: only for handlers that never block and finish in
//   microseconds (/-/healthy, /-/ready), so they answer even while every
//   worker is busy.
// - Routes are registered before the server starts and not changed after.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "http/request.h"
#include "http/response.h"

namespace gpumon::http {

using Handler = std::function<void(const HttpRequest&, HttpResponse&)>;

struct RouteOptions {
  std::optional<size_t> max_body_bytes = std::nullopt;
  bool run_inline = false;
};

struct Route {
  std::string method;
  std::string pattern;
  Handler handler;
  RouteOptions options;
  std::shared_ptr<const std::regex> regex;  // null: exact pattern
};

class Router {
 public:
  void Handle(std::string method, std::string pattern, Handler handler, RouteOptions options = {});
  void Get(std::string pattern, Handler h, RouteOptions o = {}) {
    Handle("GET", std::move(pattern), std::move(h), o);
  }
  void Post(std::string pattern, Handler h, RouteOptions o = {}) {
    Handle("POST", std::move(pattern), std::move(h), o);
  }
  void Put(std::string pattern, Handler h, RouteOptions o = {}) {
    Handle("PUT", std::move(pattern), std::move(h), o);
  }
  void Delete(std::string pattern, Handler h, RouteOptions o = {}) {
    Handle("DELETE", std::move(pattern), std::move(h), o);
  }
  void Options(std::string pattern, Handler h, RouteOptions o = {}) {
    Handle("OPTIONS", std::move(pattern), std::move(h), o);
  }

  enum class MatchKind { kFound, kNotFound, kMethodNotAllowed };
  struct Match {
    MatchKind kind = MatchKind::kNotFound;
    const Route* route = nullptr;  // set when kFound
    std::vector<std::string> captures;
    std::string allow;  // "GET, POST" when kMethodNotAllowed
  };
  Match Find(std::string_view method, std::string_view path) const;

 private:
  std::vector<Route> routes_;
};

}  // namespace gpumon::http
