#include "tsdb/db/db.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "tsdb/wal/segment.h"

namespace gpumon::tsdb::db {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kHour = 3600 * 1000;

class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("gpumon-db-test-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  DbOptions Options() {
    DbOptions o;
    o.maintain_interval_ms = 0;  // tests call Maintain() themselves
    o.retention_ms = 0;
    o.wal.sync_policy = wal::SyncPolicy::kNever;
    return o;
  }

  std::unique_ptr<DB> OpenDb(DbOptions o) {
    auto db = DB::Open(dir_, o);
    EXPECT_TRUE(db.ok()) << db.status().message();
    return db.ok() ? std::move(db).value() : nullptr;
  }

  static Labels Series(int i) {
    return Labels{{"__name__", "gpu_temperature_celsius"},
                  {"gpu", std::to_string(i % 8)},
                  {"hostname", "node-" + std::to_string(i / 8)}};
  }
  static double Value(int series, int64_t t) {
    if (t % (7 * 15000) == 0 && series == 3) return StaleNaN();
    return 30 + series + (t / 15000 % 17) * 0.5;
  }

  // Appends `series` series at 15 s from `from` to `to` (exclusive).
  static void Fill(DB& db, int series, int64_t from, int64_t to) {
    auto app = db.Appender();
    std::vector<uint64_t> refs(series, 0);
    for (int64_t t = from; t < to; t += 15000) {
      for (int i = 0; i < series; ++i) {
        auto r = app->Append(refs[i], Series(i), t, Value(i, t));
        ASSERT_TRUE(r.ok()) << r.status().message();
        refs[i] = *r;
      }
      if ((t / 15000) % 40 == 0) {
        ASSERT_TRUE(app->Commit().ok());
      }
    }
    ASSERT_TRUE(app->Commit().ok());
  }

  // Every sample in [mint, maxt] of every series, by series string.
  static std::map<std::string, std::vector<Sample>> ReadAll(const DB& db, int64_t mint,
                                                            int64_t maxt) {
    std::map<std::string, std::vector<Sample>> out;
    auto q = db.NewQuerier(mint, maxt);
    auto m = Matcher::Make(MatchType::kRegexMatch, "__name__", ".+").value();
    auto set = q->Select(std::span<const Matcher>(&m, 1));
    while (set->Next()) {
      auto& v = out[set->labels().ToString()];
      auto it = set->Iterator();
      while (it->Next()) v.push_back(it->At());
      EXPECT_TRUE(it->status().ok()) << it->status().message();
    }
    EXPECT_TRUE(set->status().ok());
    return out;
  }

  static void ExpectComplete(const std::map<std::string, std::vector<Sample>>& got, int series,
                             int64_t from, int64_t to) {
    ASSERT_EQ(got.size(), static_cast<size_t>(series));
    for (int i = 0; i < series; ++i) {
      auto it = got.find(Series(i).ToString());
      ASSERT_NE(it, got.end()) << Series(i).ToString();
      const auto& samples = it->second;
      ASSERT_EQ(samples.size(), static_cast<size_t>((to - from) / 15000)) << Series(i).ToString();
      for (size_t k = 0; k < samples.size(); ++k) {
        int64_t t = from + static_cast<int64_t>(k) * 15000;
        ASSERT_EQ(samples[k].t, t);
        ASSERT_EQ(std::bit_cast<uint64_t>(samples[k].v), std::bit_cast<uint64_t>(Value(i, t)))
            << Series(i).ToString() << " at " << t;
      }
    }
  }

  std::string dir_;
};

TEST_F(DbTest, CommittedSamplesSurviveReopen) {
  {
    auto db = OpenDb(Options());
    Fill(*db, 16, 0, kHour);
    ExpectComplete(ReadAll(*db, 0, kHour), 16, 0, kHour);
  }
  auto db = OpenDb(Options());
  ExpectComplete(ReadAll(*db, 0, kHour), 16, 0, kHour);
  EXPECT_GT(db->Stats().wal_replayed_records, 0u);
  // Appending continues after the replayed data; earlier times are rejected.
  Fill(*db, 16, kHour, kHour + 60000);
  auto app = db->Appender();
  EXPECT_FALSE(app->Append(0, Series(0), 0, 1).ok() && app->Commit().ok());
}

TEST_F(DbTest, OnlyOneProcessOpensADirectory) {
  auto db = OpenDb(Options());
  auto second = DB::Open(dir_, Options());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("lock"), std::string::npos);
}

TEST_F(DbTest, HeadIsPersistedIntoBlocksAndQueriesSpanBoth) {
  const int64_t end = 7 * kHour;
  {
    auto db = OpenDb(Options());
    Fill(*db, 24, 0, end);
    ASSERT_TRUE(db->Maintain().ok());
    EXPECT_GE(db->blocks().size(), 2u);
    EXPECT_LT(db->head().MinTime(), end);
    EXPECT_GE(db->head().MinTime(), 4 * kHour);
    ExpectComplete(ReadAll(*db, 0, end), 24, 0, end);
    // A range inside one block only.
    auto part = ReadAll(*db, kHour, 2 * kHour - 1);
    EXPECT_EQ(part.begin()->second.size(), static_cast<size_t>(kHour / 15000));
  }
  // The WAL was truncated to what the head still holds, and a restart
  // rebuilds the same view.
  auto db = OpenDb(Options());
  ExpectComplete(ReadAll(*db, 0, end), 24, 0, end);
  auto segs = wal::ListSegments(dir_ + "/wal");
  ASSERT_TRUE(segs.ok());
  EXPECT_LE(segs->size(), 3u);
}

TEST_F(DbTest, FlushHeadPersistsEverything) {
  auto db = OpenDb(Options());
  Fill(*db, 8, 0, 3 * kHour);
  ASSERT_TRUE(db->FlushHead().ok());
  EXPECT_EQ(db->head().NumSeries(), 0u);
  ExpectComplete(ReadAll(*db, 0, 3 * kHour), 8, 0, 3 * kHour);
}

TEST_F(DbTest, DeleteRemovesSeriesInBlocksAndHead) {
  const int64_t end = 6 * kHour;
  {
    auto db = OpenDb(Options());
    Fill(*db, 16, 0, end);
    ASSERT_TRUE(db->Maintain().ok());
    auto m = Matcher::Make(MatchType::kEqual, "gpu", "3").value();
    ASSERT_TRUE(db->Delete(std::span<const Matcher>(&m, 1), kMinTime, kMaxTime).ok());
    EXPECT_EQ(ReadAll(*db, 0, end).size(), 14u);
  }
  auto db = OpenDb(Options());
  auto all = ReadAll(*db, 0, end);
  EXPECT_EQ(all.size(), 14u);
  for (const auto& [name, samples] : all) EXPECT_EQ(name.find("gpu=\"3\""), std::string::npos);
}

TEST_F(DbTest, RetentionDeletesOldBlocks) {
  auto o = Options();
  o.retention_ms = 4 * kHour;
  auto db = OpenDb(o);
  Fill(*db, 8, 0, 12 * kHour);
  ASSERT_TRUE(db->Maintain().ok());
  for (const auto& b : db->blocks()) {
    EXPECT_GE(b->meta().max_time, 12 * kHour - 4 * kHour - 15000) << b->dir();
  }
  auto all = ReadAll(*db, 0, 12 * kHour);
  ASSERT_FALSE(all.empty());
  EXPECT_GE(all.begin()->second.front().t, 6 * kHour);
}

TEST_F(DbTest, SizeRetentionDeletesOldestBlocksFirst) {
  auto o = Options();
  o.downsample = false;
  auto db = OpenDb(o);
  Fill(*db, 16, 0, 12 * kHour);
  ASSERT_TRUE(db->Maintain().ok());
  auto before = db->blocks();
  ASSERT_GE(before.size(), 2u);
  uint64_t total = 0;
  for (const auto& b : before) total += b->SizeBytes();
  // Allow a little less than everything: the oldest block must go.
  o.retention_bytes = total - 1;
  db.reset();
  db = OpenDb(o);
  ASSERT_TRUE(db->Maintain().ok());
  auto after = db->blocks();
  ASSERT_FALSE(after.empty());
  ASSERT_LT(after.size(), before.size());
  uint64_t kept = 0;
  for (const auto& b : after) kept += b->SizeBytes();
  EXPECT_LE(kept, o.retention_bytes);
  EXPECT_GT(after.front()->meta().min_time, before.front()->meta().min_time);
  EXPECT_FALSE(fs::exists(before.front()->dir()));
}

TEST_F(DbTest, CompactsBlocksAndBuildsDownsampledTiers) {
  const int64_t end = 40 * kHour;
  auto db = OpenDb(Options());
  Fill(*db, 4, 0, end);
  // Each round persists, compacts and downsamples what is ready.
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(db->Maintain().ok());
  size_t raw = 0, tier5m = 0;
  int64_t longest = 0;
  for (const auto& b : db->blocks()) {
    const auto& m = b->meta();
    if (m.downsample_resolution_ms == 0) {
      ++raw;
      longest = std::max(longest, m.max_time - m.min_time);
    }
    if (m.downsample_resolution_ms == 5 * 60 * 1000) ++tier5m;
  }
  EXPECT_GE(longest, 6 * kHour) << "raw blocks were not compacted";
  EXPECT_LT(raw, static_cast<size_t>(end / (2 * kHour)));
  EXPECT_GE(tier5m, 1u);
  auto res = db->Resolutions();
  ASSERT_GE(res.size(), 2u);
  EXPECT_EQ(res[1], 5 * 60 * 1000);
  // Raw data is unchanged by compaction.
  ExpectComplete(ReadAll(*db, 0, end), 4, 0, end);
  // The 5m tier answers with per-window aggregates.
  auto q = db->NewQuerierAt(5 * 60 * 1000, 0, end);
  auto m = Matcher::Make(MatchType::kEqual, "__aggr__", "count").value();
  auto set = q->Select(std::span<const Matcher>(&m, 1));
  int series = 0;
  while (set->Next()) {
    ++series;
    auto it = set->Iterator();
    ASSERT_TRUE(it->Next());
    // 5 minutes of 15 s samples per full window.
    EXPECT_LE(it->At().v, 20);
  }
  EXPECT_EQ(series, 4);
}

TEST_F(DbTest, WalCorruptionInTheMiddleKeepsEverythingBefore) {
  {
    auto o = Options();
    o.wal.segment_size = 16 * 1024;  // many segments
    auto db = OpenDb(o);
    Fill(*db, 16, 0, 2 * kHour);
  }
  auto segs = wal::ListSegments(dir_ + "/wal");
  ASSERT_TRUE(segs.ok());
  ASSERT_GE(segs->size(), 4u);
  const auto& victim = (*segs)[segs->size() / 2];
  {
    std::fstream f(victim.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(victim.size / 2));
    char c = 0x5a;
    f.write(&c, 1);
  }
  auto db = OpenDb(Options());
  auto stats = db->Stats();
  EXPECT_NE(stats.wal_repair.find(victim.path), std::string::npos) << stats.wal_repair;
  // Samples from before the damaged segment are all there.
  auto all = ReadAll(*db, 0, 2 * kHour);
  ASSERT_EQ(all.size(), 16u);
  size_t min_len = SIZE_MAX;
  for (const auto& [_, s] : all) min_len = std::min(min_len, s.size());
  EXPECT_GT(min_len, 0u);
  EXPECT_LT(min_len, static_cast<size_t>(2 * kHour / 15000));
  // And the DB accepts new data after the repair.
  Fill(*db, 16, 2 * kHour, 2 * kHour + 60000);
}

}  // namespace
}  // namespace gpumon::tsdb::db
