// `gpumon server`: the all-in-one monitoring server. This file only wires
// modules together, in start-up order:
//   flags and configuration files (checked before anything starts) →
//   HTTP listener (bound early so a port conflict fails fast) → TSDB (WAL
//   replay) → PromQL engine and API → self-monitoring → scraping (from
//   --config) or in-process local collection → SIGHUP / POST /-/reload →
//   serve; and the reverse on shutdown, writing stale markers.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/http_request_recorder.h"
#include "cli/http_server_metrics.h"
#include "cli/local_collection.h"
#include "cli/runtime.h"
#include "cli/server_options.h"
#include "cli/shutdown_watchdog.h"
#include "common/log.h"
#include "notifier/alertmanagers_json.h"
#include "notifier/notifier.h"
#include "notifier/silence_source.h"
#include "promql/engine.h"
#include "remote/queue/write_storage.h"
#include "remote/receiver.h"
#include "rules/manager.h"
#include "rules/rules_api.h"
#include "scrape/config.h"
#include "scrape/manager.h"
#include "scrape/target_metadata.h"
#include "scrape/targets_json.h"
#include "selfmon/process_metrics.h"
#include "selfmon/registry.h"
#include "selfmon/server_metrics.h"
#include "tsdb/db/db.h"
#include "tsdb/dedup/dedup_querier.h"
#include "tsdb/storage_health.h"
#include "web/api/admin_api.h"
#include "web/api/backend.h"
#include "web/api/federate.h"
#include "web/api/http_api.h"
#include "web/api/response.h"
#include "web/http_server.h"
#include "web/metrics_endpoint.h"
#include "web/ui/embedded_assets.h"
#include "web/ui/silences_route.h"
#include "web/ui/ui_routes.h"
#include "web/web_config.h"

namespace gpumon::cli {
namespace {

// Prints WAL replay progress to stderr, one line per segment.
std::function<void(const tsdb::wal::ReplayProgress&)> ReplayPrinter() {
  auto last = std::make_shared<int>(-1);
  return [last](const tsdb::wal::ReplayProgress& p) {
    if (p.segment == *last) return;
    *last = p.segment;
    int pct = p.bytes_total > 0 ? static_cast<int>(p.bytes_done * 100 / p.bytes_total) : 100;
    // The segment being read; after the last one, segments_done == total.
    int current = std::min(p.segments_done + 1, p.segments_total);
    std::fprintf(stderr, "replaying WAL: segment %d/%d (%d%%)\n", current, p.segments_total, pct);
  };
}

std::string Cwd() {
  std::error_code ec;
  auto p = std::filesystem::current_path(ec);
  return ec ? "" : p.string();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The signal watcher stops the server (HttpServer::Stop() before Run()
// makes Run() return at once) unless the main thread is past it and the
// server may be gone.
struct StopControl {
  std::mutex mu;
  bool done = false;  // main thread will not (or no longer) run the server
  std::atomic<bool> requested{false};
};

// The API backend, timing every query for the self-monitoring metrics.
class InstrumentedBackend : public web::api::StorageBackend {
 public:
  InstrumentedBackend(promql::Queryable q, promql::Engine& engine, HeadFn head)
      : StorageBackend(std::move(q), engine, std::move(head)) {}
  void set_metrics(selfmon::ServerMetrics* m) { metrics_ = m; }
  // Where /api/v1/metadata's families come from (the scrape targets).
  void set_metadata(std::function<std::vector<scrape::TargetMetadata>()> f) {
    metadata_ = std::move(f);
  }

  std::map<std::string, std::vector<web::api::MetricMetadata>> Metadata(
      const std::string& metric) override {
    std::map<std::string, std::vector<web::api::MetricMetadata>> out;
    if (!metadata_) return out;
    auto merged = scrape::MergeMetricMetadata(metadata_(), {.metric = metric});
    if (!merged.ok()) return out;
    for (auto& [name, values] : *merged) {
      auto& list = out[name];
      for (auto& v : values) list.push_back({v.type, v.help, v.unit});
    }
    return out;
  }

  promql::QueryResult InstantQuery(const promql::Expr& expr, int64_t ts_ms,
                                   const promql::QueryOptions& o) override {
    return Timed("instant", [&] { return StorageBackend::InstantQuery(expr, ts_ms, o); });
  }
  promql::QueryResult RangeQuery(const promql::Expr& expr, int64_t start_ms, int64_t end_ms,
                                 int64_t step_ms, const promql::QueryOptions& o) override {
    return Timed("range",
                 [&] { return StorageBackend::RangeQuery(expr, start_ms, end_ms, step_ms, o); });
  }

 private:
  template <typename F>
  promql::QueryResult Timed(std::string_view type, F run) {
    const auto start = std::chrono::steady_clock::now();
    promql::QueryResult r = run();
    if (metrics_ != nullptr) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      metrics_->RecordQuery(type, s, r.ok() ? "" : promql::ErrorTypeName(r.error_type),
                            r.stats.samples_loaded);
    }
    return r;
  }
  selfmon::ServerMetrics* metrics_ = nullptr;
  std::function<std::vector<scrape::TargetMetadata>()> metadata_;
};

selfmon::TsdbStatsView TsdbView(tsdb::db::DB& db) {
  selfmon::TsdbStatsView v;
  const auto& head = db.head();
  v.head_series = static_cast<double>(head.NumSeries());
  v.head_samples_appended_total = static_cast<double>(head.SamplesAppended());
  if (head.NumSeries() > 0) {
    v.head_min_time_ms = static_cast<double>(head.MinTime());
    v.head_max_time_ms = static_cast<double>(head.MaxTime());
  }
  const auto blocks = db.blocks();
  uint64_t bytes = 0;
  for (const auto& b : blocks) bytes += b->SizeBytes();
  v.blocks_loaded = static_cast<double>(blocks.size());
  v.compactions_total = static_cast<double>(db.HeadBlocksWritten());
  const tsdb::wal::WalWriterStats wal = db.WalStats();
  v.wal_records_total = static_cast<double>(wal.records);
  v.wal_bytes_total = static_cast<double>(wal.bytes);
  v.wal_fsyncs_total = static_cast<double>(wal.syncs);
  v.wal_segments_created_total = static_cast<double>(wal.segments_created);
  v.compactions_failed_total = static_cast<double>(db.MaintainFailures());
  v.storage_blocks_bytes = static_cast<double>(bytes);
  return v;
}

// Storage health (tsdb/storage_health.h) on /metrics: samples the TSDB
// could not store, by cause; failed WAL writes; whether it can write (what
// /-/ready reports); and the space left where the data lives.
Status RegisterStorageHealthMetrics(selfmon::Registry& registry, tsdb::db::DB* db) {
  const tsdb::StorageHealth* health = &db->head().health();
  Status s = registry.AddCounterFunc(
      "gpumon_tsdb_append_failures_total",
      "Samples the TSDB refused or failed to store, by cause (out_of_order, duplicate, "
      "out_of_bounds, too_old, too_many_labels, invalid_labels, disk_full, io_error, other).",
      {"cause"}, [health](std::vector<selfmon::CallbackSample>* out) {
        for (size_t i = 0; i < tsdb::kAppendFailureCount; ++i) {
          auto cause = static_cast<tsdb::AppendFailure>(i);
          out->push_back({{std::string(tsdb::AppendFailureName(cause))},
                          static_cast<double>(health->failures(cause))});
        }
      });
  if (!s.ok()) return s;
  s = registry.AddCounterFunc(
      "gpumon_tsdb_wal_write_failures_total",
      "WAL writes that failed (the commit they belonged to was lost).",
      [health] { return static_cast<double>(health->wal_write_failures()); });
  if (!s.ok()) return s;
  s = registry.AddGaugeFunc("gpumon_tsdb_storage_writable",
                            "0 from a failed WAL write until writes have worked for 10 s, else 1.",
                            [health] { return health->writable() ? 1.0 : 0.0; });
  if (!s.ok()) return s;
  const std::string dir = db->dir();
  auto space = [dir](bool available) {
    return [dir, available](std::vector<selfmon::CallbackSample>* out) {
      if (auto sp = tsdb::SpaceOf(dir)) {
        out->push_back({{}, static_cast<double>(available ? sp->available_bytes : sp->size_bytes)});
      }
    };
  };
  s = registry.AddGaugeFunc("gpumon_tsdb_storage_available_bytes",
                            "Bytes available on the filesystem of the data directory.", {},
                            space(true));
  if (!s.ok()) return s;
  return registry.AddGaugeFunc("gpumon_tsdb_storage_size_bytes",
                               "Size of the filesystem of the data directory.", {}, space(false));
}

selfmon::ScrapeStatsView ScrapeView(const std::vector<scrape::TargetSnapshot>& targets,
                                    const std::atomic<int>& last_reload_ok,
                                    const std::atomic<int64_t>& last_reload_ms) {
  selfmon::ScrapeStatsView v;
  std::map<std::string, selfmon::ScrapePoolView> pools;
  for (const auto& t : targets) {
    auto& p = pools[t.scrape_pool];
    p.name = t.scrape_pool;
    auto& count = t.health == scrape::Health::kUp     ? p.targets_up
                  : t.health == scrape::Health::kDown ? p.targets_down
                                                      : p.targets_unknown;
    count = count.value_or(0) + 1;
    auto add = [](std::optional<double>& field, uint64_t n) {
      field = field.value_or(0) + static_cast<double>(n);
    };
    add(p.scrapes_total, t.scrapes_total);
    add(p.scrape_failures_total, t.scrape_failures_total);
    add(p.samples_appended_total, t.samples_appended_total);
    add(p.sample_limit_exceeded_total, t.sample_limit_exceeded_total);
  }
  for (auto& [name, p] : pools) v.pools.push_back(std::move(p));
  v.last_reload_successful = last_reload_ok.load();
  if (last_reload_ms.load() > 0) {
    v.last_reload_success_timestamp_seconds = static_cast<double>(last_reload_ms.load()) / 1000;
  }
  return v;
}

}  // namespace

int RunServer(const std::vector<std::string>& args) {
  auto flags = Flags::Parse(args, ServerFlagTable());
  if (!flags.ok()) {
    std::cerr << "gpumon server: " << flags.status().message() << "\n" << ServerUsage();
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << ServerUsage();
    return 0;
  }
  auto opts = ParseServerOptions(*flags);
  if (!opts.ok()) {
    std::cerr << "gpumon server: " << opts.status().message() << "\n";
    return 2;
  }
  const int64_t start_ms = NowMs();
  // Configuration files are checked before anything starts.
  std::optional<scrape::Config> config;
  if (opts->config_file) {
    auto loaded = scrape::LoadConfig(*opts->config_file);
    if (!loaded.ok()) {
      std::cerr << "gpumon server: " << loaded.status().message() << "\n";
      return 2;
    }
    config = std::move(*loaded);
  }
  std::optional<web::WebConfig> web_config;
  if (opts->web_config_file) {
    auto loaded = web::LoadWebConfig(*opts->web_config_file);
    if (!loaded.ok()) {
      std::cerr << "gpumon server: " << loaded.status().message() << "\n";
      return 2;
    }
    web_config = std::move(*loaded);
  }
  // SIGHUP (reload) is taken by a watcher thread; block it before any
  // thread starts so no other thread receives it.
  sigset_t hup;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hup, nullptr);

  // Reserve the port first so a conflict fails fast, before a long WAL
  // replay; the server listens once its routes are registered.
  // Handler threads: every query slot plus a few, so requests that are not
  // queries are not stuck behind queries waiting for a slot. Two event-loop
  // threads: TLS handshakes run there.
  web::HttpServerOptions http_opts{.threads = std::min(opts->engine.max_concurrent, 256) + 8,
                                   .io_threads = 2};
  // Per-route request counts and durations, once the metrics exist (below).
  auto http_requests = std::make_shared<HttpRequestRecorder>();
  http_opts.observe_request = [http_requests](std::string_view route, int status, double seconds) {
    http_requests->Record(route, status, seconds);
  };
  http_opts.limits.max_connections = static_cast<size_t>(opts->max_connections);
  http_opts.limits.body_timeout = std::chrono::milliseconds(opts->read_timeout_ms);
  http_opts.limits.idle_timeout = std::chrono::milliseconds(opts->read_timeout_ms);
  web::HttpServer server(http_opts, web_config);
  if (Status s = server.Reserve(opts->listen); !s.ok()) {
    std::cerr << "gpumon server: " << s.message() << "\n";
    return 1;
  }
  auto stop = std::make_shared<StopControl>();
  web::HttpServer* srv = &server;
  // Stopping the server cancels the queries in flight; the main thread then
  // stops the other components in order, within --web.shutdown-timeout.
  OnTerminationSignal([stop, srv, timeout = std::chrono::milliseconds(opts->shutdown_timeout_ms)] {
    ArmShutdownWatchdog(timeout, "--web.shutdown-timeout");
    stop->requested = true;
    std::lock_guard<std::mutex> lock(stop->mu);
    if (!stop->done) srv->Stop();
  });
  auto finish = [&stop] {
    std::lock_guard<std::mutex> lock(stop->mu);
    stop->done = true;
  };

  tsdb::db::DbOptions db_opts = opts->db;
  db_opts.replay_progress = ReplayPrinter();
  LogInfo("opening TSDB in " + opts->data);
  auto opened = tsdb::db::DB::Open(opts->data, db_opts);
  if (!opened.ok()) {
    finish();
    std::cerr << "gpumon server: cannot open " << opts->data << ": " << opened.status().message()
              << "\n";
    return 1;
  }
  std::unique_ptr<tsdb::db::DB> db = std::move(opened).value();
  if (stop->requested) {
    finish();
    return 0;
  }
  tsdb::db::DB* dbp = db.get();

  // Queries: the API reads through the replica dedup (a no-op without
  // --query.replica-label).
  promql::Engine engine(opts->engine);
  promql::Queryable api_queryable = [dbp, replicas = opts->replica_labels](int64_t mint,
                                                                           int64_t maxt) {
    auto q = dbp->NewQuerier(mint, maxt);
    return replicas.empty() ? std::move(q) : tsdb::dedup::NewDedupQuerier(std::move(q), replicas);
  };
  InstrumentedBackend backend(api_queryable, engine, [dbp] {
    const auto& head = dbp->head();
    web::api::HeadSummary h;
    h.num_series = head.NumSeries();
    h.chunk_count = static_cast<int64_t>(head.Stats(0).chunks);
    h.min_time = head.MinTime();
    h.max_time = head.MaxTime();
    return h;
  });
  web::api::AdminHooks hooks;
  hooks.delete_series = [dbp](std::span<const tsdb::Matcher> ms, int64_t a, int64_t b) {
    return dbp->Delete(ms, a, b);
  };
  hooks.snapshot = [dbp](const std::string& dir, bool with_head) {
    return dbp->Snapshot(dir, with_head);
  };
  hooks.data_dir = opts->data;
  backend.SetAdminHooks(std::move(hooks));

  // Everything committed (scrapes, rule results, local collection, remote
  // write received) also goes to the remote_write queues, when there are any.
  // Options built apart: g++ 12 -O3 misreads the defaulted temporary as
  // maybe-uninitialized.
  remote::WriteStorageOptions remote_options;
  remote::WriteStorage remote_storage(opts->data + "/remote-write", std::move(remote_options));
  if (config) {
    if (Status s = remote_storage.ApplyConfig(config->remote_write, config->global.external_labels);
        !s.ok()) {
      finish();
      std::cerr << "gpumon server: " << config->file << ": " << s.message() << "\n";
      return 2;
    }
  }
  scrape::AppenderFactory appender =
      remote_storage.Wrap(scrape::HeadAppenderFactory([dbp] { return dbp->Appender(); }));

  // Rules evaluate over the raw data (not the replica-deduplicated view)
  // and hand their alerts to the notifier.
  notifier::Notifier alert_notifier;
  // The web UI reads the same Alertmanagers' silences.
  notifier::SilenceSource silences;
  rules::RuleManagerOptions rule_opts;
  rule_opts.engine = &engine;
  rule_opts.queryable = [dbp](int64_t mint, int64_t maxt) { return dbp->NewQuerier(mint, maxt); };
  rule_opts.appender = appender;
  rule_opts.external_url = opts->external_url.empty()
                               ? "http://" + LocalHostname() + ":" + std::to_string(server.port())
                               : opts->external_url;
  rule_opts.notify = [&alert_notifier](const std::vector<rules::Alert>& alerts) {
    std::vector<notifier::Alert> out;
    out.reserve(alerts.size());
    for (const auto& a : alerts) {
      out.push_back({a.labels, a.annotations, a.starts_at_ms, a.ends_at_ms, a.generator_url});
    }
    alert_notifier.Send(std::move(out));
  };
  rules::RuleManager rule_manager(std::move(rule_opts));

  // Self-monitoring: gpumon_* and process_* metrics, served on /metrics
  // and collected into the TSDB like any target.
  selfmon::Registry registry;
  if (Status s = selfmon::RegisterProcessMetrics(registry); !s.ok()) {
    LogWarn("process metrics: " + s.message());
  }
  std::unique_ptr<scrape::Manager> scraper;
  std::unique_ptr<LocalCollection> local;
  std::atomic<int> last_reload_ok{1};
  std::atomic<int64_t> last_reload_ms{start_ms};
  auto all_targets = [&scraper, &local] {
    std::vector<scrape::TargetSnapshot> out;
    if (scraper) out = scraper->Targets();
    if (local) {
      for (auto& t : local->Targets()) out.push_back(std::move(t));
    }
    return out;
  };
  selfmon::ServerStatsSources sources;
  sources.version = GPUMON_VERSION;
  sources.revision = std::string("gpumon ") + GPUMON_VERSION;
  sources.tsdb = [dbp] { return TsdbView(*dbp); };
  sources.scrape = [&] { return ScrapeView(all_targets(), last_reload_ok, last_reload_ms); };
  remote::ReceiverStats receiver_stats;
  if (opts->enable_remote_write_receiver) {
    sources.remote_receiver = [&receiver_stats] {
      selfmon::RemoteReceiverStatsView v;
      v.requests_total = static_cast<double>(receiver_stats.requests.load());
      v.request_errors_total = static_cast<double>(receiver_stats.errors.load());
      v.samples_received_total = static_cast<double>(receiver_stats.samples.load());
      return v;
    };
  }
  sources.notifier = [&alert_notifier] {
    const notifier::Stats st = alert_notifier.stats();
    selfmon::NotifierStatsView v;
    for (const auto& [url, am] : st.by_alertmanager) {
      v.alertmanagers.push_back({.url = url,
                                 .sent_total = static_cast<double>(am.sent),
                                 .errors_total = static_cast<double>(am.errors)});
    }
    v.dropped_total = static_cast<double>(st.dropped);
    v.queue_length = static_cast<double>(st.queue_length);
    v.queue_capacity = static_cast<double>(st.queue_capacity);
    v.alertmanagers_discovered = static_cast<double>(st.alertmanagers_discovered);
    return v;
  };
  sources.remote_write = [&remote_storage] {
    selfmon::RemoteWriteStatsView v;
    double highest = 0;
    for (const auto& q : remote_storage.Stats()) {
      selfmon::RemoteQueueView qv;
      qv.remote_name = q.name;
      qv.url = q.url;
      qv.samples_total = static_cast<double>(q.samples_sent);
      qv.samples_failed_total = static_cast<double>(q.samples_failed);
      qv.samples_retried_total = static_cast<double>(q.samples_retried);
      qv.samples_dropped_total =
          static_cast<double>(q.samples_dropped_relabel + q.samples_dropped_size +
                              q.samples_dropped_age + q.samples_dropped_disk_error);
      qv.samples_pending = static_cast<double>(q.samples_pending);
      qv.shards = static_cast<double>(q.shards);
      qv.bytes_total = static_cast<double>(q.bytes_sent);
      qv.queue_highest_sent_timestamp_seconds =
          static_cast<double>(q.highest_sent_timestamp_ms) / 1000;
      highest = std::max(highest, static_cast<double>(q.highest_appended_timestamp_ms) / 1000);
      v.queues.push_back(std::move(qv));
    }
    if (!v.queues.empty()) v.highest_timestamp_in_seconds = highest;
    return v;
  };
  sources.rules = [&rule_manager] {
    selfmon::RulesStatsView v;
    for (const auto& g : rule_manager.Groups()) {
      selfmon::RuleGroupView gv;
      gv.name = g->file() + ";" + g->name();
      gv.interval_seconds = static_cast<double>(g->interval_ms()) / 1000;
      gv.rules = static_cast<double>(g->rules().size());
      gv.evaluations_total = static_cast<double>(g->evaluations_total());
      gv.evaluation_failures_total = static_cast<double>(g->evaluation_failures_total());
      gv.last_duration_seconds = g->evaluation_seconds();
      if (g->last_evaluation_ms() > 0) {
        gv.last_evaluation_timestamp_seconds = static_cast<double>(g->last_evaluation_ms()) / 1000;
      }
      v.groups.push_back(std::move(gv));
    }
    return v;
  };
  auto server_metrics = selfmon::RegisterServerMetrics(registry, sources);
  if (!server_metrics.ok()) {
    finish();
    std::cerr << "gpumon server: self-monitoring: " << server_metrics.status().message() << "\n";
    return 1;
  }
  backend.set_metrics(server_metrics->get());
  // Detached before server_metrics is destroyed: handlers may outlive Run().
  const HttpRequestRecorder::AttachedScope http_requests_recorded(*http_requests,
                                                                  server_metrics->get());
  if (Status s = RegisterStorageHealthMetrics(registry, dbp); !s.ok()) {
    LogWarn("storage health metrics: " + s.message());
  }
  if (Status s = RegisterHttpServerMetrics(registry, server); !s.ok()) {
    finish();
    std::cerr << "gpumon server: self-monitoring: " << s.message() << "\n";
    return 1;
  }
  auto render_self = [&registry](exposition::Format f, std::string* out) {
    registry.Render(f, out);
  };

  web::api::ServerInfo info;
  info.version = "3.0.0";
  info.revision = std::string("gpumon ") + GPUMON_VERSION;
  info.start_time_ms = start_ms;
  info.cwd = Cwd();
  info.hostname = LocalHostname();
  info.storage_retention = opts->effective_flags["retention"];
  info.flags = opts->effective_flags;
  if (config) info.config_yaml = config->yaml;

  // Scraping (--config) or the local node in-process; the server's own
  // metrics are collected either way.
  if (config) {
    scraper = std::make_unique<scrape::Manager>(appender);
    scraper->ApplyConfig(*config);
    LogInfo("scraping " + std::to_string(config->scrape_configs.size()) + " job(s) from " +
            config->file);
  }
  LocalCollectionOptions local_opts;
  local_opts.collect_node = !config.has_value();
  local_opts.simulate_spec = opts->simulate_spec;
  local_opts.seed = opts->seed;
  for (const auto& sc : opts->scenarios) {
    local_opts.scenarios += (local_opts.scenarios.empty() ? "" : ";") + sc;
  }
  local_opts.speed = opts->speed;
  local_opts.ground_truth_file = opts->ground_truth_file.value_or("");
  local_opts.nvml_library = opts->nvml_library;
  local_opts.self_metrics = render_self;
  local_opts.self_instance =
      opts->listen.front() == ':' ? "localhost" + opts->listen : opts->listen;
  local_opts.interval_ms = config ? config->global.scrape_interval_ms : opts->local_interval_ms;
  auto started = StartLocalCollection(local_opts, appender);
  if (!started.ok()) {
    finish();
    if (scraper) scraper->Stop();
    std::cerr << "gpumon server: " << started.status().message() << "\n";
    return 2;
  }
  local = std::move(*started);
  if (!config) LogInfo("local collection: " + local->description());

  // Rules and alerting of a configuration; a failure leaves the running
  // ones in place and is returned.
  // Rule files first: they are what a reload most often finds broken, and
  // nothing else has changed yet when they are refused.
  auto apply_rules = [&](const scrape::Config& c) -> Status {
    if (Status s = rule_manager.Update(c.global.evaluation_interval_ms, c.rule_files,
                                       c.global.external_labels);
        !s.ok()) {
      return s.WithContext("rule_files");
    }
    if (Status s = alert_notifier.ApplyConfig(c.alerting, c.global.external_labels); !s.ok()) {
      return s.WithContext("alerting");
    }
    silences.ApplyConfig(c.alerting);
    return Status::Ok();
  };
  if (config) {
    if (Status s = apply_rules(*config); !s.ok()) {
      finish();
      local->Stop();
      if (scraper) scraper->Stop();
      std::cerr << "gpumon server: " << s.message() << "\n";
      return 2;
    }
    if (!config->rule_files.empty()) {
      LogInfo("evaluating " + std::to_string(rule_manager.Groups().size()) + " rule group(s)");
    }
  } else if (!opts->rule_files.empty()) {
    // No configuration: the rule files of --rules at Prometheus's default
    // evaluation interval, with alerts kept to the API (no Alertmanager).
    constexpr int64_t kDefaultEvaluationIntervalMs = 60 * 1000;
    if (Status s = rule_manager.Update(kDefaultEvaluationIntervalMs, opts->rule_files, Labels());
        !s.ok()) {
      finish();
      local->Stop();
      if (scraper) scraper->Stop();
      std::cerr << "gpumon server: --rules: " << s.message() << "\n";
      return 2;
    }
    LogInfo("evaluating " + std::to_string(rule_manager.Groups().size()) + " rule group(s)");
  }
  rule_manager.Start();

  // Reload: SIGHUP, or POST /-/reload with --web.enable-lifecycle. A bad
  // file keeps the running configuration.
  std::mutex reload_mu;
  auto reload = [&]() -> Status {
    std::lock_guard<std::mutex> lock(reload_mu);
    if (!config) return Status::Error("no --config file to reload");
    auto refuse = [&](const Status& s) {
      last_reload_ok = 0;
      LogError("reloading " + config->file +
               " failed, keeping the running configuration: " + s.message());
      return s;
    };
    auto next = scrape::LoadConfig(config->file);
    if (!next.ok()) return refuse(next.status());
    if (Status s = apply_rules(*next); !s.ok()) return refuse(s);
    if (Status s = remote_storage.ApplyConfig(next->remote_write, next->global.external_labels);
        !s.ok()) {
      return refuse(s.WithContext("remote_write"));
    }
    scraper->ApplyConfig(*next);
    last_reload_ok = 1;
    last_reload_ms = NowMs();
    LogInfo("reloaded " + config->file);
    return Status::Ok();
  };
  std::atomic<bool> reload_stop{false};
  std::thread reloader([&reload_stop, &reload, hup] {
    while (!reload_stop) {
      timespec wait{0, 200 * 1000 * 1000};
      if (sigtimedwait(&hup, nullptr, &wait) != SIGHUP) continue;
      (void)reload();
    }
  });

  // Routes.
  web::api::QueryApi query_api(backend, NowMs);
  web::api::SeriesApi series_api(backend);
  web::api::StatusApi status_api(backend, info, NowMs);
  web::api::AdminApi admin_api(backend);
  web::api::Federate federate(backend, config ? config->global.external_labels : Labels(), NowMs,
                              opts->engine.lookback_delta_ms);
  web::api::RegisterApiRoutes(server.router(),
                              {.query = &query_api,
                               .series = &series_api,
                               .status = &status_api,
                               .ready = [dbp] { return dbp->head().health().writable(); },
                               .admin = &admin_api,
                               .enable_admin = opts->enable_admin_api,
                               .federate = &federate});
  rules::RegisterRuleRoutes(server.router(), rule_manager);
  auto all_metadata = [&scraper] {
    return scraper ? scraper->Metadata() : std::vector<scrape::TargetMetadata>{};
  };
  backend.set_metadata(all_metadata);
  server.router().Get("/api/v1/targets/metadata", [&all_metadata](const http::HttpRequest& req,
                                                                  http::HttpResponse& res) {
    auto json =
        scrape::TargetMetadataJson(all_metadata(), {.match_target = req.Param("match_target"),
                                                    .metric = req.Param("metric"),
                                                    .limit = req.Param("limit")});
    if (!json.ok()) {
      web::api::Respond(
          req, res,
          web::api::ApiResponse::Failure({web::api::ErrorKind::kBadData, json.status().message()}));
      return;
    }
    web::api::Respond(
        req, res, web::api::ApiResponse::Success([j = std::move(*json)](web::api::JsonWriter& w) {
          return w.Raw(j, rapidjson::kArrayType);
        }));
  });
  if (opts->enable_remote_write_receiver) {
    remote::RegisterRemoteWriteReceiver(server.router(), appender, &receiver_stats);
  }
  server.router().Get("/api/v1/alertmanagers", [&alert_notifier](const http::HttpRequest& req,
                                                                 http::HttpResponse& res) {
    web::api::Respond(req, res, web::api::ApiResponse::Success([&](web::api::JsonWriter& w) {
                        return notifier::WriteAlertmanagersJson(
                            w, alert_notifier.ActiveAlertmanagers(),
                            alert_notifier.DroppedAlertmanagers());
                      }));
  });
  server.router().Get(
      "/api/v1/targets", [&](const http::HttpRequest& req, http::HttpResponse& res) {
        std::vector<scrape::DroppedTargetSnapshot> dropped;
        std::map<std::string, size_t> counts;
        if (scraper) {
          dropped = scraper->DroppedTargets();
          counts = scraper->DroppedTargetCounts();
        }
        res.SetContent(scrape::TargetsJson(all_targets(), dropped, counts, req.Param("state"),
                                           req.Param("scrapePool")),
                       "application/json");
      });
  auto generation = std::make_shared<std::atomic<uint64_t>>(0);
  web::MetricsEndpoint self_endpoint([generation] { return ++*generation; }, render_self);
  server.router().Get("/metrics",
                      [&self_endpoint](const http::HttpRequest& req, http::HttpResponse& res) {
                        web::HttpServer::ServeMetrics(self_endpoint, req, res);
                      });
  if (opts->enable_lifecycle) {
    auto reload_route = [&reload](const http::HttpRequest&, http::HttpResponse& res) {
      Status s = reload();
      res.status = s.ok() ? 200 : 500;
      res.SetContent(s.ok() ? "" : "failed to reload config: " + s.message() + "\n", "text/plain");
    };
    server.router().Post("/-/reload", reload_route);
    server.router().Put("/-/reload", reload_route);
    server.router().Post("/-/quit", [](const http::HttpRequest&, http::HttpResponse& res) {
      res.SetContent("Requesting termination... Goodbye!\n", "text/plain");
      ::kill(::getpid(), SIGTERM);
    });
  }

  // The built-in web UI at / (behind the same TLS and basic auth as the
  // API: the server authorizes every route before routing).
  web::ui::RegisterSilencesRoute(server.router(), [&silences] { return silences.List(); });
  web::ui::UiRouteOptions ui_options;
  if (web_config) {
    for (const auto& header : web_config->headers) {
      ui_options.configured_headers.push_back(header.first);
    }
  }
  web::ui::RegisterUiRoutes(server.router(), web::ui::EmbeddedAssets(), std::move(ui_options));
  if (web::ui::EmbeddedAssets().empty()) {
    LogWarn("this binary was built without the web UI (-DGPUMON_UI=OFF); / says how to build it");
  }

  Status served = server.Bind();
  if (served.ok()) {
    LogInfo(std::string("serving the Prometheus API") +
            (web::ui::EmbeddedAssets().empty() ? "" : " and the web UI (/)") + " on " +
            opts->listen + " (port " + std::to_string(server.port()) +
            (server.tls() ? ", TLS" : "") + ")");
    served = server.Run();
  }
  finish();
  if (!served.ok()) LogError(served.message());
  reload_stop = true;
  reloader.join();
  // Rules stop first (their last alerts are sent), then stale markers for
  // everything scraped, then the storage closes.
  rule_manager.Stop();
  alert_notifier.Stop();
  if (scraper) scraper->Stop();
  local->Stop();
  remote_storage.Stop();  // unsent samples stay queued on disk
  LogInfo("server stopped");
  return served.ok() ? 0 : 1;
}

}  // namespace gpumon::cli
