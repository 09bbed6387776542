// The error half of an API response: Prometheus's errorType vocabulary and
// the HTTP status each maps to (web/api/v1's getDefaultErrorCode).
//
// Contract: bad_data → 400, execution → 422, canceled → 499, timeout and
// unavailable → 503, not_found → 404, not_acceptable → 406, internal → 500.
#pragma once

#include <string>
#include <string_view>

#include "promql/engine.h"

namespace gpumon::web::api {

enum class ErrorKind {
  kTimeout,
  kCanceled,
  kExecution,
  kBadData,
  kInternal,
  kUnavailable,
  kNotFound,
  kNotAcceptable,
};

struct ApiError {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;
};

const char* ErrorKindName(ErrorKind kind);  // "bad_data", "execution", ...
int HttpStatusOf(ErrorKind kind);
// The API kind of an engine error (kNone is not an error: maps to internal).
ErrorKind FromEngine(promql::ErrorType type);

// `invalid parameter "name": message`, bad_data, as Prometheus words a
// parameter it cannot use.
ApiError InvalidParam(std::string_view name, std::string_view message);

// Go's %q for the strings we quote in messages: "..." with \" \\ and
// control characters escaped.
std::string GoQuote(std::string_view s);

}  // namespace gpumon::web::api
