// DB: the embedded time-series database — the head (in memory, WAL-backed)
// plus persistent blocks in one data directory, with background head
// persistence, compaction, downsampling and retention.
//
// Layout of the data directory (docs/formats/README.md):
//   <dir>/lock          exclusive lock (one DB per directory)
//   <dir>/wal/          write-ahead log segments and checkpoints
//   <dir>/<ULID>/       persistent blocks (raw and downsampled tiers)
//
// Contract:
// - Open replays the WAL into the head (a checkpoint first, then later
//   segments), reporting progress through options.progress. A torn last
//   record is dropped. Corruption in the middle is reported (file, offset)
//   in the log and repaired by truncating there: everything before it is
//   kept. Leftover temporary block directories are removed.
// - A sample is durable once Commit() returned OK (fsync per the WAL sync
//   policy; with kAlways it survives power loss, with kBatch kill -9).
// - Maintain() (called periodically by the background thread, or directly
//   in tests) persists head data older than 1.5 block ranges into a block,
//   truncates head and WAL, compacts blocks, builds downsampled tiers and
//   applies retention. Data stays queryable throughout.
// - NewQuerier(mint, maxt) sees the committed data of blocks and head merged;
//   NewQuerierAt(resolution) gives a downsampled tier.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "tsdb/block/block.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/storage.h"
#include "tsdb/wal/wal_reader.h"
#include "tsdb/wal/wal_writer.h"

namespace gpumon::tsdb::db {

struct DbOptions {
  int64_t block_range_ms = 2LL * 3600 * 1000;
  int samples_per_chunk = 120;
  int64_t ooo_window_ms = 0;
  // Raw data older than this (relative to the newest sample) is deleted;
  // 0 keeps it forever.
  int64_t retention_ms = 15LL * 24 * 3600 * 1000;
  // Total bytes of blocks (all tiers) beyond which the oldest blocks are
  // deleted; 0: no size limit.
  uint64_t retention_bytes = 0;
  // Downsampled tiers: resolutions and how long each is kept (0: forever).
  bool downsample = true;
  int64_t retention_5m_ms = 90LL * 24 * 3600 * 1000;
  int64_t retention_1h_ms = 365LL * 24 * 3600 * 1000;
  wal::WalOptions wal;
  // Run Maintain() in a background thread at this period; 0: never (tests).
  int64_t maintain_interval_ms = 60LL * 1000;
  std::function<void(const wal::ReplayProgress&)> replay_progress;
};

struct DbStats {
  head::HeadStats head;
  size_t blocks = 0;
  uint64_t block_bytes = 0;
  uint64_t block_samples = 0;
  uint64_t block_series = 0;  // summed over blocks (a series in two blocks counts twice)
  uint64_t wal_replayed_records = 0;
  std::string wal_repair;  // what replay repaired, if anything
};

class DB {
 public:
  static Result<std::unique_ptr<DB>> Open(const std::string& dir, DbOptions options = {});
  ~DB();
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;

  std::unique_ptr<head::HeadAppender> Appender() { return head_->Appender(); }
  // Raw data (resolution 0) of blocks and head in [mint, maxt].
  std::unique_ptr<tsdb::Querier> NewQuerier(int64_t mint, int64_t maxt) const;
  // A downsampled tier (resolution_ms > 0): only blocks of that resolution.
  std::unique_ptr<tsdb::Querier> NewQuerierAt(int64_t resolution_ms, int64_t mint,
                                              int64_t maxt) const;
  // Resolutions available (0 first, then ascending).
  std::vector<int64_t> Resolutions() const;

  Status Delete(std::span<const Matcher> matchers, int64_t mint, int64_t maxt);
  Status Maintain();
  // Persists the whole head into blocks (for import and orderly shutdown of
  // tools); the WAL is truncated accordingly.
  Status FlushHead();
  // Writes a copy of the database into `dir` (which must exist): every
  // persistent block hard-linked (<dir>/<ULID>/, no data copied), and with
  // with_head the head's samples as one more block. The live database is
  // not changed; the copy opens with DB::Open.
  Status Snapshot(const std::string& dir, bool with_head);
  DbStats Stats() const;
  // Head ranges written out as blocks, and maintenance runs that failed,
  // since the DB was opened (cheap; for self-monitoring).
  uint64_t HeadBlocksWritten() const {
    return head_blocks_written_.load(std::memory_order_relaxed);
  }
  uint64_t MaintainFailures() const { return maintain_failures_.load(std::memory_order_relaxed); }
  // What the WAL wrote since the DB was opened (zeros without a WAL).
  wal::WalWriterStats WalStats() const { return wal_ ? wal_->stats() : wal::WalWriterStats{}; }
  const std::string& dir() const { return dir_; }
  head::Head& head() { return *head_; }
  std::vector<std::shared_ptr<block::Block>> blocks() const;

 private:
  class WalAdapter;
  DB(std::string dir, DbOptions options);
  Status Replay();
  Status LoadBlocks();
  Status PersistHead(int64_t mint, int64_t maxt);
  Status TruncateWal(int64_t mint);
  Status CompactBlocks();
  Status DownsampleBlocks();
  Status ApplyRetention();
  void MaintainLoop();

  const std::string dir_;
  const DbOptions opts_;
  int lock_fd_ = -1;
  std::unique_ptr<head::Head> head_;
  std::unique_ptr<wal::WalWriter> wal_;
  std::unique_ptr<WalAdapter> wal_adapter_;
  DbStats replay_stats_;

  mutable std::shared_mutex blocks_mu_;
  std::vector<std::shared_ptr<block::Block>> blocks_;  // sorted by min_time
  std::atomic<uint64_t> head_blocks_written_{0};
  std::atomic<uint64_t> maintain_failures_{0};
  std::mutex maintain_mu_;

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool stop_ = false;
  std::thread loop_;
};

}  // namespace gpumon::tsdb::db
