// Helpers shared by the compaction and downsampling tests: a temporary data
// directory, writing a block from an in-memory map of series, reading every
// sample of a block back, bit-exact comparison, and random series with the
// values that break naive code (stale markers, NaN payloads, -0.0,
// infinities) and gaps.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/labels.h"
#include "tsdb/block/block.h"
#include "tsdb/block/block_writer.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/sample.h"

namespace gpumon::tsdb::testing {

using SeriesMap = std::map<Labels, std::vector<Sample>>;

inline constexpr int64_t kHour = 3600 * 1000;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gpumon_compact_test_XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes `data` (series with no samples are left out) as one block with
// XOR chunks of `per_chunk` samples; returns the opened block.
inline std::shared_ptr<block::Block> WriteBlock(const std::string& dir, const SeriesMap& data,
                                                int64_t mint, int64_t maxt, int per_chunk = 120,
                                                int64_t resolution = 0) {
  block::BlockWriterOptions o;
  o.min_time = mint;
  o.max_time = maxt;
  o.downsample_resolution_ms = resolution;
  auto w = block::BlockWriter::Create(dir, o);
  EXPECT_TRUE(w.ok()) << w.status().message();
  if (!w.ok()) return nullptr;
  for (const auto& [labels, samples] : data) {
    std::vector<std::vector<uint8_t>> bytes;
    std::vector<block::ChunkData> chunks;
    for (size_t i = 0; i < samples.size(); i += static_cast<size_t>(per_chunk)) {
      size_t end = std::min(samples.size(), i + static_cast<size_t>(per_chunk));
      chunkenc::XorAppender app;
      for (size_t k = i; k < end; ++k) app.Append(samples[k].t, samples[k].v);
      bytes.emplace_back(app.bytes().begin(), app.bytes().end());
      chunks.push_back({samples[i].t, samples[end - 1].t, {}});
    }
    for (size_t i = 0; i < chunks.size(); ++i) chunks[i].bytes = bytes[i];
    Status s = (*w)->AddSeries(labels, chunks);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  auto path = (*w)->Finish();
  EXPECT_TRUE(path.ok()) << path.status().message();
  if (!path.ok()) return nullptr;
  auto b = block::Block::Open(*path);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return b.ok() ? *b : nullptr;
}

inline std::shared_ptr<block::Block> OpenBlock(const std::string& dir) {
  auto b = block::Block::Open(dir);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return b.ok() ? *b : nullptr;
}

inline SeriesMap ReadAll(SeriesSet& set) {
  SeriesMap out;
  bool first = true;
  Labels last;
  while (set.Next()) {
    if (!first) {
      EXPECT_LT(last, set.labels()) << "series out of order";
    }
    last = set.labels();
    first = false;
    auto it = set.Iterator();
    std::vector<Sample> samples;
    while (it->Next()) samples.push_back(it->At());
    EXPECT_TRUE(it->status().ok()) << it->status().message();
    out[set.labels()] = std::move(samples);
  }
  EXPECT_TRUE(set.status().ok()) << set.status().message();
  return out;
}

// Every sample of the block (tombstones applied), by series.
inline SeriesMap ReadBlock(const block::Block& b) {
  auto q = b.NewQuerier(kMinTime, kMaxTime);
  auto set = q->Select({});
  return ReadAll(*set);
}

inline bool SameBits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// Bit-exact comparison with a readable first difference.
inline ::testing::AssertionResult SameSeries(const SeriesMap& want, const SeriesMap& got) {
  for (const auto& [labels, samples] : want) {
    if (samples.empty()) continue;
    auto it = got.find(labels);
    if (it == got.end()) return ::testing::AssertionFailure() << "missing " << labels.ToString();
    const auto& g = it->second;
    if (g.size() != samples.size()) {
      return ::testing::AssertionFailure()
             << labels.ToString() << ": " << g.size() << " samples, want " << samples.size();
    }
    for (size_t i = 0; i < g.size(); ++i) {
      if (g[i].t != samples[i].t || !SameBits(g[i].v, samples[i].v)) {
        return ::testing::AssertionFailure()
               << labels.ToString() << " sample " << i << ": (" << g[i].t << ", " << g[i].v
               << "), want (" << samples[i].t << ", " << samples[i].v << ")";
      }
    }
  }
  for (const auto& [labels, samples] : got) {
    auto it = want.find(labels);
    if (it == want.end() || it->second.empty()) {
      return ::testing::AssertionFailure() << "unexpected " << labels.ToString();
    }
  }
  return ::testing::AssertionSuccess();
}

// A value from a small alphabet of hard cases or a gauge-like random walk.
inline double RandomValue(std::mt19937_64& rng, double* walk) {
  switch (rng() % 40) {
    case 0:
      return StaleNaN();
    case 1:
      return std::bit_cast<double>(0x7ff8000000000123ULL);  // a NaN that is not stale
    case 2:
      return -0.0;
    case 3:
      return std::numeric_limits<double>::infinity();
    default:
      *walk += static_cast<double>(static_cast<int>(rng() % 2001) - 1000) / 100.0;
      return *walk;
  }
}

// Samples in [mint, maxt) every `step` ms with jitter, random gaps (runs of
// missing samples) and hard values.
inline std::vector<Sample> RandomSamples(std::mt19937_64& rng, int64_t mint, int64_t maxt,
                                         int64_t step, bool hard_values = true) {
  std::vector<Sample> out;
  double walk = static_cast<double>(rng() % 1000);
  int64_t t = mint + static_cast<int64_t>(rng() % static_cast<uint64_t>(step));
  while (t < maxt) {
    if (rng() % 50 == 0) {
      t += step * static_cast<int64_t>(1 + rng() % 40);  // a gap
      continue;
    }
    double v = hard_values ? RandomValue(rng, &walk) : (walk += static_cast<double>(rng() % 100));
    out.push_back({t, v});
    t += step + static_cast<int64_t>(rng() % 3);
  }
  return out;
}

inline Labels SeriesLabels(size_t i) {
  return Labels{{"__name__", i % 3 == 0 ? "gpu_power_watts" : "gpu_temp_celsius"},
                {"gpu", std::to_string(i % 8)},
                {"instance", "node-" + std::to_string(i / 8)}};
}

}  // namespace gpumon::tsdb::testing
