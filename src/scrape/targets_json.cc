#include "scrape/targets_json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "common/duration.h"
#include "common/labels_json.h"

namespace gpumon::scrape {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void String(JsonWriter& w, std::string_view s) { WriteJsonString(w, s); }
void LabelsObject(JsonWriter& w, const Labels& labels) { WriteLabelsObject(w, labels); }

std::string Rfc3339(int64_t ms) {
  if (ms == 0) return "0001-01-01T00:00:00Z";
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

}  // namespace

std::string TargetsJson(const std::vector<TargetSnapshot>& targets,
                        const std::vector<DroppedTargetSnapshot>& dropped,
                        const std::map<std::string, size_t>& dropped_counts,
                        const std::string& state_param, const std::string& pool) {
  std::string state = state_param;
  std::transform(state.begin(), state.end(), state.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool active = state.empty() || state == "any" || state == "active";
  const bool show_dropped = state.empty() || state == "any" || state == "dropped";
  std::vector<const TargetSnapshot*> list;
  if (active) {
    for (const auto& t : targets) {
      if (pool.empty() || t.scrape_pool == pool) list.push_back(&t);
    }
  }
  std::sort(list.begin(), list.end(), [](const TargetSnapshot* a, const TargetSnapshot* b) {
    return std::tie(a->scrape_pool, a->labels) < std::tie(b->scrape_pool, b->labels);
  });
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("status");
  w.String("success");
  w.Key("data");
  w.StartObject();
  w.Key("activeTargets");
  w.StartArray();
  for (const TargetSnapshot* tp : list) {
    const TargetSnapshot& t = *tp;
    w.StartObject();
    w.Key("discoveredLabels");
    LabelsObject(w, t.discovered_labels);
    w.Key("labels");
    LabelsObject(w, t.labels);
    w.Key("scrapePool");
    String(w, t.scrape_pool);
    w.Key("scrapeUrl");
    String(w, t.scrape_url);
    w.Key("globalUrl");
    String(w, t.scrape_url);
    w.Key("lastError");
    String(w, t.last_error);
    w.Key("lastScrape");
    String(w, Rfc3339(t.last_scrape_ms));
    w.Key("lastScrapeDuration");
    w.Double(t.last_scrape_duration_s);
    w.Key("health");
    String(w, HealthName(t.health));
    w.Key("scrapeInterval");
    String(w, FormatDuration(std::chrono::milliseconds(t.scrape_interval_ms)));
    w.Key("scrapeTimeout");
    String(w, FormatDuration(std::chrono::milliseconds(t.scrape_timeout_ms)));
    w.EndObject();
  }
  w.EndArray();
  w.Key("droppedTargets");
  w.StartArray();
  if (show_dropped) {
    // Pools in name order; within a pool, discovery order.
    std::vector<const DroppedTargetSnapshot*> drops;
    for (const auto& d : dropped) {
      if (pool.empty() || d.scrape_pool == pool) drops.push_back(&d);
    }
    std::stable_sort(drops.begin(), drops.end(),
                     [](const DroppedTargetSnapshot* a, const DroppedTargetSnapshot* b) {
                       return a->scrape_pool < b->scrape_pool;
                     });
    for (const DroppedTargetSnapshot* d : drops) {
      w.StartObject();
      w.Key("discoveredLabels");
      LabelsObject(w, d->discovered_labels);
      w.Key("scrapePool");
      String(w, d->scrape_pool);
      w.EndObject();
    }
  }
  w.EndArray();
  w.Key("droppedTargetCounts");
  if (show_dropped) {
    w.StartObject();
    for (const auto& [name, n] : dropped_counts) {
      String(w, name);
      w.Uint64(n);
    }
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace gpumon::scrape
