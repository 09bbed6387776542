// RuleManager: loads rule files into groups, runs them, and reloads them.
//
// Contract (Prometheus rules/manager.go):
// - Update(interval, files, external_labels) expands glob patterns in
//   `files` (a pattern matching nothing is skipped, as Prometheus does),
//   loads and validates every file, and only when all are valid replaces
//   the running groups: an unchanged group (same file, name, options and
//   rules) keeps running untouched; a changed group takes over the alert
//   state and series of its rules that still exist (matched by name and
//   labels); series of removed rules and groups are marked stale. On any
//   error the previous groups keep running and the error (naming file,
//   line and field) is returned. `interval` is the evaluation interval of
//   groups that set none.
// - Alert 'for' state is restored from storage only for the groups of the
//   first successful Update (a process start), as in Prometheus.
// - Groups run only between Start() and Stop(); Update may be called
//   before Start. Stop() waits for running evaluations to finish.
// - Groups() is a snapshot sorted by file then name; the groups stay
//   valid while the caller holds them (but not past the manager).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "promql/engine.h"
#include "rules/alert.h"
#include "rules/group.h"
#include "scrape/appender.h"

namespace gpumon::rules {

struct RuleManagerOptions {
  promql::Engine* engine = nullptr;  // must outlive the manager
  promql::Queryable queryable;       // reads the TSDB
  scrape::AppenderFactory appender;  // writes rule results into the TSDB
  NotifyFunc notify;                 // alerts to send; may be empty
  std::string external_url;          // for generator URLs and $externalURL
  // Prometheus's global rule_query_offset; a group's query_offset wins.
  int64_t query_offset_ms = 0;
  int64_t resend_delay_ms = 60 * 1000;
  int64_t outage_tolerance_ms = 3600 * 1000;
  int64_t for_grace_period_ms = 10 * 60 * 1000;
  std::function<int64_t()> now_ms;  // empty: system clock
};

class RuleManager {
 public:
  explicit RuleManager(RuleManagerOptions opts);
  ~RuleManager();
  RuleManager(const RuleManager&) = delete;
  RuleManager& operator=(const RuleManager&) = delete;

  Status Update(int64_t interval_ms, std::vector<std::string> files, Labels external_labels);
  void Start();
  void Stop();

  std::vector<std::shared_ptr<Group>> Groups() const;
  const std::string& external_url() const { return opts_.external_url; }

 private:
  int64_t Now() const;

  RuleManagerOptions opts_;
  GroupDeps deps_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Group>> groups_;
  bool restored_ = false;  // a successful Update happened
  bool running_ = false;
};

// Builds the groups of one parsed rule file (for tests and tools).
struct RuleFileSpec;
Result<std::vector<std::shared_ptr<Group>>> BuildGroups(const RuleFileSpec& file,
                                                        int64_t default_interval_ms,
                                                        const Labels& external_labels,
                                                        const std::string& external_url,
                                                        bool should_restore, const GroupDeps* deps,
                                                        int64_t default_query_offset_ms = 0);

}  // namespace gpumon::rules
