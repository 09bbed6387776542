#include "scrape/targets_json.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "common/duration.h"

namespace gpumon::scrape {
namespace {

void Quote(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void LabelsObject(std::string& out, const Labels& labels) {
  out += '{';
  bool first = true;
  for (const auto& l : labels) {
    if (!first) out += ',';
    first = false;
    Quote(out, l.name);
    out += ':';
    Quote(out, l.value);
  }
  out += '}';
}

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

std::string TargetsJson(const std::vector<TargetSnapshot>& targets, const std::string& state,
                        const std::string& pool) {
  const bool active = state.empty() || state == "any" || state == "active";
  std::vector<const TargetSnapshot*> list;
  if (active) {
    for (const auto& t : targets) {
      if (pool.empty() || t.scrape_pool == pool) list.push_back(&t);
    }
  }
  std::sort(list.begin(), list.end(), [](const TargetSnapshot* a, const TargetSnapshot* b) {
    return std::tie(a->scrape_pool, a->labels) < std::tie(b->scrape_pool, b->labels);
  });
  std::string out = R"({"status":"success","data":{"activeTargets":[)";
  for (size_t i = 0; i < list.size(); ++i) {
    const TargetSnapshot& t = *list[i];
    if (i > 0) out += ',';
    out += R"({"discoveredLabels":)";
    LabelsObject(out, t.discovered_labels);
    out += R"(,"labels":)";
    LabelsObject(out, t.labels);
    out += R"(,"scrapePool":)";
    Quote(out, t.scrape_pool);
    out += R"(,"scrapeUrl":)";
    Quote(out, t.scrape_url);
    out += R"(,"globalUrl":)";
    Quote(out, t.scrape_url);
    out += R"(,"lastError":)";
    Quote(out, t.last_error);
    out += R"(,"lastScrape":)";
    Quote(out, Rfc3339(t.last_scrape_ms));
    char dur[64];
    std::snprintf(dur, sizeof dur, "%.9g", t.last_scrape_duration_s);
    out += R"(,"lastScrapeDuration":)";
    out += dur;
    out += R"(,"health":)";
    Quote(out, HealthName(t.health));
    out += R"(,"scrapeInterval":)";
    Quote(out, FormatDuration(std::chrono::milliseconds(t.scrape_interval_ms)));
    out += R"(,"scrapeTimeout":)";
    Quote(out, FormatDuration(std::chrono::milliseconds(t.scrape_timeout_ms)));
    out += '}';
  }
  out += R"(],"droppedTargets":[]}})";
  return out;
}

}  // namespace gpumon::scrape
