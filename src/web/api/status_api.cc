#include "web/api/status_api.h"

#include <charconv>
#include <memory>

#include "web/api/cardinality.h"

namespace gpumon::web::api {
namespace {

constexpr int64_t kMaxTsdbLimit = 10000;

void StatList(JsonWriter& w, const char* key, const std::vector<NamedCount>& list) {
  w.Key(key);
  w.StartArray();
  for (const auto& s : list) {
    w.StartObject();
    w.Key("name");
    w.Str(s.name);
    w.Key("value");
    w.Uint64(s.value);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

ApiResponse StatusApi::BuildInfo(const Params&) {
  return ApiResponse::Success([this](JsonWriter& w) {
    w.StartObject();
    w.Key("version");
    w.Str(info_.version);
    w.Key("revision");
    w.Str(info_.revision);
    w.Key("branch");
    w.Str(info_.branch);
    w.Key("buildUser");
    w.Str(info_.build_user);
    w.Key("buildDate");
    w.Str(info_.build_date);
    w.Key("goVersion");
    w.Str(info_.go_version);
    return w.EndObject();
  });
}

ApiResponse StatusApi::RuntimeInfo(const Params&) {
  int64_t now = now_();
  return ApiResponse::Success([this, now](JsonWriter& w) {
    w.StartObject();
    w.Key("startTime");
    w.Str(FormatRfc3339(info_.start_time_ms));
    w.Key("CWD");
    w.Str(info_.cwd);
    w.Key("hostname");
    w.Str(info_.hostname);
    w.Key("serverTime");
    w.Str(FormatRfc3339(now));
    w.Key("reloadConfigSuccess");
    w.Bool(true);
    w.Key("lastConfigTime");
    w.Str(FormatRfc3339(info_.start_time_ms));
    w.Key("corruptionCount");
    w.Int(0);
    w.Key("storageRetention");
    w.Str(info_.storage_retention);
    return w.EndObject();
  });
}

ApiResponse StatusApi::Config(const Params&) {
  return ApiResponse::Success([this](JsonWriter& w) {
    w.StartObject();
    w.Key("yaml");
    w.Str(info_.config_yaml);
    return w.EndObject();
  });
}

ApiResponse StatusApi::Flags(const Params&) {
  return ApiResponse::Success([this](JsonWriter& w) {
    w.StartObject();
    for (const auto& [k, v] : info_.flags) {
      w.Str(k);
      w.Str(v);
    }
    return w.EndObject();
  });
}

ApiResponse StatusApi::Tsdb(const Params& p) {
  int64_t limit = 10;
  if (std::string s = p.Get("limit"); !s.empty()) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), limit);
    if (ec != std::errc() || end != s.data() + s.size() || limit < 1) {
      return ApiResponse::Failure({ErrorKind::kBadData, "limit must be a positive number"});
    }
    if (limit > kMaxTsdbLimit) {
      return ApiResponse::Failure(
          {ErrorKind::kBadData, "limit must not exceed " + std::to_string(kMaxTsdbLimit)});
    }
  }
  HeadSummary head = backend_.Head();
  bool empty = head.num_series == 0 || head.min_time > head.max_time;
  auto q = empty ? backend_.Querier(kMinTimeMs, kMaxTimeMs)
                 : backend_.Querier(head.min_time, head.max_time);
  if (!q) return ApiResponse::Failure({ErrorKind::kInternal, "storage unavailable"});
  auto card = ComputeCardinality(*q, static_cast<size_t>(limit));
  if (!card.ok()) return ApiResponse::Failure({ErrorKind::kInternal, card.status().message()});
  auto c = std::make_shared<Cardinality>(std::move(card).value());
  return ApiResponse::Success([c, head](JsonWriter& w) {
    w.StartObject();
    w.Key("headStats");
    w.StartObject();
    w.Key("numSeries");
    w.Uint64(head.num_series);
    w.Key("numLabelPairs");
    w.Uint64(c->num_label_pairs);
    w.Key("chunkCount");
    w.Int64(head.chunk_count);
    w.Key("minTime");
    w.Int64(head.min_time);
    w.Key("maxTime");
    w.Int64(head.max_time);
    w.EndObject();
    StatList(w, "seriesCountByMetricName", c->series_by_metric_name);
    StatList(w, "labelValueCountByLabelName", c->label_values_by_label_name);
    StatList(w, "memoryInBytesByLabelName", c->memory_by_label_name);
    StatList(w, "seriesCountByLabelValuePair", c->series_by_label_pair);
    return w.EndObject() && w.ok();
  });
}

}  // namespace gpumon::web::api
