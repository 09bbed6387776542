#include "web/api/admin_api.h"

#include <memory>

#include "promql/parser.h"

namespace gpumon::web::api {
namespace {

// Go's strconv.ParseBool.
std::optional<bool> ParseGoBool(const std::string& s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    return false;
  }
  return std::nullopt;
}

}  // namespace

ApiResponse AdminApi::Disabled() {
  return ApiResponse::Failure({ErrorKind::kUnavailable, "admin APIs disabled"});
}

ApiResponse AdminApi::DeleteSeries(const Params& p) {
  std::vector<std::string> match = p.GetAll("match[]");
  if (match.empty()) {
    return ApiResponse::Failure({ErrorKind::kBadData, "no match[] parameter provided"});
  }
  TimeRangeParams range;
  if (auto err = ParseTimeRangeParams(p, &range)) return ApiResponse::Failure(*err);
  // All selectors are parsed before anything is deleted.
  std::vector<std::vector<tsdb::Matcher>> sets;
  for (const auto& text : match) {
    auto ms = promql::ParseMetricSelector(text);
    if (!ms.ok()) return ApiResponse::Failure(InvalidParam("match[]", ms.status().message()));
    sets.push_back(std::move(ms).value());
  }
  for (const auto& ms : sets) {
    if (Status s = backend_.DeleteSeries(ms, range.start, range.end); !s.ok()) {
      return ApiResponse::Failure({ErrorKind::kInternal, s.message()});
    }
  }
  return ApiResponse{};  // 204
}

ApiResponse AdminApi::CleanTombstones(const Params&) {
  if (Status s = backend_.CleanTombstones(); !s.ok()) {
    return ApiResponse::Failure({ErrorKind::kInternal, s.message()});
  }
  return ApiResponse{};  // 204
}

ApiResponse AdminApi::Snapshot(const Params& p) {
  bool skip_head = false;
  if (std::string v = p.Get("skip_head"); !v.empty()) {
    auto b = ParseGoBool(v);
    if (!b) {
      return ApiResponse::Failure(
          InvalidParam("skip_head", "unable to parse boolean: strconv.ParseBool: parsing " +
                                        GoQuote(v) + ": invalid syntax"));
    }
    skip_head = *b;
  }
  auto name = backend_.Snapshot(skip_head);
  if (!name.ok()) return ApiResponse::Failure({ErrorKind::kInternal, name.status().message()});
  auto shared = std::make_shared<std::string>(std::move(name).value());
  return ApiResponse::Success([shared](JsonWriter& w) {
    w.StartObject();
    w.Key("name");
    w.Str(*shared);
    return w.EndObject() && w.ok();
  });
}

}  // namespace gpumon::web::api
