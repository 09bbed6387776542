// The manager: independent per-target schedules, file discovery, reloads
// and the targets snapshot.
#include "scrape/manager.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "test_util.h"

namespace gpumon::scrape {
namespace {

using testing::Store;

// Fetcher: "slow:..." addresses hang past their timeout, others answer.
Result<FetchResult> FakeFetch(const std::string& url, int64_t timeout_ms, uint64_t) {
  if (url.find("slow") != std::string::npos) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return Status::Error("context deadline exceeded");
  }
  return FetchResult{"m 1\n", ""};
}

size_t CountUp(Store& store, const std::string& instance, double value) {
  size_t n = 0;
  for (const auto& r : store.All()) {
    if (r.labels.Get("__name__") == "up" && r.labels.Get("instance") == instance && r.v == value) {
      ++n;
    }
  }
  return n;
}

TEST(ManagerTest, SlowTargetDoesNotDelayOthers) {
  Store store;
  Manager m(store.Factory(), FakeFetch);
  auto cfg = ParseConfig(R"(scrape_configs:
  - job_name: j
    scrape_interval: 100ms
    scrape_timeout: 100ms
    static_configs:
      - targets: ['fast:1', 'slow:1', 'slow:2']
)",
                         "m.yml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  ASSERT_TRUE(m.ApplyConfig(*cfg).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  // ~10 slots in 1.1s; allow for scheduling noise on a loaded machine.
  EXPECT_GE(CountUp(store, "fast:1", 1), 7u);
  EXPECT_GE(CountUp(store, "slow:1", 0), 3u);
  auto targets = m.Targets();
  ASSERT_EQ(targets.size(), 3u);
  for (const auto& t : targets) {
    EXPECT_EQ(t.scrape_pool, "j");
    EXPECT_EQ(t.scrape_interval_ms, 100);
    if (t.labels.Get("instance") == "fast:1") {
      EXPECT_EQ(t.health, Health::kUp);
      EXPECT_EQ(t.scrape_url, "http://fast:1/metrics");
      EXPECT_EQ(t.discovered_labels.Get("__address__"), "fast:1");
    } else {
      EXPECT_EQ(t.health, Health::kDown);
      EXPECT_EQ(t.last_error, "context deadline exceeded");
    }
  }
  m.Stop();
}

TEST(ManagerTest, FileDiscoveryAndReload) {
  auto dir = std::filesystem::temp_directory_path() / ("scrape_mgr_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "t.json") << R"([{"targets": ["a:1", "b:1"], "labels": {"env": "x"}}])";
  std::ofstream(dir / "prom.yml") << R"(scrape_configs:
  - job_name: f
    scrape_interval: 100ms
    file_sd_configs:
      - files: ['*.json']
        refresh_interval: 100ms
)";
  auto cfg = LoadConfig((dir / "prom.yml").string());
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  Store store;
  Manager m(store.Factory(), FakeFetch);
  ASSERT_TRUE(m.ApplyConfig(*cfg).ok());
  EXPECT_EQ(m.PoolSizes()["f"], 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_GE(CountUp(store, "b:1", 1), 1u);

  // The file changes: b goes away and gets stale markers.
  std::ofstream(dir / "t.json.tmp") << R"([{"targets": ["a:1"], "labels": {"env": "x"}}])";
  std::filesystem::rename(dir / "t.json.tmp", dir / "t.json");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(m.PoolSizes()["f"], 1u);
  bool stale = false;
  for (const auto& r : store.All()) {
    if (r.labels.Get("instance") == "b:1" && r.labels.Get("__name__") == "m" &&
        tsdb::IsStaleNaN(r.v)) {
      stale = true;
    }
  }
  EXPECT_TRUE(stale);

  // A reload without the job stops it.
  auto empty = ParseConfig("scrape_configs: []\n", "e.yml");
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE(m.ApplyConfig(*empty).ok());
  EXPECT_TRUE(m.Targets().empty());
  m.Stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumon::scrape
