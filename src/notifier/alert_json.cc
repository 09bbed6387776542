#include "notifier/alert_json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <ctime>

namespace gpumon::notifier {
namespace {

void WriteLabelSet(rapidjson::Writer<rapidjson::StringBuffer>& w, const Labels& labels) {
  w.StartObject();
  for (const Label& l : labels) {
    w.Key(l.name.data(), static_cast<rapidjson::SizeType>(l.name.size()));
    w.String(l.value.data(), static_cast<rapidjson::SizeType>(l.value.size()));
  }
  w.EndObject();
}

}  // namespace

std::string FormatRfc3339Millis(int64_t ms) {
  // Floor division, so times before 1970 keep a non-negative millisecond part.
  int64_t secs = ms / 1000;
  int64_t frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    secs -= 1;
  }
  const time_t t = static_cast<time_t>(secs);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(frac));
  return buf;
}

std::string EncodeAlertsV2(std::span<const Alert> alerts) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartArray();
  for (const Alert& a : alerts) {
    w.StartObject();
    w.Key("labels");
    WriteLabelSet(w, a.labels);
    w.Key("annotations");
    WriteLabelSet(w, a.annotations);
    if (a.starts_at_ms != 0) {
      w.Key("startsAt");
      w.String(FormatRfc3339Millis(a.starts_at_ms).c_str());
    }
    if (a.ends_at_ms != 0) {
      w.Key("endsAt");
      w.String(FormatRfc3339Millis(a.ends_at_ms).c_str());
    }
    if (!a.generator_url.empty()) {
      w.Key("generatorURL");
      w.String(a.generator_url.c_str());
    }
    w.EndObject();
  }
  w.EndArray();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace gpumon::notifier
