// StorageHealth: whether the TSDB can currently write, and how many samples
// it could not store, by cause. The head keeps one; the server reads it for
// /-/ready and for its self-monitoring counters.
//
// Contract:
// - RecordWalWrite(status) is called after every WAL write a commit (or a
//   delete) attempts: a failure makes writable() false at once and keeps its
//   message as last_write_error() (the message stays after recovery, for
//   diagnosis). Commits without a WAL never change it.
// - writable() becomes true again only once WAL writes have succeeded, with
//   no failure in between, for recovery_hold (default 10 s). On a nearly
//   full disk small records still fit while larger ones fail; without the
//   hold /-/ready would flap between 200 and 503 from one scrape to the next.
// - CountFailures(cause, n) adds n samples to that cause's counter.
// - Every method is thread-safe; counters only go up. The clock (steady,
//   nanoseconds) is injectable for tests.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
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
  using Clock = std::function<int64_t()>;  // steady time in nanoseconds
  static constexpr std::chrono::nanoseconds kDefaultRecoveryHold = std::chrono::seconds(10);

  explicit StorageHealth(Clock clock = SteadyNanos) : clock_(std::move(clock)) {}

  void RecordWalWrite(const Status& status);
  void CountFailures(AppendFailure cause, uint64_t samples);
  void set_recovery_hold(std::chrono::nanoseconds hold);

  bool writable() const;
  std::string last_write_error() const;
  // WAL writes that failed since start.
  uint64_t wal_write_failures() const { return wal_failures_.load(std::memory_order_relaxed); }
  uint64_t failures(AppendFailure cause) const {
    return failures_[static_cast<size_t>(cause)].load(std::memory_order_relaxed);
  }

 private:
  static int64_t SteadyNanos();

  Clock clock_;
  // True while no failure is unresolved: the fast path of every healthy
  // commit and of writable() reads only this.
  mutable std::atomic<bool> settled_{true};
  std::atomic<uint64_t> wal_failures_{0};
  std::array<std::atomic<uint64_t>, kAppendFailureCount> failures_{};
  mutable std::mutex mu_;
  std::string last_error_;           // under mu_
  int64_t hold_ns_ = kDefaultRecoveryHold.count();  // under mu_
  int64_t ok_since_ns_ = -1;         // under mu_: first success after the last failure; -1 none
};

}  // namespace gpumon::tsdb
