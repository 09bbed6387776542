#include "rules/backtest_recorder.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <set>
#include <vector>

#include "common/labels_json.h"

namespace gpumon::rules {

void BacktestRecorder::Observe(const Group& group, int64_t ts) {
  for (const auto& r : group.rules()) {
    if (r->alerting()) ObserveRule(static_cast<const AlertingRule&>(*r), ts);
  }
}

void BacktestRecorder::ObserveRule(const AlertingRule& rule, int64_t ts) {
  auto [it, inserted] = rules_.try_emplace(&rule);
  RuleState& st = it->second;
  if (inserted) st.ordinal = static_cast<uint32_t>(rules_.size() - 1);

  std::set<Labels> active;
  for (const ActiveAlert& a : rule.ActiveAlerts()) {
    if (a.state == AlertState::kInactive) continue;
    active.insert(a.labels);
    auto [ep, fresh] = st.open.try_emplace(a.labels);
    AlertEpisode& e = ep->second;
    if (fresh) {
      e.alertname = rule.name();
      e.labels = a.labels;
      e.severity = std::string(a.labels.Get("severity"));
      e.pending_at_ms = a.active_at_ms;
    }
    if (a.state == AlertState::kFiring && !e.firing_at_ms) {
      e.firing_at_ms = a.fired_at_ms != kNoTime ? a.fired_at_ms : ts;
      e.annotations = a.annotations;
    }
  }
  for (auto ep = st.open.begin(); ep != st.open.end();) {
    if (active.count(ep->first) != 0) {
      ++ep;
      continue;
    }
    ep->second.resolved_at_ms = ts;
    Emit(ep->second);
    ep = st.open.erase(ep);
  }
}

void BacktestRecorder::Finish() {
  std::vector<RuleState*> order;
  order.reserve(rules_.size());
  for (auto& [rule, st] : rules_) order.push_back(&st);
  std::sort(order.begin(), order.end(),
            [](const RuleState* a, const RuleState* b) { return a->ordinal < b->ordinal; });
  for (RuleState* st : order) {
    for (const auto& [labels, e] : st->open) Emit(e);
    st->open.clear();
  }
}

size_t BacktestRecorder::open_episodes() const {
  size_t n = 0;
  for (const auto& [rule, st] : rules_) n += st.open.size();
  return n;
}

void BacktestRecorder::Emit(const AlertEpisode& e) {
  ++stats_.episodes;
  if (e.firing_at_ms) ++stats_.fired;
  if (sink_) sink_(e);
}

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void String(JsonWriter& w, std::string_view s) { WriteJsonString(w, s); }
void Object(JsonWriter& w, const Labels& labels) { WriteLabelsObject(w, labels); }

void Time(JsonWriter& w, const std::optional<int64_t>& t) {
  if (t) {
    w.Int64(*t);
  } else {
    w.Null();
  }
}

}  // namespace

std::string EpisodeJson(const AlertEpisode& e) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("alertname");
  String(w, e.alertname);
  w.Key("labels");
  Object(w, e.labels);
  w.Key("severity");
  String(w, e.severity);
  w.Key("pending_at_ms");
  w.Int64(e.pending_at_ms);
  w.Key("firing_at_ms");
  Time(w, e.firing_at_ms);
  w.Key("resolved_at_ms");
  Time(w, e.resolved_at_ms);
  w.Key("annotations");
  Object(w, e.annotations);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace gpumon::rules
