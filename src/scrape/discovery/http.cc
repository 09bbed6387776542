#include "scrape/discovery/http.h"

#include "scrape/discovery/json_get.h"

namespace gpumon::scrape::discovery {

Result<std::vector<TargetGroup>> HttpDiscoverer::Refresh() {
  rapidjson::Document doc;
  const int64_t timeout = std::max<int64_t>(config_.refresh_interval_ms, 1000);
  if (Status s = GetJson(config_.url, config_.http, timeout, /*require_json_type=*/true, &doc);
      !s.ok()) {
    return s;
  }
  if (!doc.IsArray()) return Status::Error(config_.url + ": expected a JSON list of target groups");
  std::vector<TargetGroup> out;
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    const auto& g = doc[i];
    const std::string where = config_.url + ": group " + std::to_string(i);
    if (g.IsNull()) return Status::Error("nil target group item found");
    if (!g.IsObject()) return Status::Error(where + ": expected an object");
    TargetGroup tg;
    tg.source = config_.url + ":" + std::to_string(i);
    std::vector<Label> labels;
    for (auto m = g.MemberBegin(); m != g.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key == "targets") {
        if (m->value.IsNull()) continue;
        if (!m->value.IsArray()) return Status::Error(where + ": targets must be a list");
        for (const auto& t : m->value.GetArray()) {
          if (!t.IsString()) return Status::Error(where + ": targets must be strings");
          tg.targets.emplace_back(t.GetString(), t.GetStringLength());
        }
      } else if (key == "labels") {
        if (m->value.IsNull()) continue;
        if (!m->value.IsObject()) return Status::Error(where + ": labels must be an object");
        for (auto l = m->value.MemberBegin(); l != m->value.MemberEnd(); ++l) {
          const std::string name(l->name.GetString(), l->name.GetStringLength());
          if (!IsValidLabelName(name)) {
            return Status::Error(where + ": \"" + name + "\" is not a valid label name");
          }
          if (!l->value.IsString()) {
            return Status::Error(where + ": label \"" + name + "\" must be a string");
          }
          std::string value(l->value.GetString(), l->value.GetStringLength());
          if (!value.empty()) labels.push_back({name, std::move(value)});
        }
      }
      // Other keys are ignored, as Go's JSON decoding does.
    }
    labels.push_back({"__meta_url", config_.url});
    tg.labels = Labels::FromUnsorted(std::move(labels));
    out.push_back(std::move(tg));
  }
  return out;
}

}  // namespace gpumon::scrape::discovery
