// ChunkSeriesIterator's Seek and Next over packed and XOR chunks, with and
// without tombstones, against a brute-force reference: the samples inside
// [mint, maxt] that no deleted interval covers, walked with a cursor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tsdb/block/chunk_segments.h"
#include "tsdb/block/chunk_series_iterator.h"
#include "tsdb/block/tombstones.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/chunkenc/packed.h"

namespace gpumon::tsdb::block {
namespace {

constexpr int kChunkSamples = 480;
constexpr int kChunks = 6;  // more than ChunkSeriesIterator keeps in place

enum class Kind { kPackedDecimal, kPackedXor, kXor, kMixed };

std::vector<Sample> MakeSamples(Kind kind, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Sample> out;
  int64_t t = 1000;
  for (int i = 0; i < kChunks * kChunkSamples; ++i) {
    // Mostly regular 15 s steps with occasional jitter.
    t += 15000 + (rng() % 8 == 0 ? static_cast<int64_t>(rng() % 2000) : 0);
    const double v = kind == Kind::kPackedDecimal ? static_cast<double>(rng() % 1000) / 10
                                                  : std::ldexp(static_cast<double>(rng()), -20);
    out.push_back({t, v});
  }
  return out;
}

class SeekTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "gpumon_seek_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    samples_ = MakeSamples(GetParam(), 7);
    auto w = ChunkWriter::Create(dir_);
    ASSERT_TRUE(w.ok()) << w.status().message();
    for (int c = 0; c < kChunks; ++c) {
      std::span<const Sample> part(samples_.data() + c * kChunkSamples, kChunkSamples);
      std::vector<uint8_t> bytes;
      const bool packed = GetParam() == Kind::kPackedDecimal || GetParam() == Kind::kPackedXor ||
                          (GetParam() == Kind::kMixed && c % 2 == 0);
      if (packed) {
        chunkenc::PackedOptions opts;
        opts.value_mode =
            GetParam() == Kind::kPackedDecimal ? chunkenc::kValueDecimal : chunkenc::kValueXor;
        auto r = chunkenc::EncodePacked(part, opts);
        ASSERT_TRUE(r.ok()) << r.status().message();
        bytes = *r;
        ASSERT_EQ(bytes[0], static_cast<uint8_t>(chunkenc::Encoding::kPacked));
      } else {
        bytes = chunkenc::EncodeXor(part);
      }
      auto ref = (*w)->Write(bytes);
      ASSERT_TRUE(ref.ok());
      metas_.push_back({part.front().t, part.back().t, *ref});
    }
    ASSERT_TRUE((*w)->Close().ok());
    std::ifstream in(dir_ + "/" + SegmentFileName(1), std::ios::binary);
    segment_.assign(std::istreambuf_iterator<char>(in), {});
    auto reader = ChunkReader::Open(
        {{1, std::span<const uint8_t>(segment_.data(), segment_.size()), "000001"}});
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    reader_ = std::move(reader).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<Sample> Expected(const Intervals& deleted, int64_t mint, int64_t maxt) const {
    std::vector<Sample> out;
    for (const Sample& s : samples_) {
      if (s.t >= mint && s.t <= maxt && !IsDeleted(deleted, s.t)) out.push_back(s);
    }
    return out;
  }

  std::unique_ptr<ChunkSeriesIterator> Open(const Intervals& deleted, int64_t mint,
                                            int64_t maxt) const {
    return std::make_unique<ChunkSeriesIterator>(nullptr, &reader_, metas_, deleted, mint, maxt);
  }

  // Random Next/Seek calls (forward, backward, into gaps, across chunks),
  // each checked against a cursor over the expected samples.
  void CheckRandomWalk(const Intervals& deleted, int64_t mint, int64_t maxt, uint32_t seed) {
    const std::vector<Sample> want = Expected(deleted, mint, maxt);
    auto it = Open(deleted, mint, maxt);
    std::mt19937 rng(seed);
    const int64_t lo = samples_.front().t - 20000, hi = samples_.back().t + 20000;
    int64_t idx = -1;  // reference cursor
    bool done = false;
    for (int step = 0; step < 400 && !done; ++step) {
      bool got;
      if (rng() % 3 == 0) {
        got = it->Next();
        ++idx;
      } else {
        int64_t t;
        switch (rng() % 4) {
          case 0:  // anywhere, possibly backwards
            t = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo));
            break;
          case 1:  // exactly on a sample
            t = samples_[rng() % samples_.size()].t;
            break;
          default: {  // a short hop forward, often inside the same chunk
            const int64_t base = idx >= 0 && idx < static_cast<int64_t>(want.size())
                                     ? want[static_cast<size_t>(idx)].t
                                     : lo;
            t = base + static_cast<int64_t>(rng() % 200000);
          }
        }
        got = it->Seek(t);
        if (idx < 0 ||
            (idx < static_cast<int64_t>(want.size()) && want[static_cast<size_t>(idx)].t < t)) {
          idx = std::lower_bound(want.begin(), want.end(), t,
                                 [](const Sample& s, int64_t v) { return s.t < v; }) -
                want.begin();
        }
      }
      const bool expect = idx < static_cast<int64_t>(want.size());
      ASSERT_EQ(got, expect) << "step " << step;
      if (!expect) {
        done = true;
        break;
      }
      const Sample s = it->At();
      const Sample& w = want[static_cast<size_t>(idx)];
      ASSERT_EQ(s.t, w.t) << "step " << step;
      ASSERT_EQ(std::bit_cast<uint64_t>(s.v), std::bit_cast<uint64_t>(w.v)) << "step " << step;
    }
    EXPECT_TRUE(it->status().ok());
    if (done) {
      EXPECT_FALSE(it->Next());
      EXPECT_FALSE(it->Seek(hi));
    }
  }

  std::string dir_;
  std::vector<Sample> samples_;
  std::vector<index::ChunkMeta> metas_;
  std::vector<uint8_t> segment_;
  ChunkReader reader_;
};

std::vector<Intervals> TombstoneCases(const std::vector<Sample>& s) {
  const auto at = [&](int i) { return s[static_cast<size_t>(i)].t; };
  return {
      {},
      {{at(100), at(150)}},                                // inside the first chunk
      {{at(kChunkSamples), at(2 * kChunkSamples - 1)}},    // exactly the second chunk
      {{at(470), at(490)}, {at(1000) + 1, at(1400) - 1}},  // across chunk edges
      {{at(0) - 5, at(3)}, {at(kChunks * kChunkSamples - 3), at(kChunks * kChunkSamples - 1) + 9}},
  };
}

TEST_P(SeekTest, FullScanMatchesReference) {
  for (const Intervals& deleted : TombstoneCases(samples_)) {
    const std::vector<Sample> want = Expected(deleted, INT64_MIN, INT64_MAX);
    auto it = Open(deleted, INT64_MIN, INT64_MAX);
    size_t n = 0;
    while (it->Next()) {
      ASSERT_LT(n, want.size());
      ASSERT_EQ(it->At().t, want[n].t);
      ASSERT_EQ(std::bit_cast<uint64_t>(it->At().v), std::bit_cast<uint64_t>(want[n].v));
      ++n;
    }
    EXPECT_TRUE(it->status().ok());
    EXPECT_EQ(n, want.size());
  }
}

TEST_P(SeekTest, AnyNumberOfChunksScansTheirSamples) {
  // Short chunk lists are kept inside the iterator, long ones on the heap.
  for (size_t k = 0; k <= metas_.size(); ++k) {
    std::span<const index::ChunkMeta> some(metas_.data(), k);
    ChunkSeriesIterator it(nullptr, &reader_, some, {}, INT64_MIN, INT64_MAX);
    size_t n = 0;
    while (it.Next()) {
      ASSERT_LT(n, samples_.size());
      ASSERT_EQ(it.At().t, samples_[n].t) << k;
      ++n;
    }
    EXPECT_TRUE(it.status().ok());
    EXPECT_EQ(n, k * kChunkSamples);
  }
}

TEST_P(SeekTest, SeekToEverySampleFromFresh) {
  // A fresh iterator seeking to t (the instant-query pattern): the first
  // remaining sample at or after t.
  for (const Intervals& deleted : TombstoneCases(samples_)) {
    const int64_t mint = samples_[300].t + 1, maxt = samples_[1700].t;
    const std::vector<Sample> want = Expected(deleted, mint, maxt);
    for (size_t i = 0; i < samples_.size(); i += 37) {
      for (int64_t delta : {-1, 0, 1}) {
        const int64_t t = samples_[i].t + delta;
        auto it = Open(deleted, mint, maxt);
        auto w = std::lower_bound(want.begin(), want.end(), t,
                                  [](const Sample& s, int64_t v) { return s.t < v; });
        ASSERT_EQ(it->Seek(t), w != want.end()) << t;
        if (w == want.end()) continue;
        EXPECT_EQ(it->At().t, w->t);
        EXPECT_EQ(std::bit_cast<uint64_t>(it->At().v), std::bit_cast<uint64_t>(w->v));
        // And Next continues from there.
        if (w + 1 != want.end()) {
          ASSERT_TRUE(it->Next());
          EXPECT_EQ(it->At().t, (w + 1)->t);
        } else {
          EXPECT_FALSE(it->Next());
        }
      }
    }
  }
}

TEST_P(SeekTest, RandomWalksMatchReference) {
  const std::vector<Intervals> cases = TombstoneCases(samples_);
  const int64_t first = samples_.front().t, last = samples_.back().t;
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {INT64_MIN, INT64_MAX},
      {samples_[200].t, samples_[1500].t - 1},
      {samples_[kChunkSamples].t + 1, samples_[2 * kChunkSamples].t},
      {first + 1, last - 1},
  };
  uint32_t seed = 1;
  for (const Intervals& deleted : cases) {
    for (const auto& [mint, maxt] : ranges) {
      for (int r = 0; r < 5; ++r) {
        SCOPED_TRACE(::testing::Message() << "seed " << seed << " range " << mint << ".." << maxt);
        CheckRandomWalk(deleted, mint, maxt, seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Encodings, SeekTest,
                         ::testing::Values(Kind::kPackedDecimal, Kind::kPackedXor, Kind::kXor,
                                           Kind::kMixed));

}  // namespace
}  // namespace gpumon::tsdb::block
