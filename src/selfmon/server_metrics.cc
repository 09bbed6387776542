#include "selfmon/server_metrics.h"

#include <optional>

namespace gpumon::selfmon {
namespace {

// The latest reading of every source, refreshed once per render.
struct State {
  ServerStatsSources sources;
  std::optional<TsdbStatsView> tsdb;
  std::optional<ScrapeStatsView> scrape;
  std::optional<RulesStatsView> rules;
  std::optional<NotifierStatsView> notifier;
  std::optional<RemoteWriteStatsView> remote_write;
  std::optional<RemoteReceiverStatsView> remote_receiver;
};

// Adds families, keeping the first error.
class Builder {
 public:
  Builder(Registry& r, std::shared_ptr<State> state) : r_(r), state_(std::move(state)) {}

  // One unlabelled value: the field `f` of the view in `snap`.
  template <typename V>
  void Scalar(bool counter, const char* name, const char* help, std::optional<V> State::*snap,
              Opt V::*f) {
    auto st = state_;
    Add(counter, name, help, {}, [st, snap, f](std::vector<CallbackSample>* out) {
      const auto& view = (*st).*snap;
      if (view && ((*view).*f)) out->push_back({{}, *((*view).*f)});
    });
  }

  // One value per item of a list in the view, labelled by `label_of`.
  template <typename V, typename Item>
  void PerItem(bool counter, const char* name, const char* help, std::optional<V> State::*snap,
               std::vector<Item> V::*list, std::vector<std::string> label_names,
               std::vector<std::string> (*label_of)(const Item&), Opt Item::*f) {
    auto st = state_;
    Add(counter, name, help, std::move(label_names),
        [st, snap, list, label_of, f](std::vector<CallbackSample>* out) {
          const auto& view = (*st).*snap;
          if (!view) return;
          for (const Item& item : (*view).*list) {
            if (item.*f) out->push_back({label_of(item), *(item.*f)});
          }
        });
  }

  void Add(bool counter, const char* name, const char* help, std::vector<std::string> labels,
           CallbackFn fn) {
    if (!status_.ok()) return;
    status_ = counter ? r_.AddCounterFunc(name, help, std::move(labels), std::move(fn))
                      : r_.AddGaugeFunc(name, help, std::move(labels), std::move(fn));
  }

  template <typename T>
  T* Keep(Result<T*> r) {
    if (!r.ok()) {
      if (status_.ok()) status_ = r.status();
      return nullptr;
    }
    return *r;
  }

  const Status& status() const { return status_; }
  const std::shared_ptr<State>& state() const { return state_; }

 private:
  Registry& r_;
  std::shared_ptr<State> state_;
  Status status_;
};

constexpr bool kCounter = true;
constexpr bool kGauge = false;

void AddTsdb(Builder& b) {
  using V = TsdbStatsView;
  auto s = &State::tsdb;
  b.Scalar(kGauge, "gpumon_tsdb_head_series", "Series held in the in-memory head.", s,
           &V::head_series);
  b.Scalar(kCounter, "gpumon_tsdb_head_samples_appended_total",
           "Samples appended to the head since start-up.", s, &V::head_samples_appended_total);
  b.Scalar(kGauge, "gpumon_tsdb_head_samples", "Number of samples currently held in the head.", s,
           &V::head_samples);
  b.Scalar(kCounter, "gpumon_tsdb_head_out_of_order_samples_appended_total",
           "Out-of-order samples accepted into the head since start-up.", s,
           &V::head_out_of_order_samples_appended_total);
  b.Scalar(kGauge, "gpumon_tsdb_head_chunks", "Chunks held in the head, open and closed.", s,
           &V::head_chunks);
  b.Scalar(kGauge, "gpumon_tsdb_head_min_time",
           "Oldest sample time held in the head, in milliseconds since the epoch.", s,
           &V::head_min_time_ms);
  b.Scalar(kGauge, "gpumon_tsdb_head_max_time",
           "Newest sample time held in the head, in milliseconds since the epoch.", s,
           &V::head_max_time_ms);
  b.Scalar(kGauge, "gpumon_tsdb_head_memory_bytes",
           "Estimated heap memory used by the head block (series, chunks, index).", s,
           &V::head_memory_bytes);
  b.Scalar(kGauge, "gpumon_tsdb_blocks_loaded", "Persistent blocks open for queries.", s,
           &V::blocks_loaded);
  b.Scalar(kGauge, "gpumon_tsdb_storage_blocks_bytes", "Disk bytes used by all persistent blocks.",
           s, &V::storage_blocks_bytes);
  b.Scalar(kCounter, "gpumon_tsdb_compactions_total",
           "Head ranges written out as blocks since start-up.", s, &V::compactions_total);
  b.Scalar(kCounter, "gpumon_tsdb_compactions_failed_total",
           "Storage maintenance runs (head write-out, compaction, retention) that failed.", s,
           &V::compactions_failed_total);
  b.Scalar(kCounter, "gpumon_tsdb_wal_records_total",
           "Records written to the write-ahead log since start-up.", s, &V::wal_records_total);
  b.Scalar(kCounter, "gpumon_tsdb_wal_bytes_total",
           "Total bytes written to the WAL, record headers included.", s, &V::wal_bytes_total);
  b.Scalar(kCounter, "gpumon_tsdb_wal_fsyncs_total",
           "fsync calls on the write-ahead log since start-up.", s, &V::wal_fsyncs_total);
  b.Scalar(kCounter, "gpumon_tsdb_wal_segments_created_total",
           "Write-ahead log segments created since start-up.", s, &V::wal_segments_created_total);
  b.Scalar(kGauge, "gpumon_tsdb_wal_replayed_records",
           "Number of WAL records replayed at the last start-up.", s, &V::wal_replayed_records);
  b.Scalar(kGauge, "gpumon_tsdb_retention_limit_bytes",
           "Maximum number of bytes kept in blocks by size-based retention; 0: no limit.", s,
           &V::retention_limit_bytes);
}

void AddScrape(Builder& b) {
  using V = ScrapeStatsView;
  using P = ScrapePoolView;
  auto s = &State::scrape;
  auto pool = +[](const P& p) { return std::vector<std::string>{p.name}; };
  // Targets by health: one family, the health as a label.
  b.Add(kGauge, "gpumon_target_health", "Number of scrape targets by pool and last scrape health.",
        {"scrape_pool", "health"}, [st = b.state()](std::vector<CallbackSample>* out) {
          if (!st->scrape) return;
          for (const P& p : st->scrape->pools) {
            if (p.targets_up) out->push_back({{p.name, "up"}, *p.targets_up});
            if (p.targets_down) out->push_back({{p.name, "down"}, *p.targets_down});
            if (p.targets_unknown) out->push_back({{p.name, "unknown"}, *p.targets_unknown});
          }
        });
  b.PerItem(kCounter, "gpumon_target_scrapes_total", "Total number of scrapes by pool.", s,
            &V::pools, {"scrape_pool"}, pool, &P::scrapes_total);
  b.PerItem(kCounter, "gpumon_target_scrape_failures_total",
            "Total number of failed scrapes (up == 0) by pool.", s, &V::pools, {"scrape_pool"},
            pool, &P::scrape_failures_total);
  b.PerItem(kCounter, "gpumon_target_scrape_samples_appended_total",
            "Total number of scraped samples appended to storage by pool.", s, &V::pools,
            {"scrape_pool"}, pool, &P::samples_appended_total);
  b.PerItem(kCounter, "gpumon_target_scrapes_exceeded_sample_limit_total",
            "Total number of scrapes that hit the sample limit and were rejected.", s, &V::pools,
            {"scrape_pool"}, pool, &P::sample_limit_exceeded_total);
  b.Scalar(kGauge, "gpumon_config_last_reload_successful",
           "1 when the last configuration (re)load succeeded, else 0.", s,
           &V::last_reload_successful);
  b.Scalar(kGauge, "gpumon_config_last_reload_success_timestamp_seconds",
           "Unix time of the last successful configuration (re)load.", s,
           &V::last_reload_success_timestamp_seconds);
}

void AddRules(Builder& b) {
  using V = RulesStatsView;
  using G = RuleGroupView;
  auto s = &State::rules;
  auto group = +[](const G& g) { return std::vector<std::string>{g.name}; };
  const std::vector<std::string> l{"rule_group"};
  b.PerItem(kCounter, "gpumon_rule_evaluations_total", "Rule evaluations by rule group.", s,
            &V::groups, l, group, &G::evaluations_total);
  b.PerItem(kCounter, "gpumon_rule_evaluation_failures_total",
            "Rule evaluations that failed, by rule group.", s, &V::groups, l, group,
            &G::evaluation_failures_total);
  b.PerItem(kCounter, "gpumon_rule_group_iterations_missed_total",
            "Rule group evaluations skipped because the previous one overran its interval.", s,
            &V::groups, l, group, &G::iterations_missed_total);
  b.PerItem(kGauge, "gpumon_rule_group_last_duration_seconds",
            "How long the rule group's last evaluation took.", s, &V::groups, l, group,
            &G::last_duration_seconds);
  b.PerItem(kGauge, "gpumon_rule_group_last_evaluation_timestamp_seconds",
            "Unix time of the rule group's last evaluation.", s, &V::groups, l, group,
            &G::last_evaluation_timestamp_seconds);
  b.PerItem(kGauge, "gpumon_rule_group_interval_seconds", "Evaluation interval of the rule group.",
            s, &V::groups, l, group, &G::interval_seconds);
  b.PerItem(kGauge, "gpumon_rule_group_rules", "Rules in the rule group.", s, &V::groups, l, group,
            &G::rules);
}

void AddNotifier(Builder& b) {
  using V = NotifierStatsView;
  using A = AlertmanagerView;
  auto s = &State::notifier;
  auto am = +[](const A& a) { return std::vector<std::string>{a.url}; };
  const std::vector<std::string> l{"alertmanager"};
  b.PerItem(kCounter, "gpumon_notifications_sent_total", "Alerts delivered to an Alertmanager.", s,
            &V::alertmanagers, l, am, &A::sent_total);
  b.PerItem(kCounter, "gpumon_notifications_errors_total",
            "Alerts whose delivery to an Alertmanager failed.", s, &V::alertmanagers, l, am,
            &A::errors_total);
  b.PerItem(kGauge, "gpumon_notifications_latency_seconds",
            "How long the last delivery to an Alertmanager took.", s, &V::alertmanagers, l, am,
            &A::latency_seconds);
  b.Scalar(kCounter, "gpumon_notifications_dropped_total",
           "Alerts dropped before delivery (queue full or delivery failed everywhere).", s,
           &V::dropped_total);
  b.Scalar(kGauge, "gpumon_notifications_queue_length", "Alerts waiting in the notification queue.",
           s, &V::queue_length);
  b.Scalar(kGauge, "gpumon_notifications_queue_capacity", "Size limit of the notification queue.",
           s, &V::queue_capacity);
  b.Scalar(kGauge, "gpumon_notifications_alertmanagers_discovered",
           "Alertmanagers currently notified.", s, &V::alertmanagers_discovered);
}

void AddRemoteWrite(Builder& b) {
  using V = RemoteWriteStatsView;
  using Q = RemoteQueueView;
  auto s = &State::remote_write;
  auto q = +[](const Q& x) { return std::vector<std::string>{x.remote_name, x.url}; };
  const std::vector<std::string> l{"remote_name", "url"};
  b.PerItem(kCounter, "gpumon_remote_storage_samples_total",
            "Samples sent to the remote-write endpoint.", s, &V::queues, l, q, &Q::samples_total);
  b.PerItem(kCounter, "gpumon_remote_storage_samples_failed_total",
            "Samples given up on after a non-retryable remote-write error.", s, &V::queues, l, q,
            &Q::samples_failed_total);
  b.PerItem(kCounter, "gpumon_remote_storage_samples_retried_total",
            "Samples sent again after a retryable remote-write error.", s, &V::queues, l, q,
            &Q::samples_retried_total);
  b.PerItem(kCounter, "gpumon_remote_storage_samples_dropped_total",
            "Samples discarded before sending (relabeling, queue limits).", s, &V::queues, l, q,
            &Q::samples_dropped_total);
  b.PerItem(kGauge, "gpumon_remote_storage_samples_pending",
            "Samples queued for the remote-write endpoint, not yet sent.", s, &V::queues, l, q,
            &Q::samples_pending);
  b.PerItem(kCounter, "gpumon_remote_storage_bytes_total",
            "Compressed request bytes sent to the remote-write endpoint.", s, &V::queues, l, q,
            &Q::bytes_total);
  b.PerItem(kGauge, "gpumon_remote_storage_queue_highest_sent_timestamp_seconds",
            "Newest sample time the queue has delivered, in seconds since the epoch.", s,
            &V::queues, l, q, &Q::queue_highest_sent_timestamp_seconds);
  b.PerItem(kGauge, "gpumon_remote_storage_shards", "Parallel senders the queue runs.", s,
            &V::queues, l, q, &Q::shards);
  b.Scalar(kGauge, "gpumon_remote_storage_highest_timestamp_in_seconds",
           "Newest sample time handed to remote write, in seconds since the epoch.", s,
           &V::highest_timestamp_in_seconds);
}

void AddRemoteReceiver(Builder& b) {
  using V = RemoteReceiverStatsView;
  auto s = &State::remote_receiver;
  b.Scalar(kCounter, "gpumon_remote_write_receiver_requests_total",
           "Total number of remote-write requests received.", s, &V::requests_total);
  b.Scalar(kCounter, "gpumon_remote_write_receiver_request_errors_total",
           "Total number of remote-write requests answered with an error.", s,
           &V::request_errors_total);
  b.Scalar(kCounter, "gpumon_remote_write_receiver_samples_received_total",
           "Total number of samples received over remote write.", s, &V::samples_received_total);
  b.Scalar(kCounter, "gpumon_remote_write_receiver_samples_rejected_total",
           "Total number of received samples rejected by storage (out of order, invalid).", s,
           &V::samples_rejected_total);
}

}  // namespace

void ServerMetrics::RecordQuery(std::string_view type, double seconds, std::string_view error_type,
                                int64_t samples) {
  queries_->With({type}).Inc();
  if (!error_type.empty()) query_failures_->With({type, error_type}).Inc();
  if (samples > 0) query_samples_->With({type}).Inc(static_cast<double>(samples));
  query_duration_->With({type}).Observe(seconds);
}

void ServerMetrics::RecordHttpRequest(std::string_view handler, int code, double seconds) {
  http_requests_->With({handler, std::to_string(code)}).Inc();
  http_duration_->With({handler}).Observe(seconds);
}

Result<std::unique_ptr<ServerMetrics>> RegisterServerMetrics(Registry& registry,
                                                             ServerStatsSources sources) {
  auto state = std::make_shared<State>();
  state->sources = std::move(sources);
  const ServerStatsSources& src = state->sources;
  Builder b(registry, state);

  if (!src.version.empty() || !src.revision.empty()) {
    std::vector<std::string> values{src.version, src.revision};
    b.Add(kGauge, "gpumon_build_info",
          "gpumon's version and revision as labels; the value is always 1.",
          {"version", "revision"}, [values](std::vector<CallbackSample>* out) {
            out->push_back({values, 1});
          });
  }
  if (src.ready) {
    b.Add(kGauge, "gpumon_ready", "Whether the server is ready to serve queries (1) or not (0).",
          {}, [st = state](std::vector<CallbackSample>* out) {
            out->push_back({{}, st->sources.ready()});
          });
  }
  if (src.tsdb) AddTsdb(b);
  if (src.scrape) AddScrape(b);
  if (src.rules) {
    AddRules(b);
    auto st = state;
    b.Add(kGauge, "gpumon_rule_alerts", "Number of active alerts by state.", {"state"},
          [st](std::vector<CallbackSample>* out) {
            if (!st->rules) return;
            if (st->rules->alerts_firing) out->push_back({{"firing"}, *st->rules->alerts_firing});
            if (st->rules->alerts_pending) {
              out->push_back({{"pending"}, *st->rules->alerts_pending});
            }
          });
  }
  if (src.notifier) AddNotifier(b);
  if (src.remote_write) AddRemoteWrite(b);
  if (src.remote_receiver) AddRemoteReceiver(b);

  auto m = std::unique_ptr<ServerMetrics>(new ServerMetrics());
  const std::vector<double> query_buckets = ExponentialBuckets(0.001, 4, 9);  // 1ms .. ~65s
  m->queries_ = b.Keep(registry.AddCounter(
      "gpumon_engine_queries_total", "PromQL queries run, by type (instant or range).", {"type"}));
  m->query_failures_ = b.Keep(registry.AddCounter(
      "gpumon_engine_query_failures_total", "PromQL queries that failed, by type and error type.",
      {"type", "error_type"}));
  m->query_samples_ =
      b.Keep(registry.AddCounter("gpumon_engine_query_samples_total",
                                 "Samples read from storage by PromQL queries.", {"type"}));
  m->query_duration_ = b.Keep(registry.AddHistogram("gpumon_engine_query_duration_seconds",
                                                    "Time to evaluate a PromQL query, by type.",
                                                    {"type"}, query_buckets));
  m->http_requests_ = b.Keep(registry.AddCounter(
      "gpumon_http_requests_total", "HTTP requests a route answered, by handler and status code.",
      {"handler", "code"}));
  m->http_duration_ = b.Keep(registry.AddHistogram(
      "gpumon_http_request_duration_seconds", "Time to answer an HTTP request, by handler.",
      {"handler"}, {0.1, 0.2, 0.4, 1, 3, 8, 20, 60, 120}));
  if (!b.status().ok()) return b.status();

  registry.AddPreCollectHook([st = state] {
    const ServerStatsSources& s = st->sources;
    if (s.tsdb) st->tsdb = s.tsdb();
    if (s.scrape) st->scrape = s.scrape();
    if (s.rules) st->rules = s.rules();
    if (s.notifier) st->notifier = s.notifier();
    if (s.remote_write) st->remote_write = s.remote_write();
    if (s.remote_receiver) st->remote_receiver = s.remote_receiver();
  });
  return m;
}

}  // namespace gpumon::selfmon
