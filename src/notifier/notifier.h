// The notifier: delivers alerts to Alertmanagers (API v2) the way
// Prometheus's notifier manager does.
//
// Contract:
// - Send() labels each alert with the external labels it lacks, applies
//   alerting.alert_relabel_configs (dropped alerts are not sent) and
//   appends the rest to a bounded queue (Options::queue_capacity, 10000 by
//   default); when the queue is full the oldest alerts are dropped and
//   counted in Stats::dropped. Send() never blocks on the network.
// - One sender thread takes up to max_batch_size (64) alerts at a time and
//   POSTs them as JSON (alert_json.h) to every discovered Alertmanager of
//   every alerting.alertmanagers entry concurrently, each request bounded by
//   that entry's timeout; an entry's own alert_relabel_configs are applied
//   to its copy of the batch. The batch is done when at least one
//   Alertmanager accepted it (or when relabeling left nothing to send).
//   When none did - all failed, or none is discovered yet - the batch stays
//   at the head of the queue and is retried after an exponential backoff
//   (retry_min_backoff_ms doubling up to retry_max_backoff_ms) instead of
//   being lost; new alerts keep queuing behind it.
// - Stats: sent/errors count alerts per Alertmanager request (an alert
//   sent to two Alertmanagers counts twice, as in Prometheus's
//   prometheus_notifications_sent_total), dropped counts queue overflow
//   and alerts abandoned at shutdown; queue_length includes the batch in
//   flight, since a failed batch returns to the queue.
// - ApplyConfig() replaces the configuration, keeping the queue; discovery
//   (alertmanager_discovery.h) runs at once, and file_sd target files are
//   re-read when their size or mtime changes (checked every
//   discovery_check_ms). A configuration without alertmanagers makes Send()
//   a no-op and drops what was queued (counted in dropped).
// - Stop() (also run by the destructor) stops the sender; with
//   drain_on_shutdown it first tries once to send what is queued. After
//   Stop(), Send() discards its input.
// All methods are thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "notifier/alert.h"
#include "notifier/alertmanager_discovery.h"
#include "scrape/config.h"

namespace gpumon::notifier {

struct Options {
  size_t queue_capacity = 10000;  // Prometheus's --alertmanager.notification-queue-capacity
  size_t max_batch_size = 64;     // Prometheus's maxBatchSize
  int64_t retry_min_backoff_ms = 1000;
  int64_t retry_max_backoff_ms = 30 * 1000;
  int64_t discovery_check_ms = 5 * 1000;  // how often file_sd files are checked
  bool drain_on_shutdown = true;          // Prometheus 3's default
};

struct AlertmanagerStats {
  uint64_t sent = 0;    // alerts accepted by this Alertmanager
  uint64_t errors = 0;  // alerts in requests to it that failed
};

struct Stats {
  uint64_t sent = 0;
  uint64_t errors = 0;
  uint64_t dropped = 0;
  uint64_t queue_length = 0;
  uint64_t queue_capacity = 0;
  uint64_t alertmanagers_discovered = 0;
  std::map<std::string, AlertmanagerStats> by_alertmanager;  // keyed by URL
};

class Notifier {
 public:
  explicit Notifier(Options options = {});
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  Status ApplyConfig(const scrape::AlertingConfig& config, Labels external_labels);
  void Send(std::vector<Alert> alerts);
  void Stop();

  Stats stats() const;
  // URLs of the Alertmanagers alerts go to, and of those relabeling dropped.
  std::vector<std::string> ActiveAlertmanagers() const;
  std::vector<std::string> DroppedAlertmanagers() const;

 private:
  // One alerting.alertmanagers entry and what discovery found for it.
  struct AlertmanagerSet {
    scrape::AlertmanagerConfig config;
    std::string files_fingerprint;
    DiscoveredAlertmanagers discovered;
  };
  using Sets = std::vector<std::shared_ptr<const AlertmanagerSet>>;

  void Run();
  // Re-runs discovery where target files changed (or for all when forced).
  void Rediscover(bool force);
  // Sends one batch everywhere; true when it needs no retry. Called with
  // `lk` held; releases it during the requests and holds it again on return,
  // with the stats updated.
  bool SendBatch(const std::vector<Alert>& batch, std::unique_lock<std::mutex>& lk);
  void TrimQueueLocked();

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Alert> queue_;
  bool stopping_ = false;
  bool config_changed_ = false;
  size_t in_flight_ = 0;  // alerts of the batch being sent
  scrape::AlertingConfig config_;
  Labels external_labels_;
  Sets sets_;
  Stats stats_;
  std::thread thread_;
};

}  // namespace gpumon::notifier
