// WalWriter: appends records to a segmented, checksummed write-ahead log.
//
// Contract:
// - Log() appends its records in order, each as one frame; on return (OK)
//   they are in the kernel's page cache, so they survive the process being
//   killed (kill -9) under every policy. A crash at any moment leaves each
//   record whole or absent on replay, never half there.
// - Power loss is covered by the sync policy:
//     kAlways  Log() returns only after fdatasync covers its records
//              (concurrent callers share one fdatasync: group commit).
//     kBatch   a background thread fdatasyncs every sync_interval; a power
//              loss can lose up to that much acknowledged data.
//     kNever   no fsync except on Cut(), Sync() and Close().
// - Segments hold up to segment_size bytes; a record that would overflow
//   the current segment starts a new one (a single record larger than the
//   limit gets a segment of its own). A segment is fsynced before the next
//   one is started, under every policy.
// - Open() never appends after existing data: it truncates a torn tail of
//   the newest segment (see frame.h), then continues in a new segment
//   (reusing the newest one only if it holds no records). Run the reader
//   (and Repair on corruption) before opening the writer.
// - A failed write is rolled back (the file is truncated to where the call
//   began), and so is a segment that could not be started (the file is
//   removed; the current segment stays current): after ENOSPC, writes work
//   again once space is freed. If the rollback fails, or an fsync fails,
//   the writer is broken: every later call returns the same error.
// - Thread-safe.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "tsdb/wal/corruption.h"

namespace gpumon::tsdb::wal {

enum class SyncPolicy { kAlways, kBatch, kNever };

struct WalOptions {
  uint64_t segment_size = 128u << 20;
  SyncPolicy sync_policy = SyncPolicy::kBatch;
  std::chrono::milliseconds sync_interval{1000};  // kBatch only
};

struct WalWriterStats {
  uint64_t records = 0;
  uint64_t bytes = 0;  // frame bytes written (headers included)
  uint64_t syncs = 0;  // fdatasync calls
  uint64_t segments_created = 0;
};

class WalWriter {
 public:
  // `dir` is the WAL directory itself (the DB uses <data>/wal); it is
  // created if missing.
  static Result<std::unique_ptr<WalWriter>> Open(const std::string& dir, WalOptions options = {});
  ~WalWriter();  // Close(), ignoring errors
  WalWriter(const WalWriter&) = delete;
  WalWriter& operator=(const WalWriter&) = delete;

  Status Log(std::span<const std::span<const uint8_t>> records);
  Status Log(std::span<const uint8_t> record);

  // Makes everything logged so far durable (all policies).
  Status Sync();
  // Finishes the current segment (fsynced) and starts the next.
  Status Cut();
  // Deletes segments with index < `segment` (after a checkpoint or once the
  // head no longer needs them). The current segment is never deleted.
  Status TruncateBefore(int segment);
  // Stops the sync thread, syncs and closes; later calls fail.
  Status Close();

  int CurrentSegment() const;
  const std::string& dir() const { return dir_; }
  WalWriterStats stats() const;
  // The torn tail Open() truncated, if any.
  const std::optional<TornTail>& repaired_tail() const { return repaired_tail_; }

 private:
  struct File;

  WalWriter(std::string dir, WalOptions options);
  Status OpenNext(int index, bool reuse_existing);
  Status CutLocked();
  Status WriteLocked(uint64_t bytes);  // writes iov_ at the end of the segment
  Status SyncTo(uint64_t target);
  void SyncLoop();

  const std::string dir_;
  const WalOptions options_;
  std::optional<TornTail> repaired_tail_;

  mutable std::mutex mu_;  // guards everything below up to sync_mu_
  std::shared_ptr<File> file_;
  int segment_ = -1;
  uint64_t segment_bytes_ = 0;  // size of the current segment file
  uint64_t written_ = 0;        // bytes logged since Open (monotonic)
  Status broken_;
  bool closed_ = false;
  std::vector<struct iovec> iov_;
  WalWriterStats stats_;

  std::mutex sync_mu_;   // serializes fdatasync; taken before mu_
  uint64_t synced_ = 0;  // written_ value known durable

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool stop_ = false;
  std::thread sync_thread_;
};

}  // namespace gpumon::tsdb::wal
