// Group: a list of rules evaluated in order at a fixed interval.
//
// Contract (Prometheus rules/group.go):
// - Eval(ts) evaluates every rule at ts (the caller picks ts; the run loop
//   uses aligned times, tests call Eval directly). Per rule: the result
//   samples are appended through one appender and committed; series the
//   rule produced in its previous evaluation but not in this one get a
//   staleness marker at ts - query_offset; an evaluation or commit error
//   marks the rule unhealthy (an append error too, but the other samples
//   are kept). Alerting rules then hand their due alerts to `notify`, once
//   per group evaluation with all rules' alerts.
// - EvalTimestamp(now) is the latest evaluation time <= now on the group's
//   grid: multiples of the interval shifted by a hash of (file, name), so
//   groups spread over the interval and restarts keep their phase.
// - RestoreForState(ts) restores the active_at of alerts of rules with
//   `for` >= the grace period from their last ALERTS_FOR_STATE sample
//   within the outage tolerance, shifting it by the downtime (or to
//   ts + grace - for when less than the grace period would remain), then
//   marks every alerting rule restored (so it emits ALERTS series).
// - Start() runs the schedule on a thread: the first evaluation one
//   interval after the aligned start, restore after the second when the
//   group should restore, missed intervals skipped. Stop() joins it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/labels.h"
#include "promql/engine.h"
#include "rules/alert.h"
#include "rules/rule.h"
#include "scrape/appender.h"

namespace gpumon::rules {

// What every group shares, owned by the manager (or a test).
struct GroupDeps {
  promql::Engine* engine = nullptr;
  promql::Queryable queryable;
  scrape::AppenderFactory appender;
  NotifyFunc notify;  // may be empty
  int64_t resend_delay_ms = 60 * 1000;
  int64_t outage_tolerance_ms = 3600 * 1000;
  int64_t for_grace_period_ms = 10 * 60 * 1000;
  std::function<int64_t()> now_ms;  // wall clock; empty: system clock
  // Passed to the rules' EvalContext (rule.h): how alert templates' `query`
  // and externalURL/pathPrefix behave.
  std::function<Status(promql::Expr&)> adapt_template_query;
  bool template_external_url = true;
};

struct GroupOptions {
  std::string name;
  std::string file;
  int64_t interval_ms = 60 * 1000;
  int64_t limit = 0;
  int64_t query_offset_ms = 0;
  bool should_restore = false;
};

class Group {
 public:
  Group(GroupOptions opts, std::vector<std::unique_ptr<Rule>> rules, const GroupDeps* deps);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  const std::string& name() const { return opts_.name; }
  const std::string& file() const { return opts_.file; }
  int64_t interval_ms() const { return opts_.interval_ms; }
  int64_t limit() const { return opts_.limit; }
  int64_t query_offset_ms() const { return opts_.query_offset_ms; }
  const std::vector<std::unique_ptr<Rule>>& rules() const { return rules_; }

  void Eval(int64_t ts);
  void RestoreForState(int64_t ts);
  int64_t EvalTimestamp(int64_t now_ms) const;

  // Same name, file, options and rule definitions.
  bool Equals(const Group& other) const;
  // Takes over alert state and previous-series sets from the group this one
  // replaces; series of rules that no longer exist go stale at the next Eval.
  void CopyState(Group& from);
  // Stale markers for every series this group produced (the group is being
  // removed), appended at `ts`.
  void MarkAllStale(int64_t ts);

  // Wall-clock start and duration of the last evaluation.
  int64_t last_evaluation_ms() const;
  double evaluation_seconds() const;
  // Rule evaluations run and failed since the group was created (as
  // Prometheus's rule_evaluations_total / rule_evaluation_failures_total).
  uint64_t evaluations_total() const { return evaluations_.load(std::memory_order_relaxed); }
  uint64_t evaluation_failures_total() const { return failures_.load(std::memory_order_relaxed); }

  void Start();
  void Stop();

 private:
  int64_t Now() const;
  void Run();
  bool SleepUntil(int64_t t_ms);  // false when stopped
  void AppendStale(const std::vector<Labels>& series, int64_t ts);

  GroupOptions opts_;
  std::vector<std::unique_ptr<Rule>> rules_;
  const GroupDeps* deps_;
  std::mutex eval_mu_;  // one evaluation at a time
  std::atomic<uint64_t> evaluations_{0};
  std::atomic<uint64_t> failures_{0};
  std::vector<std::set<Labels>> previous_;  // per rule
  std::vector<Labels> stale_;               // to mark at the next Eval

  mutable std::mutex mu_;
  int64_t last_eval_ms_ = kNoTime;
  double eval_seconds_ = 0;
  bool stop_ = false;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace gpumon::rules
