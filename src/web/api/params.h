// Request parameters of the HTTP API and the parsing of their values, with
// Prometheus's semantics and error wording (web/api/v1/api.go).
//
// Contract:
// - Params holds the decoded name/value pairs of an
//   application/x-www-form-urlencoded body followed by those of the URL's
//   query string, so Get() prefers the body, as Go's FormValue does;
//   GetAll() returns every value (match[] may repeat).
// - ParseTime accepts float Unix seconds (rounded to milliseconds) and
//   RFC 3339 with optional fraction and zone offset, plus Prometheus's
//   boundary times; ParseDuration accepts float seconds or a Prometheus
//   duration (1h30m). Times and durations are milliseconds.
// - Errors carry Prometheus's messages (without the `invalid parameter`
//   prefix, which the endpoint adds with the parameter's name).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "web/api/api_error.h"

namespace gpumon::web::api {

// Prometheus's MinTime/MaxTime (api.go), the defaults of optional ranges.
inline constexpr int64_t kMinTimeMs = -9223309901257974000LL;
inline constexpr int64_t kMaxTimeMs = 9223309901257974999LL;

class Params {
 public:
  Params() = default;
  // From the parts of a request; the body is read only when content_type
  // is application/x-www-form-urlencoded.
  static Params FromRequest(std::string_view query_string, std::string_view content_type,
                            std::string_view body);

  void Add(std::string name, std::string value) {
    items_.emplace_back(std::move(name), std::move(value));
  }
  // Decodes and adds the pairs of "a=1&b=%20x+y".
  void AddUrlEncoded(std::string_view text);

  // The first value, "" when absent.
  std::string Get(std::string_view name) const;
  bool Has(std::string_view name) const;
  std::vector<std::string> GetAll(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// %XX decoding; '+' reads as a space. Malformed escapes stay literal.
std::string UrlDecode(std::string_view s);

Result<int64_t> ParseTime(std::string_view s);
Result<int64_t> ParseDuration(std::string_view s);
// "" → 0 (no limit); negative or non-numeric values are errors.
Result<int64_t> ParseLimit(std::string_view s);

// The optional `start` and `end` parameters of the endpoints that take a
// time range (series, labels, delete_series, the UI's silences): each one
// present replaces its default (kMinTimeMs, kMaxTimeMs); an unreadable one is
// a bad_data error naming it, as Prometheus words it. Order is not checked.
struct TimeRangeParams {
  int64_t start = kMinTimeMs;
  int64_t end = kMaxTimeMs;
};
std::optional<ApiError> ParseTimeRangeParams(const Params& p, TimeRangeParams* range);

// RFC 3339 rendering of a millisecond time ("2024-01-02T03:04:05.678Z").
std::string FormatRfc3339(int64_t ms);

}  // namespace gpumon::web::api
