#include "rules/group.h"

#include <chrono>
#include <map>

#include "common/log.h"
#include "rules/alerting_rule.h"
#include "tsdb/sample.h"

namespace gpumon::rules {

namespace {
int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

Group::Group(GroupOptions opts, std::vector<std::unique_ptr<Rule>> rules, const GroupDeps* deps)
    : opts_(std::move(opts)), rules_(std::move(rules)), deps_(deps), previous_(rules_.size()) {
  if (opts_.interval_ms <= 0) opts_.interval_ms = 60 * 1000;
}

Group::~Group() { Stop(); }

int64_t Group::Now() const { return deps_->now_ms ? deps_->now_ms() : SystemNowMs(); }

int64_t Group::EvalTimestamp(int64_t now_ms) const {
  Labels key{{"name", opts_.name}, {"file", opts_.file}};
  int64_t iv = opts_.interval_ms;
  int64_t offset = static_cast<int64_t>(key.Hash() % static_cast<uint64_t>(iv));
  int64_t adj = now_ms - offset;
  int64_t base = adj - (((adj % iv) + iv) % iv);
  return base + offset;
}

void Group::AppendStale(const std::vector<Labels>& series, int64_t ts) {
  if (series.empty() || !deps_->appender) return;
  auto app = deps_->appender();
  for (const auto& l : series) app->Append(l, ts, tsdb::StaleNaN()).ok();
  if (Status st = app->Commit(); !st.ok()) LogWarn("rules: stale markers: " + st.message());
}

void Group::Eval(int64_t ts) {
  std::lock_guard<std::mutex> eval_lock(eval_mu_);
  int64_t group_start = Now();
  auto group_t0 = std::chrono::steady_clock::now();
  EvalContext ctx;
  ctx.engine = deps_->engine;
  ctx.queryable = &deps_->queryable;
  ctx.query_offset_ms = opts_.query_offset_ms;
  ctx.limit = opts_.limit;
  ctx.adapt_template_query = deps_->adapt_template_query;
  ctx.template_external_url = deps_->template_external_url;
  const int64_t sample_ts = ts - opts_.query_offset_ms;
  std::vector<Alert> to_send;

  for (size_t i = 0; i < rules_.size(); ++i) {
    Rule& rule = *rules_[i];
    int64_t started = Now();
    auto t0 = std::chrono::steady_clock::now();
    auto finish = [&] {
      std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
      rule.SetEvaluation(started, d.count());
    };
    auto res = rule.Eval(ctx, ts);
    evaluations_.fetch_add(1, std::memory_order_relaxed);
    if (!res.ok()) {
      failures_.fetch_add(1, std::memory_order_relaxed);
      rule.SetHealth(RuleHealth::kBad, res.status().message());
      LogWarn("rules: evaluating rule \"" + rule.name() + "\" of group \"" + opts_.name +
              "\" failed: " + res.status().message());
      finish();
      continue;
    }
    rule.SetHealth(RuleHealth::kGood, "");
    if (rule.alerting()) {
      auto sent = static_cast<AlertingRule&>(rule).AlertsToSend(ts, deps_->resend_delay_ms,
                                                                opts_.interval_ms);
      to_send.insert(to_send.end(), sent.begin(), sent.end());
    }
    std::set<Labels> returned;
    if (deps_->appender) {
      auto app = deps_->appender();
      std::string append_error;
      for (const auto& s : res.value()) {
        Status st = app->Append(s.metric, s.t, s.f);
        if (!st.ok()) {
          append_error = st.message();
        } else {
          returned.insert(s.metric);
        }
      }
      for (const auto& l : previous_[i]) {
        if (!returned.count(l)) app->Append(l, sample_ts, tsdb::StaleNaN()).ok();
      }
      Status st = app->Commit();
      if (!st.ok()) {
        rule.SetHealth(RuleHealth::kBad, st.message());
        LogWarn("rules: appending results of rule \"" + rule.name() + "\" failed: " + st.message());
      } else {
        if (!append_error.empty()) rule.SetHealth(RuleHealth::kBad, append_error);
        previous_[i] = std::move(returned);
      }
    }
    finish();
  }
  if (!stale_.empty()) {
    AppendStale(stale_, ts);
    stale_.clear();
  }
  if (!to_send.empty() && deps_->notify) deps_->notify(to_send);
  std::chrono::duration<double> d = std::chrono::steady_clock::now() - group_t0;
  std::lock_guard<std::mutex> l(mu_);
  last_eval_ms_ = group_start;
  eval_seconds_ = d.count();
}

void Group::RestoreForState(int64_t ts) {
  std::lock_guard<std::mutex> eval_lock(eval_mu_);
  const int64_t mint = ts - deps_->outage_tolerance_ms;
  std::unique_ptr<tsdb::Querier> q = deps_->queryable ? deps_->queryable(mint, ts) : nullptr;
  for (auto& r : rules_) {
    if (!r->alerting()) continue;
    auto& rule = static_cast<AlertingRule&>(*r);
    int64_t hold = rule.hold_ms();
    if (hold < deps_->for_grace_period_ms || q == nullptr) {
      rule.SetRestored(true);
      continue;
    }
    std::vector<tsdb::Matcher> matchers;
    bool ok = true;
    for (const auto& l : rule.ForStateSelector()) {
      auto m = tsdb::Matcher::Make(tsdb::MatchType::kEqual, l.name, l.value);
      if (!m.ok()) {
        ok = false;
        break;
      }
      matchers.push_back(std::move(m).value());
    }
    if (!ok) {
      rule.SetRestored(true);
      continue;
    }
    // Last sample of each series, keyed by labels without __name__.
    std::map<Labels, tsdb::Sample> last;
    auto set = q->Select(matchers);
    while (set->Next()) {
      std::vector<Label> ls;
      for (const auto& l : set->labels()) {
        if (l.name != kMetricName) ls.push_back(l);
      }
      auto it = set->Iterator();
      bool any = false;
      tsdb::Sample s;
      while (it->Next()) {
        s = it->At();
        any = true;
      }
      if (!it->status().ok()) {
        LogWarn("rules: restoring 'for' state of \"" + rule.name() +
                "\": " + it->status().message());
        any = false;
      }
      if (any) last[Labels::FromSorted(std::move(ls))] = s;
    }
    if (!set->status().ok()) {
      LogWarn("rules: restoring 'for' state of \"" + rule.name() +
              "\": " + set->status().message());
    }
    rule.ForEachAlert([&](ActiveAlert& a) {
      auto it = last.find(a.labels);
      if (it == last.end() || tsdb::IsStaleNaN(it->second.v)) return;
      // Prometheus works in whole seconds here.
      int64_t down_at = (it->second.t / 1000) * 1000;
      int64_t restored_active = static_cast<int64_t>(it->second.v) * 1000;
      int64_t remaining = hold - (down_at - restored_active);
      if (remaining <= 0) {
        // Already past `for`: keep the original start.
      } else if (remaining < deps_->for_grace_period_ms) {
        restored_active = ts + deps_->for_grace_period_ms - hold;
      } else {
        restored_active += ts - down_at;
      }
      a.active_at_ms = restored_active;
    });
    rule.SetRestored(true);
  }
}

bool Group::Equals(const Group& o) const {
  if (opts_.name != o.opts_.name || opts_.file != o.opts_.file ||
      opts_.interval_ms != o.opts_.interval_ms || opts_.limit != o.opts_.limit ||
      opts_.query_offset_ms != o.opts_.query_offset_ms || rules_.size() != o.rules_.size()) {
    return false;
  }
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i]->Definition() != o.rules_[i]->Definition()) return false;
  }
  return true;
}

void Group::CopyState(Group& from) {
  std::scoped_lock lock(eval_mu_, from.eval_mu_);
  {
    std::scoped_lock l2(mu_, from.mu_);
    last_eval_ms_ = from.last_eval_ms_;
    eval_seconds_ = from.eval_seconds_;
  }
  auto key = [](const Rule& r) { return r.name() + "\xff" + r.labels().ToString(); };
  std::map<std::string, std::vector<size_t>> by_key;
  for (size_t i = 0; i < from.rules_.size(); ++i) by_key[key(*from.rules_[i])].push_back(i);
  std::vector<bool> used(from.rules_.size(), false);
  for (size_t i = 0; i < rules_.size(); ++i) {
    auto& idx = by_key[key(*rules_[i])];
    if (idx.empty()) continue;
    size_t fi = idx.front();
    idx.erase(idx.begin());
    used[fi] = true;
    previous_[i] = from.previous_[fi];
    if (rules_[i]->alerting() && from.rules_[fi]->alerting()) {
      static_cast<AlertingRule&>(*rules_[i])
          .CopyAlertsFrom(static_cast<const AlertingRule&>(*from.rules_[fi]));
    }
  }
  stale_ = from.stale_;
  for (size_t fi = 0; fi < from.rules_.size(); ++fi) {
    if (!used[fi])
      stale_.insert(stale_.end(), from.previous_[fi].begin(), from.previous_[fi].end());
  }
}

void Group::MarkAllStale(int64_t ts) {
  std::lock_guard<std::mutex> eval_lock(eval_mu_);
  std::vector<Labels> all = stale_;
  for (auto& p : previous_) {
    all.insert(all.end(), p.begin(), p.end());
    p.clear();
  }
  stale_.clear();
  AppendStale(all, ts);
}

int64_t Group::last_evaluation_ms() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_eval_ms_;
}

double Group::evaluation_seconds() const {
  std::lock_guard<std::mutex> l(mu_);
  return eval_seconds_;
}

bool Group::SleepUntil(int64_t t_ms) {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    int64_t now = Now();
    if (now >= t_ms) return true;
    cv_.wait_for(l, std::chrono::milliseconds(std::min<int64_t>(t_ms - now, 1000)));
  }
  return false;
}

void Group::Run() {
  const int64_t iv = opts_.interval_ms;
  int64_t eval_ts = EvalTimestamp(Now()) + iv;
  if (!SleepUntil(eval_ts)) return;
  Eval(eval_ts);
  bool restore = opts_.should_restore;
  while (true) {
    if (!SleepUntil(eval_ts + iv)) return;
    int64_t missed = (Now() - eval_ts) / iv - 1;
    if (missed < 0) missed = 0;
    eval_ts += (missed + 1) * iv;
    Eval(eval_ts);
    if (restore) {
      RestoreForState(Now());
      restore = false;
    }
  }
}

void Group::Start() {
  std::lock_guard<std::mutex> l(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void Group::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace gpumon::rules
