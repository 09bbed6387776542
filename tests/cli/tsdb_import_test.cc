#include "cli/tsdb_import.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "exposition/parser.h"
#include "tsdb/block/block.h"
#include "tsdb/db/db.h"
#include "tsdb/matcher.h"
#include "tsdb/sample.h"

namespace gpumon::cli {
namespace {

namespace fs = std::filesystem;
using tsdb::Sample;

constexpr int64_t kHour = 3600 * 1000;

class ImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gpumon_import_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Every series of every block in the directory: labels text -> samples,
  // read back through block queriers.
  std::map<std::string, std::vector<Sample>> ReadAll() {
    std::map<std::string, std::vector<Sample>> out;
    auto dirs = tsdb::block::ListBlockDirs(dir_);
    EXPECT_TRUE(dirs.ok());
    auto m = tsdb::Matcher::Make(tsdb::MatchType::kRegexMatch, "__name__", ".+");
    EXPECT_TRUE(m.ok());
    std::vector<tsdb::Matcher> ms = {*m};
    for (const auto& d : *dirs) {
      auto b = tsdb::block::Block::Open(d);
      EXPECT_TRUE(b.ok()) << b.status().message();
      if (!b.ok()) continue;
      auto q = (*b)->NewQuerier(tsdb::kMinTime, tsdb::kMaxTime);
      auto set = q->Select(ms);
      while (set->Next()) {
        auto it = set->Iterator();
        auto& v = out[set->labels().ToString()];
        while (it->Next()) v.push_back(it->At());
      }
    }
    return out;
  }

  size_t NumBlocks() { return NumBlocksIn(dir_); }
  static size_t NumBlocksIn(const std::string& dir) {
    auto dirs = tsdb::block::ListBlockDirs(dir);
    return dirs.ok() ? dirs->size() : 0;
  }

  std::string dir_;
};

TEST_F(ImportTest, FamiliesCountersAndLabels) {
  std::string om =
      "# TYPE gpu_temp gauge\n"
      "gpu_temp{gpu=\"0\",node=\"a\"} 40 1700000000\n"
      "gpu_temp{gpu=\"0\",node=\"a\"} 41.5 1700000015\n"
      "gpu_temp{node=\"a\",gpu=\"1\"} 50 1700000000\n"
      "# TYPE energy_joules counter\n"
      "# UNIT energy_joules joules\n"
      "# HELP energy_joules Energy.\n"
      "energy_joules_total{gpu=\"0\"} 100 1700000000.5\n"
      "energy_joules_total{gpu=\"0\"} 200 1700000015\n"
      "# EOF\n";
  auto st = ImportOpenMetrics(om, dir_);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->series, 3u);
  EXPECT_EQ(st->samples, 5u);
  EXPECT_EQ(st->blocks, 1u);
  EXPECT_GT(st->bytes, 0u);
  auto all = ReadAll();
  ASSERT_EQ(all.size(), 3u);
  ASSERT_TRUE(all.count("energy_joules_total{gpu=\"0\"}")) << all.begin()->first;
  auto& e = all["energy_joules_total{gpu=\"0\"}"];
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].t, 1700000000500);
  EXPECT_EQ(e[0].v, 100);
  EXPECT_EQ(e[1].t, 1700000015000);
  auto& g = all["gpu_temp{gpu=\"1\", node=\"a\"}"];
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].v, 50);
  EXPECT_EQ(all["gpu_temp{gpu=\"0\", node=\"a\"}"][1].v, 41.5);
}

TEST_F(ImportTest, SpecialValuesAreBitExact) {
  std::string om =
      "# TYPE m gauge\n"
      "m 1 1000\n"
      "m NaN 1015\n"
      "m -0.0 1030\n"
      "m +Inf 1045\n"
      "m -Inf 1060\n"
      "m 2 1075\n"
      "# EOF\n";
  auto st = ImportOpenMetrics(om, dir_);
  ASSERT_TRUE(st.ok()) << st.status().message();
  auto all = ReadAll();
  auto& s = all["m{}"];
  ASSERT_EQ(s.size(), 6u);
  EXPECT_TRUE(std::isnan(s[1].v));
  EXPECT_EQ(std::bit_cast<uint64_t>(s[2].v), std::bit_cast<uint64_t>(-0.0));
  EXPECT_TRUE(std::isinf(s[3].v) && s[3].v > 0);
  EXPECT_TRUE(std::isinf(s[4].v) && s[4].v < 0);
  EXPECT_EQ(s[5].v, 2);
}

TEST_F(ImportTest, NaNKeepsTheParsedBits) {
  // OpenMetrics text cannot spell a NaN payload such as the stale marker;
  // what the importer must guarantee is that the value the parser produced
  // comes back bit for bit (the chunk encodings are exact for any payload).
  std::string om = "m NaN 1\nm 3 2\n# EOF\n";
  exposition::Parser parser(om, exposition::Format::kOpenMetrics1);
  exposition::Entry e;
  ASSERT_TRUE(parser.Next(e).ok());
  uint64_t parsed = std::bit_cast<uint64_t>(e.value);
  auto st = ImportOpenMetrics(om, dir_);
  ASSERT_TRUE(st.ok()) << st.status().message();
  auto s = ReadAll()["m{}"];
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(std::bit_cast<uint64_t>(s[0].v), parsed);
  EXPECT_TRUE(std::isnan(s[0].v));
  EXPECT_FALSE(tsdb::IsStaleNaN(s[0].v));
}

TEST_F(ImportTest, SeriesSpanningWindowsAreCompacted) {
  // 7 h of one sample per 15 s for two series: four 2 h windows, in fewer
  // (18 h aligned) blocks.
  std::string om = "# TYPE a gauge\n";
  const int64_t start = 1700000000;  // seconds, not window aligned
  int n = 7 * 3600 / 15;
  for (int i = 0; i < n; ++i)
    om += "a{x=\"1\"} " + std::to_string(i) + " " + std::to_string(start + i * 15) + "\n";
  for (int i = 0; i < n; ++i)
    om += "a{x=\"2\"} " + std::to_string(i * 2) + " " + std::to_string(start + i * 15) + "\n";
  om += "# EOF\n";
  ImportOptions opts;
  auto st = ImportOpenMetrics(om, dir_, opts);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->samples, static_cast<uint64_t>(2 * n));
  EXPECT_EQ(st->blocks, NumBlocks());
  // The 7 h lie in one 18 h aligned range: one block spanning the 2 h
  // windows with data, as compaction of per-window blocks would make it.
  int64_t first = (start * 1000) / (2 * kHour);
  int64_t last = ((start + (n - 1) * 15) * 1000) / (2 * kHour);
  ASSERT_EQ(st->blocks, 1u);
  auto merged = tsdb::block::ReadMeta(st->block_dirs[0]);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->min_time, first * 2 * kHour);
  EXPECT_EQ(merged->max_time, (last + 1) * 2 * kHour);
  EXPECT_EQ(merged->stats.num_samples, static_cast<uint64_t>(2 * n));
  {
    auto b = tsdb::block::Block::Open(st->block_dirs[0]);
    ASSERT_TRUE(b.ok()) << b.status().message();
    auto m = tsdb::Matcher::Make(tsdb::MatchType::kEqual, "__name__", "a");
    ASSERT_TRUE(m.ok());
    std::vector<tsdb::Matcher> ms = {*m};
    auto set = (*b)->ChunkSelect(ms, tsdb::kMinTime, tsdb::kMaxTime);
    size_t chunks = 0;
    while (set->Next()) {
      for (const auto& c : set->chunks()) {
        ++chunks;
        EXPECT_EQ(c.meta.mint / (2 * kHour), c.meta.maxt / (2 * kHour))
            << "a chunk crosses a 2 h window";
      }
    }
    EXPECT_GE(chunks, static_cast<size_t>(2 * (last - first + 1)));
  }
  auto all = ReadAll();
  ASSERT_EQ(all.size(), 2u);
  auto& s = all["a{x=\"2\"}"];
  ASSERT_EQ(s.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(s[i].t, (start + i * 15) * 1000);
    ASSERT_EQ(s[i].v, i * 2);
  }

  // Without compaction: one level-1 block per 2 h window touched.
  fs::remove_all(dir_);
  opts.max_block_range_ms = 0;
  st = ImportOpenMetrics(om, dir_, opts);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->blocks, static_cast<uint64_t>(last - first + 1));
  EXPECT_EQ(NumBlocks(), st->blocks);
  auto dirs = tsdb::block::ListBlockDirs(dir_);
  for (const auto& d : *dirs) {
    auto meta = tsdb::block::ReadMeta(d);
    ASSERT_TRUE(meta.ok());
    EXPECT_EQ(meta->max_time - meta->min_time, 2 * kHour);
    EXPECT_EQ(meta->min_time % (2 * kHour), 0);
  }
  EXPECT_EQ(ReadAll()["a{x=\"2\"}"].size(), static_cast<size_t>(n));
}

TEST_F(ImportTest, DbOpensImportedBlocks) {
  std::string om;
  for (int i = 0; i < 1000; ++i)
    om += "m{k=\"v\"} " + std::to_string(i) + " " + std::to_string(1700000000 + i * 30) + "\n";
  om += "# EOF\n";
  auto st = ImportOpenMetrics(om, dir_);
  ASSERT_TRUE(st.ok()) << st.status().message();
  tsdb::db::DbOptions o;
  o.maintain_interval_ms = 0;
  o.retention_ms = 0;
  auto db = tsdb::db::DB::Open(dir_, o);
  ASSERT_TRUE(db.ok()) << db.status().message();
  auto stats = (*db)->Stats();
  EXPECT_EQ(stats.blocks, st->blocks);
  EXPECT_EQ(stats.block_samples, 1000u);
  // While the DB holds the directory, an import is refused.
  auto again = ImportOpenMetrics(om, dir_);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("in use"), std::string::npos);
}

TEST_F(ImportTest, InterleavedSeries) {
  std::string om;
  for (int i = 0; i < 300; ++i) {
    for (int s = 0; s < 3; ++s) {
      om += "m{s=\"" + std::to_string(s) + "\"} " + std::to_string(i * 10 + s) + " " +
            std::to_string(1000 + i) + "\n";
    }
  }
  om += "# EOF\n";
  auto st = ImportOpenMetrics(om, dir_);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->series, 3u);
  auto all = ReadAll();
  ASSERT_EQ(all.size(), 3u);
  auto& s1 = all["m{s=\"1\"}"];
  ASSERT_EQ(s1.size(), 300u);
  EXPECT_EQ(s1[299].v, 2991);
  EXPECT_EQ(s1[299].t, 1299000);
}

TEST_F(ImportTest, OutOfOrderSampleNamesTheLine) {
  std::string om = "m 1 100\nm 2 200\nm 3 150\n# EOF\n";
  auto st = ImportOpenMetrics(om, dir_);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("line 3"), std::string::npos) << st.status().message();
  EXPECT_EQ(NumBlocks(), 0u);
  // A duplicate timestamp is out of order too.
  st = ImportOpenMetrics("m 1 100\nm 2 100\n# EOF\n", dir_);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("line 2"), std::string::npos) << st.status().message();
}

TEST_F(ImportTest, MalformedInputNamesLineAndColumn) {
  auto st = ImportOpenMetrics("m 1 100\nm{a=} 2 200\n# EOF\n", dir_);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("line 2, column"), std::string::npos)
      << st.status().message();
  EXPECT_EQ(NumBlocks(), 0u);
  st = ImportOpenMetrics("m 1\n# EOF\n", dir_);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("line 1"), std::string::npos) << st.status().message();
}

TEST_F(ImportTest, EmptyInput) {
  auto st = ImportOpenMetrics("", dir_);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->samples, 0u);
  EXPECT_EQ(st->blocks, 0u);
  st = ImportOpenMetrics("# EOF\n", dir_);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(NumBlocks(), 0u);
}

TEST_F(ImportTest, FileIsMappedAndLockIsExclusive) {
  std::string path = dir_ + "/in.om";
  {
    std::ofstream f(path);
    f << "m{a=\"x\"} 5 10\n# EOF\n";
  }
  std::string data = dir_ + "/data";
  uint64_t last_done = 0;
  ImportOptions opts;
  opts.progress = [&](uint64_t done, uint64_t total, uint64_t) {
    EXPECT_LE(done, total);
    last_done = done;
  };
  auto st = ImportOpenMetricsFile(path, data, opts);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->samples, 1u);
  EXPECT_EQ(last_done, fs::file_size(path));
  EXPECT_FALSE(ImportOpenMetricsFile(dir_ + "/missing", data).ok());

  // A running DB holds <dir>/lock: the import must refuse the directory.
  int fd = ::open((data + "/lock").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  st = ImportOpenMetricsFile(path, data);
  ::close(fd);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("in use"), std::string::npos) << st.status().message();
  EXPECT_EQ(NumBlocksIn(data), 1u);
}

}  // namespace
}  // namespace gpumon::cli
