#include "tsdb/storage_health.h"

#include <sys/statvfs.h>

namespace gpumon::tsdb {

std::optional<FilesystemSpace> SpaceOf(const std::string& dir) {
  struct statvfs st;
  if (::statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return FilesystemSpace{static_cast<uint64_t>(st.f_bavail) * st.f_frsize,
                         static_cast<uint64_t>(st.f_blocks) * st.f_frsize};
}

void StorageHealth::RecordWalWrite(const Status& status) {
  if (status.ok()) {
    // Fast path for every healthy commit: no lock.
    if (!writable_.load(std::memory_order_relaxed))
      writable_.store(true, std::memory_order_release);
    return;
  }
  wal_failures_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = status.message();
  }
  writable_.store(false, std::memory_order_release);
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
