#include "rules/alerting_rule.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "promql/parser.h"

namespace gpumon::rules {

namespace {

// Prometheus binds a template's query function to the rule's query function
// and evaluation time (rules/alerting.go, NewTemplateExpander).
TemplateQueryFunc TemplateQuery(const EvalContext& ctx, int64_t ts) {
  if (ctx.engine == nullptr || ctx.queryable == nullptr) return {};
  return [&ctx, ts](const std::string& q) -> Result<std::vector<TemplateSample>> {
    promql::ParseResult p = promql::Parse(q);
    if (!p.ok()) return Status::Error(p.error->ToString());
    if (ctx.adapt_template_query) {
      if (Status st = ctx.adapt_template_query(*p.expr); !st.ok()) return st;
    }
    Result<promql::Vector> v = InstantVector(ctx, *p.expr, ts);
    if (!v.ok()) return v.status();
    std::vector<TemplateSample> out;
    out.reserve(v->size());
    for (auto& s : *v) out.push_back({std::move(s.metric), s.f});
    return out;
  };
}

}  // namespace

const char* AlertStateName(AlertState s) {
  switch (s) {
    case AlertState::kPending:
      return "pending";
    case AlertState::kFiring:
      return "firing";
    default:
      return "inactive";
  }
}

std::string GeneratorUrl(const std::string& external_url, const std::string& query) {
  std::string esc;
  for (unsigned char c : query) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      esc += static_cast<char>(c);
    } else if (c == ' ') {
      esc += '+';
    } else {
      char b[4];
      std::snprintf(b, sizeof(b), "%%%02X", c);
      esc += b;
    }
  }
  return external_url + "/graph?g0.expr=" + esc + "&g0.tab=1";
}

AlertingRule::AlertingRule(std::string name, promql::ExprPtr expr, int64_t hold_ms,
                           int64_t keep_firing_for_ms, Labels labels, Labels annotations,
                           Labels external_labels, std::string external_url, bool restored)
    : Rule(std::move(name), std::move(expr), std::move(labels)),
      hold_ms_(hold_ms),
      keep_firing_for_ms_(keep_firing_for_ms),
      annotations_(std::move(annotations)),
      external_labels_(std::move(external_labels)),
      external_url_(std::move(external_url)),
      restored_(restored) {
  for (const auto& l : this->labels())
    label_templates_.emplace_back(l.name, Template::Parse(l.value));
  for (const auto& a : annotations_) {
    annotation_templates_.emplace_back(a.name, Template::Parse(a.value));
  }
}

std::string AlertingRule::Definition() const {
  return "alert: " + name() + "\nexpr: " + query() + "\nfor: " + std::to_string(hold_ms_) +
         "\nkeep_firing_for: " + std::to_string(keep_firing_for_ms_) +
         "\nlabels: " + labels().ToString() + "\nannotations: " + annotations_.ToString() +
         "\nexternal: " + external_labels_.ToString() + " " + external_url_;
}

std::string AlertingRule::Expand(const Template* t, const std::string& raw,
                                 const TemplateData& d) const {
  if (t == nullptr) return raw;
  auto r = t->Execute(d);
  if (!r.ok()) return "<error expanding template: " + r.status().message() + ">";
  return std::move(r).value();
}

Result<promql::Vector> AlertingRule::Eval(const EvalContext& ctx, int64_t ts) {
  auto res = QueryVector(ctx, expr(), ts);
  if (!res.ok()) return res.status();
  const promql::Vector& vec = res.value();

  std::vector<ActiveAlert> fresh;
  std::set<Labels> seen;
  const TemplateQueryFunc query = TemplateQuery(ctx, ts);
  for (const auto& s : vec) {
    TemplateData d;
    d.labels = OverrideLabels(s.metric, Labels{});
    d.external_labels = external_labels_;
    d.external_url = external_url_;
    d.value = s.f;
    d.query = query;
    if (ctx.template_external_url) d.function_external_url = external_url_;
    std::vector<Label> ls;
    for (const auto& l : s.metric) {
      if (l.name != kMetricName) ls.push_back(l);
    }
    Labels base = Labels::FromSorted(std::move(ls));
    std::vector<Label> expanded;
    for (const auto& [n, t] : label_templates_) {
      std::string raw(labels().Get(n));
      expanded.push_back({n, Expand(t.ok() ? &t.value() : nullptr, raw, d)});
    }
    expanded.push_back({"alertname", name()});
    Labels alert_labels = OverrideLabels(base, Labels::FromUnsorted(expanded));
    std::vector<Label> ann;
    for (const auto& [n, t] : annotation_templates_) {
      std::string raw(annotations_.Get(n));
      ann.push_back({n, Expand(t.ok() ? &t.value() : nullptr, raw, d)});
    }
    if (!seen.insert(alert_labels).second) {
      return Status::Error(
          "vector contains metrics with the same labelset after applying alert labels");
    }
    ActiveAlert a;
    a.labels = alert_labels;
    a.annotations = Labels::FromUnsorted(std::move(ann));
    a.active_at_ms = ts;
    a.state = AlertState::kPending;
    a.value = s.f;
    fresh.push_back(std::move(a));
  }

  std::lock_guard<std::mutex> lock(mu_);
  auto find = [&](const Labels& l) -> ActiveAlert* {
    auto it = active_.find(l.Hash());
    if (it == active_.end()) return nullptr;
    for (auto& a : it->second) {
      if (a.labels == l) return &a;
    }
    return nullptr;
  };
  for (auto& a : fresh) {
    ActiveAlert* cur = find(a.labels);
    if (cur != nullptr && cur->state != AlertState::kInactive) {
      cur->value = a.value;
      cur->annotations = a.annotations;
      continue;
    }
    if (cur != nullptr) {
      *cur = std::move(a);  // a resolved alert came back: it starts over
    } else {
      active_[a.labels.Hash()].push_back(std::move(a));
    }
  }

  promql::Vector out;
  int64_t num_active = 0;
  const int64_t sample_ts = ts - ctx.query_offset_ms;
  for (auto bucket = active_.begin(); bucket != active_.end();) {
    auto& list = bucket->second;
    for (auto it = list.begin(); it != list.end();) {
      ActiveAlert& a = *it;
      bool in_result = seen.count(a.labels) > 0;
      if (!in_result) {
        bool keep_firing = false;
        if (a.state == AlertState::kFiring && keep_firing_for_ms_ > 0) {
          if (a.keep_firing_since_ms == kNoTime) a.keep_firing_since_ms = ts;
          keep_firing = ts - a.keep_firing_since_ms < keep_firing_for_ms_;
        }
        if (a.state == AlertState::kPending ||
            (a.resolved_at_ms != kNoTime && ts - a.resolved_at_ms > kResolvedRetentionMs)) {
          it = list.erase(it);
          continue;
        }
        if (a.state != AlertState::kInactive && !keep_firing) {
          a.state = AlertState::kInactive;
          a.resolved_at_ms = ts;
        }
        if (!keep_firing) {
          ++it;
          continue;
        }
      } else {
        a.keep_firing_since_ms = kNoTime;
      }
      ++num_active;
      if (a.state == AlertState::kPending && ts - a.active_at_ms >= hold_ms_) {
        a.state = AlertState::kFiring;
        a.fired_at_ms = ts;
      }
      if (a.state == AlertState::kFiring && ts - a.active_at_ms < hold_ms_) {
        // `for` grew across a reload: back to pending.
        a.state = AlertState::kPending;
        a.fired_at_ms = kNoTime;
        a.last_sent_at_ms = kNoTime;
        a.keep_firing_since_ms = kNoTime;
      }
      if (restored_.load()) {
        Labels alerts = OverrideLabels(OverrideLabels(labels(), a.labels),
                                       Labels{{std::string(kMetricName), "ALERTS"},
                                              {"alertname", name()},
                                              {"alertstate", AlertStateName(a.state)}});
        out.push_back({alerts, sample_ts, 1});
        Labels for_state = OverrideLabels(
            OverrideLabels(labels(), a.labels),
            Labels{{std::string(kMetricName), "ALERTS_FOR_STATE"}, {"alertname", name()}});
        // Whole seconds, as Prometheus stores ActiveAt.Unix().
        int64_t secs =
            a.active_at_ms >= 0 ? a.active_at_ms / 1000 : -((-a.active_at_ms + 999) / 1000);
        out.push_back({for_state, sample_ts, static_cast<double>(secs)});
      }
      ++it;
    }
    if (list.empty()) {
      bucket = active_.erase(bucket);
    } else {
      ++bucket;
    }
  }
  if (ctx.limit > 0 && num_active > ctx.limit) {
    active_.clear();
    return Status::Error("exceeded limit of " + std::to_string(ctx.limit) + " with " +
                         std::to_string(num_active) + " alerts");
  }
  return out;
}

std::vector<Alert> AlertingRule::AlertsToSend(int64_t ts, int64_t resend_delay_ms,
                                              int64_t interval_ms) {
  std::vector<Alert> out;
  std::string url = GeneratorUrl(external_url_, query());
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [h, list] : active_) {
    for (auto& a : list) {
      if (a.state == AlertState::kPending) continue;
      bool due = (a.resolved_at_ms != kNoTime && a.resolved_at_ms > a.last_sent_at_ms) ||
                 (a.last_sent_at_ms == kNoTime || a.last_sent_at_ms + resend_delay_ms < ts);
      if (!due) continue;
      a.last_sent_at_ms = ts;
      a.valid_until_ms = ts + 4 * std::max(interval_ms, resend_delay_ms);
      Alert n;
      n.labels = a.labels;
      n.annotations = a.annotations;
      n.starts_at_ms = a.fired_at_ms;
      n.ends_at_ms = a.resolved_at_ms != kNoTime ? a.resolved_at_ms : a.valid_until_ms;
      n.generator_url = url;
      out.push_back(std::move(n));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Alert& a, const Alert& b) { return a.labels < b.labels; });
  return out;
}

std::vector<ActiveAlert> AlertingRule::AllAlerts() const {
  std::vector<ActiveAlert> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [h, list] : active_) out.insert(out.end(), list.begin(), list.end());
  }
  std::sort(out.begin(), out.end(),
            [](const ActiveAlert& a, const ActiveAlert& b) { return a.labels < b.labels; });
  return out;
}

std::vector<ActiveAlert> AlertingRule::ActiveAlerts() const {
  std::vector<ActiveAlert> all = AllAlerts();
  std::erase_if(all, [](const ActiveAlert& a) { return a.state == AlertState::kInactive; });
  return all;
}

AlertState AlertingRule::State() const {
  AlertState s = AlertState::kInactive;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [h, list] : active_) {
    for (const auto& a : list) {
      if (static_cast<int>(a.state) > static_cast<int>(s)) s = a.state;
    }
  }
  return s;
}

void AlertingRule::ForEachAlert(const std::function<void(ActiveAlert&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [h, list] : active_) {
    for (auto& a : list) fn(a);
  }
}

void AlertingRule::CopyAlertsFrom(const AlertingRule& other) {
  if (&other == this) return;
  std::scoped_lock lock(mu_, other.mu_);
  for (const auto& [h, list] : other.active_) {
    for (const auto& a : list) {
      auto& mine = active_[h];
      bool dup = false;
      for (const auto& m : mine) dup = dup || m.labels == a.labels;
      if (!dup) mine.push_back(a);
    }
  }
}

Labels AlertingRule::ForStateSelector() const {
  std::vector<Label> ls;
  for (const auto& l : labels()) {
    if (l.value.find("{{") == std::string::npos) ls.push_back(l);
  }
  return OverrideLabels(
      Labels::FromUnsorted(std::move(ls)),
      Labels{{std::string(kMetricName), "ALERTS_FOR_STATE"}, {"alertname", name()}});
}

}  // namespace gpumon::rules
