// BacktestRecorder: the life of every alert over a replayed (backtest) run,
// one episode per alert instance, recorded from the alerting rules' state
// after each group evaluation.
//
// Contract:
// - Observe(group, ts) is called after group.Eval(ts); it reads the pending
//   and firing alerts of the group's alerting rules. An alert instance (rule
//   and labels) with no open episode opens one: pending_at = the alert's
//   active_at. When the alert is firing and the episode has no firing_at
//   yet, firing_at = the alert's fired_at and the annotations are taken as
//   they are then (at first firing). An open episode whose alert is neither
//   pending nor firing any more is closed with resolved_at = ts (for an
//   alert that never fired: the evaluation that dropped it) and handed to
//   the sink. An alert that comes back later opens a new episode.
// - Finish() hands the still-open episodes to the sink with no resolved_at
//   (still active at the end); afterwards the recorder is empty.
// - Order (deterministic for a deterministic run): episodes closed by one
//   Observe go out sorted by (rule, labels), where rules are numbered in the
//   order the recorder first saw them; Finish does the same. So the same
//   evaluations give the same sequence.
// - Rules are identified by address: they must outlive the recorder's use of
//   them (until Finish).
// - EpisodeJson renders one episode as a single JSON object (no newline):
//   {"alertname","labels":{...},"severity","pending_at_ms","firing_at_ms",
//   "resolved_at_ms","annotations":{...}}, times in Unix ms or null,
//   annotations {} when the alert never fired.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/labels.h"
#include "rules/alerting_rule.h"
#include "rules/group.h"

namespace gpumon::rules {

struct AlertEpisode {
  std::string alertname;
  Labels labels;  // the alert's labels (alertname and rule labels included)
  std::string severity;
  int64_t pending_at_ms = 0;
  std::optional<int64_t> firing_at_ms;
  std::optional<int64_t> resolved_at_ms;
  Labels annotations;  // as expanded at first firing
};

using EpisodeSink = std::function<void(const AlertEpisode&)>;

struct RecorderStats {
  uint64_t episodes = 0;  // handed to the sink
  uint64_t fired = 0;     // of those, episodes that fired
};

class BacktestRecorder {
 public:
  explicit BacktestRecorder(EpisodeSink sink) : sink_(std::move(sink)) {}

  void Observe(const Group& group, int64_t ts);
  // The same for one rule (Observe calls it for each alerting rule).
  void ObserveRule(const AlertingRule& rule, int64_t ts);
  void Finish();

  size_t open_episodes() const;
  const RecorderStats& stats() const { return stats_; }

 private:
  struct RuleState {
    uint32_t ordinal = 0;
    std::map<Labels, AlertEpisode> open;
  };
  void Emit(const AlertEpisode& e);

  EpisodeSink sink_;
  std::unordered_map<const AlertingRule*, RuleState> rules_;
  RecorderStats stats_;
};

std::string EpisodeJson(const AlertEpisode& e);

}  // namespace gpumon::rules
