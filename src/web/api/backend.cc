#include "web/api/backend.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>
#include <system_error>

namespace gpumon::web::api {

std::string NewSnapshotName(int64_t now_ms) {
  std::time_t secs = static_cast<std::time_t>(now_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char when[32];
  std::strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
  // 63 random bits, as Go's rand.Int63 gives Prometheus.
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t r = rng() >> 1;
  char name[64];
  std::snprintf(name, sizeof(name), "%s-%016" PRIx64, when, r);
  return name;
}

Status StorageBackend::DeleteSeries(std::span<const tsdb::Matcher> matchers, int64_t mint,
                                    int64_t maxt) {
  if (!admin_.delete_series) return ApiBackend::DeleteSeries(matchers, mint, maxt);
  return admin_.delete_series(matchers, mint, maxt);
}

Status StorageBackend::CleanTombstones() {
  if (!admin_.clean_tombstones) return ApiBackend::CleanTombstones();
  return admin_.clean_tombstones();
}

Result<std::string> StorageBackend::Snapshot(bool skip_head) {
  if (!admin_.snapshot || admin_.data_dir.empty()) return ApiBackend::Snapshot(skip_head);
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  std::string name = NewSnapshotName(now_ms);
  std::filesystem::path dir = std::filesystem::path(admin_.data_dir) / "snapshots" / name;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Error("create snapshot directory: " + dir.string() + ": " + ec.message());
  if (Status s = admin_.snapshot(dir.string(), !skip_head); !s.ok()) {
    std::filesystem::remove_all(dir, ec);  // no half-written snapshot stays behind
    return s.WithContext("create snapshot");
  }
  return name;
}

}  // namespace gpumon::web::api
