// AlertingRule: turns each sample of its query into an alert and tracks
// the alert through Prometheus's states.
//
// Contract (Prometheus rules/alerting.go):
// - Each result sample becomes an alert identified by its labels (without
//   __name__) overlaid with the expanded rule labels and alertname.
//   Labels and annotations are expanded for every result sample at every
//   evaluation. Template errors expand to "<error expanding template:
//   ...>", as in Prometheus.
// - A template's `query` runs as an instant query at the evaluation time
//   ts (not ts - query offset: Prometheus binds the expander to ts),
//   through ctx's engine and storage, after ctx.adapt_template_query; a
//   parse or evaluation error, or a string or matrix result ("rule result
//   is not a vector or scalar"), fails that template. externalURL and
//   pathPrefix read the rule's external URL unless
//   !ctx.template_external_url.
// - A new alert is pending from the evaluation that first saw it
//   (active_at); it fires once ts - active_at >= `for`. An alert missing
//   from the result: a pending one is dropped; a firing one keeps firing
//   while ts - keep_firing_since < keep_firing_for, otherwise it becomes
//   inactive (resolved_at = ts) and is kept 15 minutes for resending.
// - Eval returns the ALERTS{alertstate} and ALERTS_FOR_STATE (value:
//   active_at in Unix seconds) samples of every pending/firing alert, but
//   only once the rule is restored (see Group::RestoreForState).
// - More pending/firing alerts than the group limit: all alerts are
//   dropped and the evaluation fails.
// - AlertsToSend applies Prometheus's resend rules: firing alerts when
//   first firing and then every resend_delay; resolved alerts when
//   resolved (and then every resend_delay while retained).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rules/alert.h"
#include "rules/rule.h"
#include "rules/template.h"

namespace gpumon::rules {

enum class AlertState { kInactive, kPending, kFiring };
const char* AlertStateName(AlertState s);  // "inactive", "pending", "firing"

inline constexpr int64_t kResolvedRetentionMs = 15 * 60 * 1000;

struct ActiveAlert {
  AlertState state = AlertState::kPending;
  Labels labels;
  Labels annotations;
  double value = 0;
  int64_t active_at_ms = kNoTime;
  int64_t fired_at_ms = kNoTime;
  int64_t resolved_at_ms = kNoTime;
  int64_t last_sent_at_ms = kNoTime;
  int64_t valid_until_ms = kNoTime;
  int64_t keep_firing_since_ms = kNoTime;
};

class AlertingRule : public Rule {
 public:
  // `labels` and `annotations` are templates; they were validated when the
  // rule file loaded (an invalid one expands to an error text).
  AlertingRule(std::string name, promql::ExprPtr expr, int64_t hold_ms, int64_t keep_firing_for_ms,
               Labels labels, Labels annotations, Labels external_labels, std::string external_url,
               bool restored);

  bool alerting() const override { return true; }
  std::string Definition() const override;
  Result<promql::Vector> Eval(const EvalContext& ctx, int64_t ts) override;

  std::vector<Alert> AlertsToSend(int64_t ts, int64_t resend_delay_ms, int64_t interval_ms);

  int64_t hold_ms() const { return hold_ms_; }
  int64_t keep_firing_for_ms() const { return keep_firing_for_ms_; }
  const Labels& annotations() const { return annotations_; }
  // Pending and firing alerts, sorted by labels.
  std::vector<ActiveAlert> ActiveAlerts() const;
  // Also the resolved ones still retained.
  std::vector<ActiveAlert> AllAlerts() const;
  // The most severe state of any alert (inactive when none).
  AlertState State() const;

  bool restored() const { return restored_.load(); }
  void SetRestored(bool r) { restored_.store(r); }
  // Applies `fn` to every tracked alert under the rule's lock.
  void ForEachAlert(const std::function<void(ActiveAlert&)>& fn);
  // Takes over the alerts of the same rule from before a reload.
  void CopyAlertsFrom(const AlertingRule& other);
  // Matchers' labels for this rule's ALERTS_FOR_STATE series (__name__,
  // alertname, and the rule labels that are not templates).
  Labels ForStateSelector() const;

 private:
  std::string Expand(const Template* t, const std::string& raw, const TemplateData& d) const;

  int64_t hold_ms_;
  int64_t keep_firing_for_ms_;
  Labels annotations_;
  Labels external_labels_;
  std::string external_url_;
  std::vector<std::pair<std::string, Result<Template>>> label_templates_;
  std::vector<std::pair<std::string, Result<Template>>> annotation_templates_;
  std::atomic<bool> restored_;
  std::unordered_map<uint64_t, std::vector<ActiveAlert>> active_;  // by labels hash
};

// Alertmanager's generator URL for an expression: <external>/graph?g0.expr=...&g0.tab=1.
std::string GeneratorUrl(const std::string& external_url, const std::string& query);

}  // namespace gpumon::rules
