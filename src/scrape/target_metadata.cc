#include "scrape/target_metadata.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "promql/parser.h"

namespace gpumon::scrape {
namespace {

// Go's strconv.Atoi: optional sign, decimal digits, nothing else.
Result<int64_t> ParseLimit(const std::string& text, const char* name) {
  if (text.empty()) return int64_t{-1};
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (*begin == '+') ++begin;  // from_chars takes '-' but not '+'
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (begin == end || (text[0] == '+' && *begin == '-') || ec != std::errc() || ptr != end) {
    return Status::Error(std::string(name) + " must be a number");
  }
  return v;
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Str(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

}  // namespace

Result<std::vector<TargetMetadataRow>> SelectTargetMetadata(
    const std::vector<TargetMetadata>& targets, const TargetMetadataParams& params) {
  auto limit = ParseLimit(params.limit, "limit");
  if (!limit.ok()) return limit.status();
  std::vector<tsdb::Matcher> matchers;
  if (!params.match_target.empty()) {
    auto parsed = promql::ParseMetricSelector(params.match_target);
    if (!parsed.ok()) {
      return Status::Error("invalid parameter \"match_target\": " + parsed.status().message());
    }
    matchers = std::move(*parsed);
  }
  std::vector<TargetMetadataRow> rows;
  for (const TargetMetadata& t : targets) {
    if (*limit >= 0 && static_cast<int64_t>(rows.size()) >= *limit) break;
    const bool match = std::all_of(matchers.begin(), matchers.end(),
                                   [&](const tsdb::Matcher& m) { return m.Matches(t.target); });
    if (!match) continue;
    for (const MetricMetadataEntry& e : t.metadata) {
      if (params.metric.empty() || e.metric == params.metric) rows.push_back({&t.target, &e});
    }
  }
  return rows;
}

Result<std::vector<std::pair<std::string, std::vector<MetadataValue>>>> MergeMetricMetadata(
    const std::vector<TargetMetadata>& targets, const MetricMetadataParams& params) {
  auto limit = ParseLimit(params.limit, "limit");
  if (!limit.ok()) return limit.status();
  auto per_metric = ParseLimit(params.limit_per_metric, "limit_per_metric");
  if (!per_metric.ok()) return per_metric.status();
  std::map<std::string, std::vector<MetadataValue>, std::less<>> families;
  for (const TargetMetadata& t : targets) {
    for (const MetricMetadataEntry& e : t.metadata) {
      if (!params.metric.empty() && e.metric != params.metric) continue;
      auto it = families.find(e.metric);
      if (it != families.end() && *per_metric > 0 &&
          static_cast<int64_t>(it->second.size()) >= *per_metric) {
        continue;
      }
      if (it == families.end()) it = families.emplace(e.metric, std::vector<MetadataValue>()).first;
      MetadataValue v{e.type, e.help, e.unit};
      // Few distinct values per family: a linear scan beats hashing.
      if (std::find(it->second.begin(), it->second.end(), v) == it->second.end()) {
        it->second.push_back(std::move(v));
      }
    }
  }
  std::vector<std::pair<std::string, std::vector<MetadataValue>>> out;
  for (auto& [name, values] : families) {
    if (*limit >= 0 && static_cast<int64_t>(out.size()) >= *limit) break;
    out.emplace_back(name, std::move(values));
  }
  return out;
}

Result<std::string> TargetMetadataJson(const std::vector<TargetMetadata>& targets,
                                       const TargetMetadataParams& params) {
  auto rows = SelectTargetMetadata(targets, params);
  if (!rows.ok()) return rows.status();
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartArray();
  for (const TargetMetadataRow& r : *rows) {
    w.StartObject();
    w.Key("target");
    w.StartObject();
    for (const Label& l : *r.target) {
      Str(w, l.name);
      Str(w, l.value);
    }
    w.EndObject();
    if (params.metric.empty()) {
      w.Key("metric");
      Str(w, r.entry->metric);
    }
    w.Key("type");
    Str(w, r.entry->type);
    w.Key("help");
    Str(w, r.entry->help);
    w.Key("unit");
    Str(w, r.entry->unit);
    w.EndObject();
  }
  w.EndArray();
  return std::string(buf.GetString(), buf.GetSize());
}

Result<std::string> MetricMetadataJson(const std::vector<TargetMetadata>& targets,
                                       const MetricMetadataParams& params) {
  auto families = MergeMetricMetadata(targets, params);
  if (!families.ok()) return families.status();
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  for (const auto& [name, values] : *families) {
    Str(w, name);
    w.StartArray();
    for (const MetadataValue& v : values) {
      w.StartObject();
      w.Key("type");
      Str(w, v.type);
      w.Key("unit");
      Str(w, v.unit);
      w.Key("help");
      Str(w, v.help);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace gpumon::scrape
