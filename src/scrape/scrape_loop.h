// ScrapeLoop: scrapes one target on its own schedule and appends what it
// gets, plus the report series, into storage.
//
// Contract:
// - Each scrape: fetch (bounded by the target's timeout), parse with the
//   exposition parser (format from Content-Type), label each sample with
//   the target's labels (honor_labels: scraped labels win; otherwise a
//   clashing scraped label is kept as exported_<name>), apply
//   metric_relabel_configs, stamp with the scrape start time (or the
//   sample's own with honor_timestamps), and append. sample_limit and
//   label_limit violations, parse errors and fetch errors fail the scrape:
//   its samples are discarded and up is 0.
// - Report series each scrape: up, scrape_duration_seconds,
//   scrape_samples_scraped, scrape_samples_post_metric_relabeling,
//   scrape_series_added, labeled with the target's labels.
// - Staleness: a series present in the previous successful scrape but not
//   in this one gets a stale marker (tsdb::StaleNaN) at this scrape's
//   time; a failed scrape marks all of the previous scrape's series stale;
//   Stop() marks everything stale, report series included.
// - One scrape is one appender commit. Samples the storage rejects (out of
//   order, duplicate) are skipped, not errors. A commit that fails (disk
//   full, WAL write error) fails the scrape: health down, last_error
//   "storing the scrape failed: <storage error>", a scrape failure counted
//   and no samples appended (the stored `up` cannot say so: it was not
//   stored either).
// - Start() runs scrapes on a dedicated thread at interval, offset within
//   the interval by a hash of the target (spreading load, stable across
//   restarts). A slow target only delays itself. Status() is thread-safe.
// - Metadata: the TYPE, HELP and UNIT lines of each scrape update a
//   per-target table by metric family name (a family with only HELP or
//   UNIT has type "unknown"; "untyped" reads as "unknown"), as
//   Prometheus's scrape cache does. A family absent from more than 10
//   scrapes in a row is forgotten after the next successful scrape.
//   Metadata() and GetMetadata() are thread-safe.
// - Without a fetcher, the loop fetches over HTTP with default client
//   settings, keeping its connection alive (HttpFetcherFor).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "exposition/metric_family.h"
#include "exposition/parser.h"
#include "scrape/appender.h"
#include "scrape/config.h"
#include "scrape/http_fetch.h"
#include "scrape/target.h"
#include "scrape/target_metadata.h"

namespace gpumon::scrape {

struct LoopOptions {
  bool honor_labels = false;
  bool honor_timestamps = true;
  uint64_t sample_limit = 0;  // 0: none
  uint64_t label_limit = 0;
  uint64_t label_name_length_limit = 0;
  uint64_t label_value_length_limit = 0;
  uint64_t body_size_limit = 0;
  std::vector<RelabelConfig> metric_relabel_configs;
  // Mixed into the target's offset within the interval, so HA replicas
  // (different external labels) and different hosts scrape a target at
  // different times, as Prometheus's offset seed does.
  uint64_t offset_seed = 0;

  static LoopOptions From(const ScrapeConfig& c);
};

enum class Health { kUnknown, kUp, kDown };
const char* HealthName(Health h);  // "unknown", "up", "down"

struct TargetStatus {
  Health health = Health::kUnknown;
  std::string last_error;
  int64_t last_scrape_ms = 0;  // wall clock of the last scrape's start; 0: never
  double last_duration_s = 0;
  uint64_t last_samples = 0;  // post-relabeling, appended
  // Since the loop started, for self-monitoring.
  uint64_t scrapes_total = 0;
  uint64_t scrape_failures_total = 0;
  uint64_t samples_appended_total = 0;
  uint64_t sample_limit_exceeded_total = 0;
};

class ScrapeLoop {
 public:
  using Clock = std::function<int64_t()>;  // wall clock, ms

  ScrapeLoop(Target target, LoopOptions options, AppenderFactory appender, Fetcher fetcher = {},
             Clock clock = {});
  ~ScrapeLoop();
  ScrapeLoop(const ScrapeLoop&) = delete;
  ScrapeLoop& operator=(const ScrapeLoop&) = delete;

  // Runs scrapes on a thread until Stop().
  void Start();
  // Stops the thread (waits for an in-flight scrape) and, when
  // `mark_stale`, appends stale markers for every series last written.
  void Stop(bool mark_stale = true);

  // One scrape at `now_ms`, on the caller's thread (tests, and the loop).
  void ScrapeOnce(int64_t now_ms);

  const Target& target() const { return target_; }
  TargetStatus Status() const;
  // Offset of this target's scrapes within the interval.
  int64_t OffsetMs() const;

  // The target's metric metadata, sorted by metric family name.
  std::vector<MetricMetadataEntry> Metadata() const;
  std::optional<MetricMetadataEntry> GetMetadata(std::string_view metric) const;

 private:
  // What the loop remembers of one scraped series, keyed by its identity
  // as exposed (name and labels before target labels and relabeling, which
  // are fixed for the loop): the storage ref, so a steady-state scrape
  // neither builds labels nor looks them up. Labels are kept only when the
  // appender has no refs, or the series was dropped by relabeling.
  struct CacheEntry {
    uint64_t ref = 0;
    Labels labels;
    uint64_t seen = 0;          // last successful scrape (iteration) that had it
    uint64_t last_attempt = 0;  // last scrape that parsed it (repeats within one)
    bool dropped = false;       // metric_relabel_configs dropped it
    uint32_t position = 0;      // index in the last successful scrape's order
  };
  // Keys are looked up by string_view, without building a std::string.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Cache = std::unordered_map<std::string, CacheEntry, KeyHash, std::equal_to<>>;
  struct Pending {
    CacheEntry* entry;
    int64_t t;
    double v;
  };
  // What the loop remembers of one metric family's metadata.
  struct MetaEntry {
    exposition::MetricType type = exposition::MetricType::kUnknown;
    std::string help;
    std::string unit;
    uint64_t seen = 0;  // last scrape (iteration) that had it
  };
  void UpdateMetadata(const exposition::Entry& e);
  void PruneMetadata();
  gpumon::Status Collect(const FetchResult& res, int64_t now_ms, std::vector<Pending>& out,
                         uint64_t& scraped);
  // Target labels, relabeling and limits for a series not in the cache.
  gpumon::Status NewEntry(std::vector<Label> scraped, CacheEntry& entry) const;
  Labels MutateSampleLabels(std::vector<Label> scraped) const;
  Labels ReportLabels(std::string_view name) const;
  // Appends through the entry's ref (or labels); keeps the ref it gets.
  bool AppendEntry(Appender& app, CacheEntry& e, int64_t t, double v);
  void AppendReport(Appender& app, int64_t t, const double (&values)[5]);
  void Run();

  const Target target_;
  const LoopOptions opts_;
  AppenderFactory make_appender_;
  Fetcher fetch_;
  Clock clock_;

  // Keyed by the series as exposed (Entry::series).
  Cache cache_;
  // The last successful scrape's series in order: targets expose them in
  // the same order every time, so the next one is usually a sequential
  // compare away, not a hash-table probe.
  std::vector<Cache::value_type*> order_;
  std::vector<Cache::value_type*> next_order_;
  bool needs_sweep_ = false;
  int scrapes_since_sweep_ = 0;
  // Scrape iterations: every scrape takes the next one; entries seen in
  // the previous one and missing now get stale markers.
  uint64_t iteration_ = 1;
  CacheEntry report_[5];
  int64_t last_t_ = 0;
  bool wrote_report_ = false;

  mutable std::mutex mu_;
  TargetStatus status_;

  // Written by the scraping thread, read by API threads.
  mutable std::mutex meta_mu_;
  std::map<std::string, MetaEntry, std::less<>> meta_;

  std::mutex run_mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpumon::scrape
