// Shared setup for the block tests: a temporary data directory and a block
// written from the shared test series, each with samples every 15 s over
// the block's two hours, cut into chunks of 120 samples. Sample values are a
// function of (series, index), so expectations are recomputed, not stored.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tsdb/block/block.h"
#include "tsdb/block/block_writer.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/index/test_series.h"

namespace gpumon::tsdb::block::testing {

inline constexpr int64_t kBlockMin = 0;
inline constexpr int64_t kBlockMax = 2 * 3600 * 1000;
inline constexpr int64_t kStep = 15000;
inline constexpr int kSamplesPerChunk = 120;

inline std::vector<Sample> SamplesFor(size_t series) {
  std::vector<Sample> out;
  const int64_t offset = static_cast<int64_t>(series % 7) * 1000;
  for (int k = 0; k * kStep + offset < kBlockMax; ++k) {
    double v = static_cast<double>(series) * 1000 + k * 0.5;
    if (series % 9 == 0 && k == 100) v = StaleNaN();
    if (series % 10 == 1 && k == 3) v = -0.0;
    out.push_back({k * kStep + offset, v});
  }
  return out;
}

inline bool SameSample(const Sample& a, const Sample& b) {
  return a.t == b.t && std::bit_cast<uint64_t>(a.v) == std::bit_cast<uint64_t>(b.v);
}

// Chunk bytes plus the ChunkData views BlockWriter takes.
struct EncodedSeries {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<ChunkData> chunks;
};

inline EncodedSeries Encode(const std::vector<Sample>& samples) {
  EncodedSeries e;
  for (size_t i = 0; i < samples.size(); i += kSamplesPerChunk) {
    chunkenc::XorAppender app;
    size_t end = std::min(samples.size(), i + kSamplesPerChunk);
    for (size_t k = i; k < end; ++k) app.Append(samples[k].t, samples[k].v);
    e.bytes.emplace_back(app.bytes().begin(), app.bytes().end());
    e.chunks.push_back({samples[i].t, samples[end - 1].t, {}});
  }
  for (size_t i = 0; i < e.chunks.size(); ++i) e.chunks[i].bytes = e.bytes[i];
  return e;
}

class BlockTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "gpumon_block_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    data_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(data_); }

  // Writes the series; returns the block directory.
  std::string WriteBlock(const std::vector<Labels>& series, BlockWriterOptions opts = {}) {
    if (opts.max_time == 0) {
      opts.min_time = kBlockMin;
      opts.max_time = kBlockMax;
    }
    auto w = BlockWriter::Create(data_, opts);
    EXPECT_TRUE(w.ok()) << w.status().message();
    for (size_t i = 0; i < series.size(); ++i) {
      EncodedSeries e = Encode(SamplesFor(i));
      Status s = (*w)->AddSeries(series[i], e.chunks);
      EXPECT_TRUE(s.ok()) << s.message();
    }
    auto dir = (*w)->Finish();
    EXPECT_TRUE(dir.ok()) << dir.status().message();
    return dir.ok() ? *dir : "";
  }

  std::shared_ptr<Block> OpenBlock(const std::string& dir) {
    auto b = Block::Open(dir);
    EXPECT_TRUE(b.ok()) << b.status().message();
    return b.ok() ? *b : nullptr;
  }

  std::string data_;
};

inline std::vector<Sample> Drain(SeriesIterator& it) {
  std::vector<Sample> out;
  while (it.Next()) out.push_back(it.At());
  EXPECT_TRUE(it.status().ok()) << it.status().message();
  return out;
}

}  // namespace gpumon::tsdb::block::testing
