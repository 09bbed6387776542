// An API response before encoding: either data (written lazily by a
// callback, so large results stream) with warnings/infos, or an error.
//
// Contract (Prometheus's envelope, web/api/v1 Response):
// - success: {"status":"success","data":<data>[,"warnings":[...]]
//   [,"infos":[...]]}, HTTP 200; warnings and infos are omitted when empty
//   and capped at 10 each plus an "N more ... annotations omitted" line.
// - a success without data is HTTP 204 with no body.
// - error: {"status":"error"[,"data":<data>],"errorType":"<kind>",
//   "error":"<message>"}, HTTP status by kind (api_error.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "web/api/api_error.h"
#include "web/api/json_output.h"

namespace gpumon::web::api {

struct ApiResponse {
  // Writes the value of "data"; returns false if the writer failed.
  using DataFn = std::function<bool(JsonWriter&)>;

  std::optional<ApiError> error;
  DataFn data;  // empty: no data
  std::vector<std::string> warnings;
  std::vector<std::string> infos;

  static ApiResponse Success(DataFn data) {
    ApiResponse r;
    r.data = std::move(data);
    return r;
  }
  static ApiResponse Failure(ApiError e) {
    ApiResponse r;
    r.error = std::move(e);
    return r;
  }

  bool ok() const { return !error.has_value(); }
  int HttpStatus() const;
};

// Writes the envelope of a response that has a body (not 204).
bool WriteEnvelope(const ApiResponse& r, JsonWriter& w);

// The whole encoded body, for small responses and tests.
std::string EncodeToString(const ApiResponse& r);

}  // namespace gpumon::web::api
