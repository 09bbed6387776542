// Manager: runs the scrape loops of a configuration and keeps them in step
// with discovery and reloads.
//
// Contract:
// - ApplyConfig starts one scrape pool per job: its targets come from
//   static_configs and file_sd_configs (files matched by the globs, re-read
//   at refresh_interval; a file that cannot be read keeps its previous
//   targets and the reason is logged). Each target gets its own ScrapeLoop.
// - On a later ApplyConfig, jobs whose configuration is unchanged keep
//   their loops; changed jobs restart theirs; removed jobs and targets stop
//   and get stale markers.
// - target_limit: a pool with more targets than the limit scrapes none
//   (as Prometheus); the reason is logged.
// - Targets() is a consistent snapshot for /api/v1/targets; Stop() stops
//   every loop (with stale markers) and discovery. Thread-safe.
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
#include "scrape/http_fetch.h"
#include "scrape/scrape_loop.h"

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
};

class Manager {
 public:
  // A null fetcher scrapes over HTTP(S) with each job's client settings
  // (ScrapeConfig::http); tests pass their own.
  explicit Manager(AppenderFactory appender, Fetcher fetcher = nullptr);
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // The config must have been validated (ParseConfig). Never fails today;
  // returns a Status for future discovery mechanisms.
  Status ApplyConfig(const Config& config);
  void Stop();

  std::vector<TargetSnapshot> Targets() const;
  // Pool name → number of running loops.
  std::map<std::string, size_t> PoolSizes() const;

 private:
  struct Pool {
    ScrapeConfig config;
    std::map<std::string, std::vector<TargetGroup>> file_groups;  // by file path
    int64_t next_refresh_ms = 0;
    std::map<uint64_t, std::unique_ptr<ScrapeLoop>> loops;
  };
  // Re-reads the pool's SD files (when due) and starts/stops loops.
  // Returns loops to stop (outside the lock).
  std::vector<std::unique_ptr<ScrapeLoop>> SyncLocked(Pool& pool, bool force);
  void DiscoveryLoop();

  AppenderFactory appender_;
  Fetcher fetcher_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Pool>> pools_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread discovery_;
};

}  // namespace gpumon::scrape
