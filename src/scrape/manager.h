// Manager: runs the scrape loops of a configuration and keeps them in step
// with discovery and reloads.
//
// Contract:
// - ApplyConfig starts one scrape pool per job. Its targets come from all
//   of the job's discovery mechanisms (static_configs, file_sd_configs,
//   dns_sd_configs, http_sd_configs, consul_sd_configs,
//   kubernetes_sd_configs; see scrape/discovery/), merged, then
//   relabel_configs applied per target. Each target gets its own
//   ScrapeLoop.
// - Each mechanism refreshes on its own interval in the discovery thread
//   (network calls are made without the manager's lock). A failing refresh
//   keeps that mechanism's previous targets and the reason is logged.
//   Static and file mechanisms are read synchronously by ApplyConfig;
//   network ones are first refreshed right after it, asynchronously.
// - On a later ApplyConfig, jobs whose configuration is unchanged keep
//   their loops and discoverers; changed jobs restart theirs; removed jobs
//   and targets stop and get stale markers.
// - target_limit: a pool with more targets than the limit scrapes none
//   (as Prometheus); the reason is logged.
// - Targets() is a consistent snapshot for /api/v1/targets;
//   DroppedTargets() lists the targets relabeling dropped (with their
//   discovered labels) and DroppedTargetCounts() their number per pool
//   (every pool, 0 included). Stop() stops every loop (with stale markers)
//   and discovery. Thread-safe.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scrape/appender.h"
#include "scrape/config.h"
#include "scrape/discovery/discoverer.h"
#include "scrape/http_fetch.h"
#include "scrape/scrape_loop.h"
#include "scrape/target_metadata.h"

namespace gpumon::scrape {

struct TargetSnapshot {
  Labels labels;
  Labels discovered_labels;
  std::string scrape_pool;
  std::string scrape_url;
  std::string last_error;
  int64_t last_scrape_ms = 0;  // 0: never scraped
  double last_scrape_duration_s = 0;
  Health health = Health::kUnknown;
  int64_t scrape_interval_ms = 0;
  int64_t scrape_timeout_ms = 0;
  // Since the loop started, for self-monitoring.
  uint64_t scrapes_total = 0;
  uint64_t scrape_failures_total = 0;
  uint64_t samples_appended_total = 0;
  uint64_t sample_limit_exceeded_total = 0;
};

// The snapshot of one running loop.
TargetSnapshot SnapshotOf(const ScrapeLoop& loop);

// A target that relabeling dropped.
struct DroppedTargetSnapshot {
  Labels discovered_labels;
  std::string scrape_pool;
};

class Manager {
 public:
  // A null fetcher scrapes over HTTP(S) with each job's client settings
  // (ScrapeConfig::http); tests pass their own. `discovery` holds settings
  // that are not in the configuration file (tests' DNS server).
  explicit Manager(AppenderFactory appender, Fetcher fetcher = nullptr,
                   discovery::Options discovery = {});
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // The config must have been validated (ParseConfig). Never fails today.
  Status ApplyConfig(const Config& config);
  void Stop();

  std::vector<TargetSnapshot> Targets() const;
  // Metric metadata (TYPE, HELP, UNIT) of every running target.
  std::vector<TargetMetadata> Metadata() const;
  std::vector<DroppedTargetSnapshot> DroppedTargets() const;
  std::map<std::string, size_t> DroppedTargetCounts() const;
  // Pool name → number of running loops.
  std::map<std::string, size_t> PoolSizes() const;

 private:
  struct Source {
    std::shared_ptr<discovery::Discoverer> discoverer;
    std::vector<TargetGroup> groups;  // from the last successful refresh
    int64_t next_refresh_ms = 0;
  };
  struct Pool {
    ScrapeConfig config;
    uint64_t generation = 0;  // tells a replaced pool from its successor
    std::vector<Source> sources;
    std::map<uint64_t, std::unique_ptr<ScrapeLoop>> loops;
    std::vector<DroppedTargetSnapshot> dropped;
  };
  // Rebuilds the pool's targets from its sources' groups and starts/stops
  // loops. Returns loops to stop (outside the lock).
  std::vector<std::unique_ptr<ScrapeLoop>> SyncLocked(Pool& pool);
  // Refreshes the due sources (all network calls unlocked) and syncs the
  // pools that changed. Called with `lock` held; returns with it held.
  void RefreshDue(std::unique_lock<std::mutex>& lock);
  void DiscoveryLoop();

  AppenderFactory appender_;
  uint64_t offset_seed_ = 0;  // from the host name and external labels
  Fetcher fetcher_;
  discovery::Options discovery_options_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Pool>> pools_;
  uint64_t next_generation_ = 1;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread discovery_;
};

}  // namespace gpumon::scrape
