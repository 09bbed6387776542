// QueueManager: delivers one remote_write endpoint's samples from its
// DiskQueue, with Prometheus remote-write 1.0 semantics.
//
// Contract:
// - Append puts committed samples on disk and wakes the sender; it never
//   waits for the network.
// - The sender reads chunks of up to shards * max_samples_per_send
//   samples, waiting at most batch_send_deadline for a chunk to fill.
//   Each sample gets the external labels (a series' own label wins) and
//   then write_relabel_configs; dropped series are counted. Samples are
//   sharded by series hash and each shard POSTs batches of at most
//   max_samples_per_send in order, so per-series order holds. The chunk is
//   acknowledged on disk once every shard is done with it; shards change
//   only between chunks (desired = backlog / max_samples_per_send, within
//   min_shards..max_shards, growing only while sends succeed).
// - A POST carries EncodeWriteRequest's body with Content-Encoding snappy,
//   Content-Type application/x-protobuf, User-Agent and
//   X-Prometheus-Remote-Write-Version 0.1.0, the configured headers, basic
//   auth or Authorization (files re-read per request), TLS settings, and
//   remote_timeout. 2xx: sent. 5xx, connection errors and (when
//   retry_on_http_429) 429: retried forever with exponential backoff
//   min_backoff..max_backoff, samples older than sample_age_limit dropped
//   between tries. Other statuses: the batch is dropped and counted.
// - queue_config.capacity plays no part: the disk queue is the buffer.
// - Stop ends sending promptly (interrupting a backoff or waiting for an
//   in-flight request at most remote_timeout); unacknowledged data stays
//   on disk and is sent after the next start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "remote/queue/disk_queue.h"
#include "scrape/config.h"

namespace gpumon::remote {

// Self-monitoring counters of one endpoint (counters are since start).
struct QueueStats {
  std::string name;
  std::string url;
  uint64_t samples_sent = 0;     // accepted by the receiver (2xx)
  uint64_t samples_failed = 0;   // rejected for good (4xx): dropped
  uint64_t samples_retried = 0;  // sends repeated after a recoverable error
  uint64_t samples_dropped_relabel = 0;
  uint64_t samples_dropped_size = 0;        // queue over its disk size bound
  uint64_t samples_dropped_age = 0;         // older than sample_age_limit
  uint64_t samples_dropped_disk_error = 0;  // could not be written to disk
  uint64_t samples_pending = 0;             // on disk, not yet delivered
  uint64_t batches_sent = 0;
  uint64_t bytes_sent = 0;  // compressed request bodies
  uint64_t disk_bytes = 0;
  uint64_t corrupt_segments = 0;
  int64_t highest_sent_timestamp_ms = 0;
  int64_t highest_appended_timestamp_ms = 0;
  int shards = 0;
  int min_shards = 0;
  int max_shards = 0;
  std::string last_error;  // most recent failed send, "" when none
};

struct QueueManagerOptions {
  DiskQueueOptions disk;  // sample_age_limit_ms comes from the config
  std::string user_agent = "gpumon/" GPUMON_VERSION;
};

class QueueManager {
 public:
  // Opens (recovering) the disk queue in `dir` and starts the sender.
  // `config.write_relabel_configs` must be compiled.
  static Result<std::unique_ptr<QueueManager>> Start(const scrape::RemoteWriteConfig& config,
                                                     Labels external_labels, const std::string& dir,
                                                     QueueManagerOptions options = {});
  ~QueueManager();
  QueueManager(const QueueManager&) = delete;
  QueueManager& operator=(const QueueManager&) = delete;

  Status Append(std::span<const QueuedSample> samples);
  void Stop();
  QueueStats Stats() const;
  const scrape::RemoteWriteConfig& config() const { return config_; }

 private:
  class Shard;
  QueueManager(scrape::RemoteWriteConfig config, Labels external_labels,
               QueueManagerOptions options);
  void Run();
  // Waits until stopping or `deadline`; true when stopping.
  bool SleepUntil(std::chrono::steady_clock::time_point deadline);
  std::optional<Labels> Transform(const Labels& labels);
  // Sends one chunk over `shards` shards; false when stopped midway.
  bool SendChunk(std::vector<QueuedSample>& samples, int shards, bool* had_retries);

  const scrape::RemoteWriteConfig config_;
  const Labels external_labels_;
  const QueueManagerOptions options_;
  std::unique_ptr<DiskQueue> disk_;
  // Sized max_shards up front; slots [0, shard_slots_) are populated, so
  // Stop can reach them without locking the sender.
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<size_t> shard_slots_{0};
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t appends_ = 0;  // bumped by Append, to wake the sender

  // Relabel results per series, reset when it grows large.
  std::unordered_map<uint64_t, std::vector<std::pair<Labels, std::optional<Labels>>>> cache_;
  size_t cache_size_ = 0;

  std::atomic<int> shard_count_{1};
  std::atomic<uint64_t> samples_sent_{0}, samples_failed_{0}, samples_retried_{0},
      samples_dropped_relabel_{0}, samples_dropped_age_{0}, samples_dropped_disk_error_{0},
      batches_sent_{0}, bytes_sent_{0};
  std::atomic<int64_t> highest_sent_{0};
  mutable std::mutex error_mu_;
  std::string last_error_;
  friend class Shard;
};

}  // namespace gpumon::remote
