// StorageHealth: whether the TSDB can currently write, and how many samples
// it could not store, by cause. The head keeps one; the server reads it for
// /-/ready and for its self-monitoring counters.
//
// Contract:
// - RecordWalWrite(status) is called after every WAL write a commit (or a
//   delete) attempts: a failure makes writable() false and keeps its
//   message as last_write_error(); the next successful write makes
//   writable() true again (the message stays, for diagnosis). Commits
//   without a WAL never change it.
// - CountFailures(cause, n) adds n samples to that cause's counter.
// - Every method is thread-safe; counters only go up.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"
#include "tsdb/append_error.h"

namespace gpumon::tsdb {

// Space on the filesystem holding `dir` (statvfs): bytes available to an
// unprivileged writer, and the filesystem's size. nullopt when it cannot be
// read.
struct FilesystemSpace {
  uint64_t available_bytes = 0;
  uint64_t size_bytes = 0;
};
std::optional<FilesystemSpace> SpaceOf(const std::string& dir);

class StorageHealth {
 public:
  void RecordWalWrite(const Status& status);
  void CountFailures(AppendFailure cause, uint64_t samples);

  bool writable() const { return writable_.load(std::memory_order_acquire); }
  std::string last_write_error() const;
  // WAL writes that failed since start.
  uint64_t wal_write_failures() const { return wal_failures_.load(std::memory_order_relaxed); }
  uint64_t failures(AppendFailure cause) const {
    return failures_[static_cast<size_t>(cause)].load(std::memory_order_relaxed);
  }

 private:
  std::atomic<bool> writable_{true};
  std::atomic<uint64_t> wal_failures_{0};
  std::array<std::atomic<uint64_t>, kAppendFailureCount> failures_{};
  mutable std::mutex mu_;
  std::string last_error_;  // under mu_
};

}  // namespace gpumon::tsdb
