// The server's gpumon_* self-metrics: what `gpumon server` reports about
// its storage, queries, scraping, rules, notifications and remote write,
// named after Prometheus's prometheus_* metrics with the gpumon_ prefix.
//
// Contract:
// - Values owned by other modules come from ServerStatsSources: plain
//   callbacks returning the *View structs below, filled by the caller from
//   each module's Stats(). A source left empty registers nothing; a field
//   left unset (std::nullopt) is absent from the output rather than 0, so
//   nothing is reported that was not measured. Each set source is called
//   once per render (before the families are written).
// - Values produced by the HTTP layer (queries, API requests) are counted
//   by ServerMetrics' Record* methods: thread-safe, one short lock to find
//   the label tuple's series, then atomic updates.
// - Every family has HELP text; docs/formats/selfmon-metrics.md lists them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "selfmon/registry.h"

namespace gpumon::selfmon {

using Opt = std::optional<double>;

struct TsdbStatsView {
  Opt head_series = {};                  // gpumon_tsdb_head_series
  Opt head_samples_appended_total = {};  // gpumon_tsdb_head_samples_appended_total
  Opt head_samples = {};  // gpumon_tsdb_head_samples: samples held now (HeadStats::samples)
  Opt head_out_of_order_samples_appended_total = {};
  Opt head_chunks = {};                 // gpumon_tsdb_head_chunks
  Opt head_min_time_ms = {};            // gpumon_tsdb_head_min_time (ms, as Prometheus)
  Opt head_max_time_ms = {};            // gpumon_tsdb_head_max_time
  Opt head_memory_bytes = {};           // estimated heap use of the head
  Opt blocks_loaded = {};               // gpumon_tsdb_blocks_loaded
  Opt storage_blocks_bytes = {};        // gpumon_tsdb_storage_blocks_bytes
  Opt compactions_total = {};           // gpumon_tsdb_compactions_total
  Opt compactions_failed_total = {};    // gpumon_tsdb_compactions_failed_total
  Opt wal_records_total = {};           // gpumon_tsdb_wal_records_total
  Opt wal_bytes_total = {};             // gpumon_tsdb_wal_bytes_total
  Opt wal_fsyncs_total = {};            // gpumon_tsdb_wal_fsyncs_total
  Opt wal_segments_created_total = {};  // gpumon_tsdb_wal_segments_created_total
  Opt wal_replayed_records = {};        // gpumon_tsdb_wal_replayed_records (last start-up)
  Opt retention_limit_bytes = {};       // gpumon_tsdb_retention_limit_bytes
};

struct ScrapePoolView {
  std::string name = {};  // scrape_pool label (the job)
  Opt targets_up = {};    // gpumon_target_health{scrape_pool,health}
  Opt targets_down = {};
  Opt targets_unknown = {};
  Opt scrapes_total = {};                // gpumon_target_scrapes_total{scrape_pool}
  Opt scrape_failures_total = {};        // gpumon_target_scrape_failures_total{scrape_pool}
  Opt samples_appended_total = {};       // gpumon_target_scrape_samples_appended_total
  Opt sample_limit_exceeded_total = {};  // gpumon_target_scrapes_exceeded_sample_limit_total
};
struct ScrapeStatsView {
  std::vector<ScrapePoolView> pools = {};
  Opt last_reload_successful = {};  // gpumon_config_last_reload_successful (1/0)
  Opt last_reload_success_timestamp_seconds = {};
};

struct RuleGroupView {
  std::string name = {};               // rule_group label: "<file>;<group>" as Prometheus
  Opt evaluations_total = {};          // gpumon_rule_evaluations_total{rule_group}
  Opt evaluation_failures_total = {};  // gpumon_rule_evaluation_failures_total{rule_group}
  Opt iterations_missed_total = {};    // gpumon_rule_group_iterations_missed_total{rule_group}
  Opt last_duration_seconds = {};      // gpumon_rule_group_last_duration_seconds{rule_group}
  Opt last_evaluation_timestamp_seconds = {};
  Opt interval_seconds = {};  // gpumon_rule_group_interval_seconds{rule_group}
  Opt rules = {};             // gpumon_rule_group_rules{rule_group}
};
struct RulesStatsView {
  std::vector<RuleGroupView> groups = {};
  Opt alerts_firing = {};   // gpumon_rule_alerts{state="firing"}
  Opt alerts_pending = {};  // gpumon_rule_alerts{state="pending"}
};

struct AlertmanagerView {
  std::string url = {};      // alertmanager label
  Opt sent_total = {};       // gpumon_notifications_sent_total{alertmanager}
  Opt errors_total = {};     // gpumon_notifications_errors_total{alertmanager}
  Opt latency_seconds = {};  // gpumon_notifications_latency_seconds{alertmanager} (last send)
};
struct NotifierStatsView {
  std::vector<AlertmanagerView> alertmanagers = {};
  Opt dropped_total = {};             // gpumon_notifications_dropped_total
  Opt queue_length = {};              // gpumon_notifications_queue_length
  Opt queue_capacity = {};            // gpumon_notifications_queue_capacity
  Opt alertmanagers_discovered = {};  // gpumon_notifications_alertmanagers_discovered
};

struct RemoteQueueView {
  std::string remote_name = {};  // remote_name label
  std::string url = {};          // url label
  Opt samples_total = {};        // gpumon_remote_storage_samples_total
  Opt samples_failed_total = {};
  Opt samples_retried_total = {};
  Opt samples_dropped_total = {};
  Opt samples_pending = {};
  Opt bytes_total = {};                           // gpumon_remote_storage_bytes_total
  Opt queue_highest_sent_timestamp_seconds = {};  // per queue
  Opt shards = {};                                // gpumon_remote_storage_shards
};
struct RemoteWriteStatsView {
  std::vector<RemoteQueueView> queues = {};
  Opt highest_timestamp_in_seconds = {};  // gpumon_remote_storage_highest_timestamp_in_seconds
};

struct RemoteReceiverStatsView {
  Opt requests_total = {};          // gpumon_remote_write_receiver_requests_total
  Opt request_errors_total = {};    // gpumon_remote_write_receiver_request_errors_total
  Opt samples_received_total = {};  // gpumon_remote_write_receiver_samples_received_total
  Opt samples_rejected_total = {};  // ..._samples_rejected_total (out of order, invalid)
};

struct ServerStatsSources {
  std::string version;   // gpumon_build_info{version}; empty: not registered
  std::string revision;  // gpumon_build_info{revision}
  std::function<TsdbStatsView()> tsdb;
  std::function<ScrapeStatsView()> scrape;
  std::function<RulesStatsView()> rules;
  std::function<NotifierStatsView()> notifier;
  std::function<RemoteWriteStatsView()> remote_write;
  std::function<RemoteReceiverStatsView()> remote_receiver;
  std::function<double()> ready;  // gpumon_ready (1: serving queries)
};

// Instruments fed directly by the HTTP and query layers.
class ServerMetrics {
 public:
  // A PromQL query finished: `type` "instant" or "range"; `error_type` ""
  // when it succeeded, else the API's errorType ("timeout", "bad_data",
  // ...); `samples` loaded from storage.
  void RecordQuery(std::string_view type, double seconds, std::string_view error_type,
                   int64_t samples);
  // An HTTP API request finished: `handler` is the route ("/api/v1/query").
  void RecordHttpRequest(std::string_view handler, int code, double seconds);

 private:
  friend Result<std::unique_ptr<ServerMetrics>> RegisterServerMetrics(Registry&,
                                                                      ServerStatsSources);
  ServerMetrics() = default;
  CounterFamily* queries_ = nullptr;
  CounterFamily* query_failures_ = nullptr;
  CounterFamily* query_samples_ = nullptr;
  HistogramFamily* query_duration_ = nullptr;
  CounterFamily* http_requests_ = nullptr;
  HistogramFamily* http_duration_ = nullptr;
};

// Registers the gpumon_* families on `registry`; the returned object holds
// the direct instruments and must not outlive the registry.
Result<std::unique_ptr<ServerMetrics>> RegisterServerMetrics(Registry& registry,
                                                             ServerStatsSources sources);

}  // namespace gpumon::selfmon
