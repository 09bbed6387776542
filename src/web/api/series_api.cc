#include "web/api/series_api.h"

#include <algorithm>
#include <memory>
#include <set>

#include "promql/parser.h"
#include "web/api/json_values.h"

namespace gpumon::web::api {
namespace {

using MatcherSets = std::vector<std::vector<tsdb::Matcher>>;

// Parses every match[]; fails with the parser's message or Prometheus's
// "non-empty matcher" message.
Result<MatcherSets> ParseMatchers(const std::vector<std::string>& texts) {
  MatcherSets sets;
  for (const auto& text : texts) {
    auto ms = promql::ParseMetricSelector(text);
    if (!ms.ok()) return ms.status();
    bool any_non_empty = std::any_of(ms->begin(), ms->end(),
                                     [](const tsdb::Matcher& m) { return !m.MatchesEmpty(); });
    if (!any_non_empty) return Status::Error("match[] must contain at least one non-empty matcher");
    sets.push_back(std::move(ms).value());
  }
  return sets;
}

ApiResponse StringListResponse(std::vector<std::string> list, int64_t limit,
                               std::vector<std::string> warnings = {}) {
  if (limit > 0 && list.size() > static_cast<size_t>(limit)) {
    list.resize(static_cast<size_t>(limit));
    warnings.push_back("results truncated due to limit");
  }
  auto shared = std::make_shared<std::vector<std::string>>(std::move(list));
  ApiResponse r = ApiResponse::Success([shared](JsonWriter& w) {
    w.StartArray();
    for (const auto& s : *shared) w.Str(s);
    return w.EndArray() && w.ok();
  });
  r.warnings = std::move(warnings);
  return r;
}

// Sorted union of several sorted lists.
std::vector<std::string> Union(std::vector<std::vector<std::string>> lists) {
  if (lists.size() == 1) return std::move(lists[0]);
  std::set<std::string> all;
  for (auto& l : lists) all.insert(l.begin(), l.end());
  return {all.begin(), all.end()};
}

}  // namespace

ApiResponse SeriesApi::Series(const Params& p) {
  std::vector<std::string> match = p.GetAll("match[]");
  if (match.empty())
    return ApiResponse::Failure({ErrorKind::kBadData, "no match[] parameter provided"});
  auto limit = ParseLimit(p.Get("limit"));
  if (!limit.ok()) return ApiResponse::Failure(InvalidParam("limit", limit.status().message()));
  TimeRangeParams range;
  if (auto err = ParseTimeRangeParams(p, &range)) return ApiResponse::Failure(*err);
  auto sets = ParseMatchers(match);
  if (!sets.ok()) return ApiResponse::Failure(InvalidParam("match[]", sets.status().message()));

  auto q = backend_.Querier(range.start, range.end);
  if (!q) return ApiResponse::Failure({ErrorKind::kInternal, "storage unavailable"});
  auto series = std::make_shared<std::vector<Labels>>();
  std::vector<std::string> warnings;
  const size_t max = *limit > 0 ? static_cast<size_t>(*limit) : SIZE_MAX;
  if (sets->size() == 1) {
    auto set = q->Select((*sets)[0]);
    while (set->Next()) {
      if (series->size() == max) {
        warnings.push_back("results truncated due to limit");
        break;
      }
      series->push_back(set->labels());
    }
    if (!set->status().ok()) {
      return ApiResponse::Failure({ErrorKind::kInternal, set->status().message()});
    }
  } else {
    // Each set is sorted; a merge through an ordered set drops duplicates.
    std::set<Labels> merged;
    for (const auto& ms : *sets) {
      auto set = q->Select(ms);
      while (set->Next()) merged.insert(set->labels());
      if (!set->status().ok()) {
        return ApiResponse::Failure({ErrorKind::kInternal, set->status().message()});
      }
    }
    for (const Labels& l : merged) {
      if (series->size() == max) {
        warnings.push_back("results truncated due to limit");
        break;
      }
      series->push_back(l);
    }
  }
  ApiResponse r = ApiResponse::Success([series](JsonWriter& w) {
    w.StartArray();
    for (const Labels& l : *series) {
      if (!WriteLabels(w, l)) return false;
    }
    return w.EndArray() && w.ok();
  });
  r.warnings = std::move(warnings);
  return r;
}

ApiResponse SeriesApi::LabelNames(const Params& p) {
  auto limit = ParseLimit(p.Get("limit"));
  if (!limit.ok()) return ApiResponse::Failure(InvalidParam("limit", limit.status().message()));
  TimeRangeParams range;
  if (auto err = ParseTimeRangeParams(p, &range)) return ApiResponse::Failure(*err);
  auto sets = ParseMatchers(p.GetAll("match[]"));
  if (!sets.ok()) return ApiResponse::Failure({ErrorKind::kBadData, sets.status().message()});
  auto q = backend_.Querier(range.start, range.end);
  if (!q) return ApiResponse::Failure({ErrorKind::kInternal, "storage unavailable"});
  if (sets->empty()) sets->emplace_back();
  std::vector<std::vector<std::string>> lists;
  for (const auto& ms : *sets) {
    auto names = q->LabelNames(ms);
    if (!names.ok()) return ApiResponse::Failure({ErrorKind::kExecution, names.status().message()});
    lists.push_back(std::move(names).value());
  }
  return StringListResponse(Union(std::move(lists)), *limit);
}

ApiResponse SeriesApi::LabelValues(const std::string& name, const Params& p) {
  if (name.empty()) {
    return ApiResponse::Failure({ErrorKind::kBadData, "invalid label name: " + GoQuote(name)});
  }
  auto limit = ParseLimit(p.Get("limit"));
  if (!limit.ok()) return ApiResponse::Failure(InvalidParam("limit", limit.status().message()));
  TimeRangeParams range;
  if (auto err = ParseTimeRangeParams(p, &range)) return ApiResponse::Failure(*err);
  auto sets = ParseMatchers(p.GetAll("match[]"));
  if (!sets.ok()) return ApiResponse::Failure({ErrorKind::kBadData, sets.status().message()});
  auto q = backend_.Querier(range.start, range.end);
  if (!q) return ApiResponse::Failure({ErrorKind::kExecution, "storage unavailable"});
  if (sets->empty()) sets->emplace_back();
  std::vector<std::vector<std::string>> lists;
  for (const auto& ms : *sets) {
    auto values = q->LabelValues(name, ms);
    if (!values.ok()) {
      return ApiResponse::Failure({ErrorKind::kExecution, values.status().message()});
    }
    lists.push_back(std::move(values).value());
  }
  return StringListResponse(Union(std::move(lists)), *limit);
}

ApiResponse SeriesApi::Metadata(const Params& p) {
  int64_t limit = -1, per_metric = -1;
  if (std::string s = p.Get("limit"); !s.empty()) {
    auto v = ParseLimit(s);
    if (!v.ok() && v.status().message() != "limit must be non-negative") {
      return ApiResponse::Failure({ErrorKind::kBadData, "limit must be a number"});
    }
    limit = v.ok() ? *v : -1;
  }
  if (std::string s = p.Get("limit_per_metric"); !s.empty()) {
    auto v = ParseLimit(s);
    if (!v.ok() && v.status().message() != "limit must be non-negative") {
      return ApiResponse::Failure({ErrorKind::kBadData, "limit_per_metric must be a number"});
    }
    per_metric = v.ok() ? *v : -1;
  }
  auto all = std::make_shared<std::map<std::string, std::vector<MetricMetadata>>>(
      backend_.Metadata(p.Get("metric")));
  return ApiResponse::Success([all, limit, per_metric](JsonWriter& w) {
    w.StartObject();
    int64_t n = 0;
    for (const auto& [name, list] : *all) {
      if (limit >= 0 && n >= limit) break;
      ++n;
      w.Str(name);
      w.StartArray();
      int64_t k = 0;
      for (const auto& m : list) {
        if (per_metric > 0 && k >= per_metric) break;
        ++k;
        w.StartObject();
        w.Key("type");
        w.Str(m.type);
        w.Key("help");
        w.Str(m.help);
        w.Key("unit");
        w.Str(m.unit);
        w.EndObject();
      }
      w.EndArray();
    }
    return w.EndObject() && w.ok();
  });
}

}  // namespace gpumon::web::api
