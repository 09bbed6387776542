#include "tsdb/downsample/series_spill.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "tsdb/compact/block_test_util.h"

namespace gpumon::tsdb::downsample {
namespace {

struct Record {
  Labels labels;
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<block::ChunkData> chunks;
};

std::vector<Record> RandomRecords(std::mt19937_64& rng, size_t n) {
  std::vector<Record> out(n);
  for (size_t i = 0; i < n; ++i) {
    Record& r = out[i];
    r.labels = testing::SeriesLabels(i);
    if (i % 7 == 0) r.labels = Labels{{"long", std::string(rng() % 5000, 'x')}};
    const size_t chunks = rng() % 4;  // zero chunks too
    for (size_t c = 0; c < chunks; ++c) {
      std::vector<uint8_t> b(1 + rng() % 300);
      for (auto& x : b) x = static_cast<uint8_t>(rng());
      r.bytes.push_back(std::move(b));
    }
    for (size_t c = 0; c < chunks; ++c) {
      const int64_t t = static_cast<int64_t>(rng() % 1000000) - 500000;
      r.chunks.push_back({t, t + static_cast<int64_t>(rng() % 1000), r.bytes[c]});
    }
  }
  return out;
}

TEST(SeriesSpillTest, RoundTripsInOrder) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/spill";
  std::mt19937_64 rng(31);
  const auto records = RandomRecords(rng, 300);
  {
    auto w = SpillWriter::Create(path);
    ASSERT_TRUE(w.ok()) << w.status().message();
    for (const auto& r : records) ASSERT_TRUE((*w)->Add(r.labels, r.chunks).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  auto r = SpillReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& want : records) {
    ASSERT_TRUE((*r)->Next()) << (*r)->status().message();
    EXPECT_EQ((*r)->labels(), want.labels);
    ASSERT_EQ((*r)->chunks().size(), want.chunks.size());
    for (size_t c = 0; c < want.chunks.size(); ++c) {
      const auto& got = (*r)->chunks()[c];
      EXPECT_EQ(got.mint, want.chunks[c].mint);
      EXPECT_EQ(got.maxt, want.chunks[c].maxt);
      EXPECT_TRUE(std::equal(got.bytes.begin(), got.bytes.end(), want.chunks[c].bytes.begin(),
                             want.chunks[c].bytes.end()));
    }
  }
  EXPECT_FALSE((*r)->Next());
  EXPECT_TRUE((*r)->status().ok());
}

TEST(SeriesSpillTest, TruncationIsAnErrorNamingTheFile) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/spill";
  std::mt19937_64 rng(32);
  const auto records = RandomRecords(rng, 20);
  {
    auto w = SpillWriter::Create(path);
    ASSERT_TRUE(w.ok());
    for (const auto& r : records) ASSERT_TRUE((*w)->Add(r.labels, r.chunks).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  auto r = SpillReader::Open(path);
  ASSERT_TRUE(r.ok());
  size_t n = 0;
  while ((*r)->Next()) ++n;
  EXPECT_EQ(n, records.size() - 1);
  ASSERT_FALSE((*r)->status().ok());
  EXPECT_NE((*r)->status().message().find(path), std::string::npos);
  EXPECT_FALSE(SpillReader::Open(dir.path() + "/missing").ok());
}

}  // namespace
}  // namespace gpumon::tsdb::downsample
