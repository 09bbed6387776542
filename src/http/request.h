// HttpRequest: one decoded HTTP/1.x request, as handlers see it.
//
// Contract:
// - method is the request method as sent ("GET", "POST", ...); target the
//   request-target as sent (origin form: path and query); path the target
//   up to '?', percent-decoding NOT applied (routes match the raw path, as
//   Prometheus's router does for its fixed paths); query the part after
//   '?' ("" when none), undecoded.
// - body is the whole decoded body (chunked framing removed); its size is
//   within the route's body limit.
// - captures holds the regex groups of the route pattern that matched
//   (captures[0] is group 1).
// - cancel is never null: it is raised when the client disconnects before
//   the response is written, and when the server shuts down; long work
//   (queries) polls it.
// - Param()/HasParam()/ParamValues() read the URL query and, for
//   application/x-www-form-urlencoded bodies, the form (form values first,
//   as Go's Request.Form orders them), percent- and '+'-decoded.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/cancellation.h"
#include "http/headers.h"

namespace gpumon::http {

struct HttpRequest {
  std::string method;
  std::string target;
  std::string path;
  std::string query;
  int version_major = 1;
  int version_minor = 1;
  Headers headers;
  std::string body;
  std::vector<std::string> captures;
  std::string remote_address;  // "ip:port" of the peer
  std::shared_ptr<Cancellation> cancel = std::make_shared<Cancellation>();

  std::string Header(std::string_view name) const { return headers.Get(name); }
  bool HasHeader(std::string_view name) const { return headers.Has(name); }
  // First value of a parameter, "" when absent.
  std::string Param(std::string_view name) const;
  bool HasParam(std::string_view name) const;
  std::vector<std::string> ParamValues(std::string_view name) const;
};

// Percent-decodes `in` ('+' as space when `plus_is_space`); false on a
// malformed escape (the output is then unspecified).
bool PercentDecode(std::string_view in, bool plus_is_space, std::string* out);

// Splits an application/x-www-form-urlencoded string into decoded
// (name, value) pairs, appending to `out`; pairs with a malformed escape are
// skipped. Returns false when any pair was skipped.
bool ParseFormPairs(std::string_view encoded,
                    std::vector<std::pair<std::string, std::string>>* out);

}  // namespace gpumon::http
