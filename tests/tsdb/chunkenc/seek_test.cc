// Seek inside a chunk (chunk_iterator.h) lands where stepping with Next
// would: on random series of every shape and every encoding, for targets
// before, at, between and after the samples, from a fresh iterator and
// after some samples were read. Covers the packed reader's direct jump over
// regular timestamps and its block-by-block search over irregular ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "chunk_test_util.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/chunkenc/int_stream.h"
#include "tsdb/chunkenc/packed.h"

namespace gpumon::tsdb::chunkenc {
namespace {

using chunktest::Bits;

// The index of the first sample with time >= t, as a linear scan finds it.
size_t Expected(const std::vector<Sample>& s, int64_t t) {
  size_t i = 0;
  while (i < s.size() && s[i].t < t) ++i;
  return i;
}

// Seeks to t after reading `read` samples and checks the landing sample
// and every one after it.
::testing::AssertionResult SeekMatches(std::span<const uint8_t> chunk, const std::vector<Sample>& s,
                                       size_t read, int64_t t) {
  auto it = NewIterator(chunk);
  for (size_t i = 0; i < read; ++i) {
    if (!it->Next()) return ::testing::AssertionFailure() << "Next ended at " << i;
  }
  const size_t from = read == 0 ? 0 : read - 1;  // Seek never moves backwards
  size_t want = std::max(from, Expected(s, t));
  if (!it->Seek(t)) {
    if (want == s.size() && it->status().ok()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "Seek(" << t << ") failed, want index " << want
                                         << " status " << it->status().message();
  }
  if (want >= s.size()) return ::testing::AssertionFailure() << "Seek(" << t << ") found a sample";
  size_t i = want;
  for (;;) {
    const Sample got = it->At();
    if (got.t != s[i].t || Bits(got.v) != Bits(s[i].v)) {
      return ::testing::AssertionFailure() << "Seek(" << t << ") after " << read << ": sample " << i
                                           << " got t=" << got.t << " want t=" << s[i].t;
    }
    ++i;
    if (!it->Next()) break;
    if (i >= s.size()) return ::testing::AssertionFailure() << "more samples than encoded";
  }
  if (i != s.size()) return ::testing::AssertionFailure() << "ended at " << i << " of " << s.size();
  if (!it->status().ok()) return ::testing::AssertionFailure() << it->status().message();
  return ::testing::AssertionSuccess();
}

std::vector<std::vector<uint8_t>> Encodings(const std::vector<Sample>& s, std::mt19937_64& rng) {
  std::vector<std::vector<uint8_t>> out = {EncodeBest(s), EncodeXor(s)};
  PackedOptions o;
  o.ts_order = static_cast<int>(rng() % 5) - 1;
  o.ts_kind = static_cast<int>(rng() % 3) - 1;
  o.value_mode = rng() % 2 == 0 ? kValueDecimal : kValueXor;
  o.value_order = static_cast<int>(rng() % 5) - 1;
  o.value_kind = static_cast<int>(rng() % 3) - 1;
  auto forced = EncodePacked(s, o);
  EXPECT_TRUE(forced.ok());
  if (forced.ok()) out.push_back(*forced);
  return out;
}

TEST(ChunkSeekTest, RandomSeriesSeekLikeNext) {
  std::mt19937_64 rng(77);
  for (int iteration = 0; iteration < 300; ++iteration) {
    const int n = 1 + static_cast<int>(rng() % 700);
    const auto s = chunktest::RandomSeries(rng, n);
    SCOPED_TRACE("iteration " + std::to_string(iteration) + " n " + std::to_string(n));
    for (const auto& chunk : Encodings(s, rng)) {
      std::vector<int64_t> targets = {std::numeric_limits<int64_t>::min(), s.front().t, s.back().t,
                                      std::numeric_limits<int64_t>::max()};
      for (int k = 0; k < 6; ++k) {
        const size_t i = rng() % s.size();
        targets.push_back(s[i].t);
        if (s[i].t > std::numeric_limits<int64_t>::min()) targets.push_back(s[i].t - 1);
        if (s[i].t < std::numeric_limits<int64_t>::max()) targets.push_back(s[i].t + 1);
      }
      for (int64_t t : targets) {
        ASSERT_TRUE(SeekMatches(chunk, s, 0, t));
        ASSERT_TRUE(SeekMatches(chunk, s, 1 + rng() % s.size(), t));
      }
    }
  }
}

// Regular scrapes of temperature-like integers: the shape of imported
// GPU data, whose timestamps the packed reader jumps over arithmetically
// and whose Huffman-coded deltas it skips several per table lookup.
TEST(ChunkSeekTest, RegularGaugeEveryTarget) {
  std::mt19937_64 rng(5);
  std::vector<Sample> s;
  double temp = 40;
  for (int i = 0; i < 480; ++i) {
    const uint64_t r = rng() % 16;
    temp += r < 10 ? 0 : (r < 13 ? 1 : (r < 15 ? -1 : (rng() % 2 ? 7 : -7)));
    s.push_back({1700028000000 + i * int64_t{15000}, temp});
  }
  const auto chunk = EncodeBest(s);
  auto layout = DescribePacked(chunk);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->ts_kind, static_cast<int>(IntKind::kEqual));
  EXPECT_EQ(layout->value_kind, static_cast<int>(IntKind::kHuffman));
  for (size_t i = 0; i < s.size(); ++i) {
    ASSERT_TRUE(SeekMatches(chunk, s, 0, s[i].t - 7500));
    ASSERT_TRUE(SeekMatches(chunk, s, 0, s[i].t));
  }
  for (size_t read : {1, 31, 32, 33, 100, 479, 480}) {
    ASSERT_TRUE(SeekMatches(chunk, s, read, s[400].t));
  }
}

// A kEqual timestamp stream whose step is not positive decodes to times
// that do not increase: Seek must report the corruption as Next does, not
// jump over it.
TEST(ChunkSeekTest, NonIncreasingRegularTimesAreCorrupt) {
  std::vector<Sample> s;
  for (int i = 0; i < 100; ++i) s.push_back({1000 + i * 10, double(i)});
  PackedOptions o;
  o.ts_order = 1;
  auto chunk = EncodePacked(s, o);
  ASSERT_TRUE(chunk.ok());
  auto layout = DescribePacked(*chunk);
  ASSERT_TRUE(layout.ok());
  ASSERT_EQ(layout->ts_kind, static_cast<int>(IntKind::kEqual));
  // Layout: encoding, count (1 byte), layout byte, ts header, v0 (zigzag
  // varint, 2 bytes for 1000), the step's magnitude (10): make it 0.
  std::vector<uint8_t> bad = *chunk;
  ASSERT_EQ(bad[3], 0x09);  // order 1, kEqual
  ASSERT_EQ(bad[6], 10);
  bad[6] = 0;
  auto it = NewIterator(bad);
  EXPECT_FALSE(it->Seek(1500));
  EXPECT_FALSE(it->status().ok());
  auto next = NewIterator(bad);
  while (next->Next()) {
  }
  EXPECT_FALSE(next->status().ok());
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
