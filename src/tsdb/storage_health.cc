#include "tsdb/storage_health.h"

#include <sys/statvfs.h>

namespace gpumon::tsdb {

std::optional<FilesystemSpace> SpaceOf(const std::string& dir) {
  struct statvfs st;
  if (::statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return FilesystemSpace{static_cast<uint64_t>(st.f_bavail) * st.f_frsize,
                         static_cast<uint64_t>(st.f_blocks) * st.f_frsize};
}

int64_t StorageHealth::SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void StorageHealth::set_recovery_hold(std::chrono::nanoseconds hold) {
  std::lock_guard<std::mutex> lock(mu_);
  hold_ns_ = hold.count();
}

void StorageHealth::RecordWalWrite(const Status& status) {
  if (status.ok()) {
    // Fast path for every healthy commit: no lock.
    if (settled_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (ok_since_ns_ < 0) ok_since_ns_ = clock_();
    return;
  }
  wal_failures_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = status.message();
  ok_since_ns_ = -1;
  settled_.store(false, std::memory_order_release);
}

bool StorageHealth::writable() const {
  if (settled_.load(std::memory_order_acquire)) return true;
  std::lock_guard<std::mutex> lock(mu_);
  if (settled_.load(std::memory_order_relaxed)) return true;
  if (ok_since_ns_ < 0 || clock_() - ok_since_ns_ < hold_ns_) return false;
  settled_.store(true, std::memory_order_release);
  return true;
}

void StorageHealth::CountFailures(AppendFailure cause, uint64_t samples) {
  if (samples == 0) return;
  failures_[static_cast<size_t>(cause)].fetch_add(samples, std::memory_order_relaxed);
}

std::string StorageHealth::last_write_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace gpumon::tsdb
