// The chunk API (chunk.h): XorAppender, EncodeBest, NewIterator, Seek and
// CountSamples across both encodings.
#include "tsdb/chunkenc/chunk.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "chunk_test_util.h"
#include "tsdb/chunkenc/xor_chunk.h"

namespace gpumon::tsdb::chunkenc {
namespace {

using chunktest::AdversarialValues;
using chunktest::Bits;
using chunktest::DecodeAll;
using chunktest::RoundTrips;
using chunktest::SameSamples;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::vector<Sample> Regular(int n, int64_t t0, int64_t step, double (*f)(int)) {
  std::vector<Sample> out;
  for (int i = 0; i < n; ++i) out.push_back({t0 + i * step, f(i)});
  return out;
}

// Both encodings of the same samples, for tests that must hold for each.
std::vector<std::vector<uint8_t>> AllEncodings(std::span<const Sample> samples) {
  return {EncodeXor(samples), EncodeBest(samples)};
}

TEST(XorAppenderTest, EmptyAppenderIsAValidEmptyChunk) {
  XorAppender app;
  EXPECT_EQ(app.num_samples(), 0);
  EXPECT_EQ(app.bytes()[0], static_cast<uint8_t>(Encoding::kXor));
  auto d = DecodeAll(app.bytes());
  EXPECT_TRUE(d.status.ok());
  EXPECT_TRUE(d.samples.empty());
  EXPECT_EQ(CountSamples(app.bytes()).value(), 0);
}

TEST(XorAppenderTest, BytesDecodeAfterEveryAppend) {
  std::mt19937_64 rng(7);
  XorAppender app;
  std::vector<Sample> want;
  const auto adversarial = AdversarialValues();
  int64_t t = -5000;
  for (int i = 0; i < 300; ++i) {
    t += 1 + static_cast<int64_t>(rng() % (i % 50 == 0 ? 1000000000 : 20000));
    const double v = i % 7 == 0 ? adversarial[rng() % adversarial.size()]
                                : static_cast<double>(rng() % 1000) / 8;
    app.Append(t, v);
    want.push_back({t, v});
    ASSERT_EQ(app.num_samples(), i + 1);
    ASSERT_TRUE(RoundTrips(app.bytes(), want)) << "after sample " << i;
  }
  EXPECT_GE(app.MemoryBytes(), app.bytes().size());
}

TEST(XorAppenderTest, EncodeXorMatchesAppender) {
  auto samples = Regular(50, 1000, 15000, [](int i) { return i * 0.5; });
  XorAppender app;
  for (const Sample& s : samples) app.Append(s.t, s.v);
  auto bytes = app.bytes();
  EXPECT_EQ(EncodeXor(samples), std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

TEST(XorAppenderTest, FullAtMaxSamples) {
  XorAppender app;
  for (int i = 0; i < kMaxSamples; ++i) {
    ASSERT_FALSE(app.full());
    app.Append(i * int64_t{1000}, i % 3);
  }
  EXPECT_TRUE(app.full());
  EXPECT_EQ(CountSamples(app.bytes()).value(), kMaxSamples);
  auto d = DecodeAll(app.bytes());
  ASSERT_TRUE(d.status.ok());
  ASSERT_EQ(d.samples.size(), static_cast<size_t>(kMaxSamples));
  EXPECT_EQ(d.samples.back().t, (kMaxSamples - 1) * int64_t{1000});
}

TEST(ChunkTest, AdversarialValuesRoundTripInEveryEncoding) {
  const auto values = AdversarialValues();
  std::vector<Sample> samples;
  for (size_t i = 0; i < values.size(); ++i) samples.push_back({int64_t(i) * 15000, values[i]});
  for (const auto& chunk : AllEncodings(samples)) EXPECT_TRUE(RoundTrips(chunk, samples));
  // Each value alone and each value repeated (constant chunks).
  for (double v : values) {
    std::vector<Sample> one = {{42, v}};
    for (const auto& chunk : AllEncodings(one)) EXPECT_TRUE(RoundTrips(chunk, one));
    auto repeated = Regular(130, -7, 1000, [](int) { return 0.0; });
    for (Sample& s : repeated) s.v = v;
    for (const auto& chunk : AllEncodings(repeated)) EXPECT_TRUE(RoundTrips(chunk, repeated));
  }
}

TEST(ChunkTest, StaleMarkerKeepsItsPayload) {
  auto samples = Regular(120, 1700000000000, 15000, [](int i) { return 40.0 + i % 3; });
  samples.back().v = StaleNaN();
  for (const auto& chunk : AllEncodings(samples)) {
    auto d = DecodeAll(chunk);
    ASSERT_TRUE(d.status.ok());
    ASSERT_EQ(d.samples.size(), samples.size());
    EXPECT_TRUE(IsStaleNaN(d.samples.back().v));
    EXPECT_EQ(Bits(d.samples.back().v), kStaleNaNBits);
  }
}

TEST(ChunkTest, ExtremeTimestampsRoundTrip) {
  const std::vector<std::vector<int64_t>> cases = {
      {kMin, kMax},  // a delta of 2^64 - 1
      {kMin, kMin + 1, kMin + 2, 0, kMax - 1, kMax},
      {-1000, -999, -1, 0, 1},
      {kMin, -1, kMax},
      {0, 1, kMax},
      // Delta-of-delta at every bucket edge (14, 17, 20 bits, then 64).
      {0, 10000, 10000 + 10000 + 8191, 10000 + 10000 + 8191 + 10000 + 8191 - 8192},
      {0, 1, 2 + 8192, 3 + 8192 + 8192 + 65536, 4 + 8192 + 8192 + 65536 + 65536 + 524288},
      {0, 1000000, 1000000 + 1000000 + (int64_t{1} << 19), int64_t{1} << 62},
  };
  for (const auto& times : cases) {
    std::vector<Sample> samples;
    for (size_t i = 0; i < times.size(); ++i) samples.push_back({times[i], double(i) / 3});
    for (const auto& chunk : AllEncodings(samples)) {
      EXPECT_TRUE(RoundTrips(chunk, samples)) << "first time " << times[0];
    }
  }
}

TEST(ChunkTest, EveryDodBucketBoundary) {
  // Deltas chosen so that consecutive dods hit each side of each bucket.
  const int64_t dods[] = {0,
                          1,
                          -1,
                          8191,
                          -8192,
                          8192,
                          -8193,
                          65535,
                          -65536,
                          65536,
                          -65537,
                          524287,
                          -524288,
                          524288,
                          -524289,
                          int64_t{1} << 40,
                          -(int64_t{1} << 40)};
  std::vector<Sample> samples = {{0, 1}, {int64_t{1} << 41, 2}};
  int64_t delta = int64_t{1} << 41;
  for (int64_t dod : dods) {
    delta += dod;
    samples.push_back({samples.back().t + delta, 3});
  }
  for (const auto& chunk : AllEncodings(samples)) EXPECT_TRUE(RoundTrips(chunk, samples));
}

TEST(ChunkTest, EncodeBestIsNeverLargerThanXor) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 200; ++iter) {
    auto samples = chunktest::RandomSeries(rng, 1 + static_cast<int>(rng() % 300));
    auto best = EncodeBest(samples);
    const auto xor_chunk = EncodeXor(samples);
    EXPECT_LE(best.size(), xor_chunk.size());
    // EncodeBest compares against this precomputed size.
    EXPECT_EQ(XorChunkSize(samples), xor_chunk.size());
    ASSERT_TRUE(RoundTrips(best, samples)) << "iteration " << iter;
  }
}

TEST(ChunkTest, EncodeBestShrinksScrapedGauges) {
  // Temperatures in whole degrees, scraped every 15 s: kXor spends at least
  // a bit per timestamp and per value; the packed chunk nothing per
  // timestamp.
  auto samples = Regular(120, 1700000000000, 15000, [](int i) { return 40.0 + (i / 10) % 4; });
  auto best = EncodeBest(samples);
  EXPECT_EQ(best[0], static_cast<uint8_t>(Encoding::kPacked));
  EXPECT_LT(best.size() * 4, EncodeXor(samples).size() * 3);
  EXPECT_TRUE(RoundTrips(best, samples));
}

TEST(ChunkTest, LargeChunksRoundTrip) {
  std::mt19937_64 rng(3);
  std::vector<Sample> samples;
  int64_t t = 1700000000000;
  int64_t mw = 300000;
  for (int i = 0; i < kMaxSamples; ++i) {
    t += 1000 + static_cast<int64_t>(rng() % 3);
    mw += static_cast<int64_t>(rng() % 2001) - 1000;
    samples.push_back({t, static_cast<double>(mw) / 1000.0});
  }
  for (const auto& chunk : AllEncodings(samples)) EXPECT_TRUE(RoundTrips(chunk, samples));
}

TEST(ChunkTest, SeekSemantics) {
  auto samples = Regular(100, -500, 10, [](int i) { return double(i); });  // t = -500 .. 490
  for (const auto& chunk : AllEncodings(samples)) {
    {
      auto it = NewIterator(chunk);  // Seek before any Next starts at the beginning
      ASSERT_TRUE(it->Seek(kMin));
      EXPECT_EQ(it->At().t, -500);
    }
    {
      auto it = NewIterator(chunk);
      ASSERT_TRUE(it->Seek(-495));  // between samples: the next one
      EXPECT_EQ(it->At().t, -490);
      ASSERT_TRUE(it->Seek(-490));  // the current one already qualifies
      EXPECT_EQ(it->At().t, -490);
      ASSERT_TRUE(it->Seek(-1000));  // never backwards
      EXPECT_EQ(it->At().t, -490);
      ASSERT_TRUE(it->Seek(0));  // exact hit
      EXPECT_EQ(it->At().t, 0);
      EXPECT_EQ(it->At().v, 50.0);
      ASSERT_TRUE(it->Next());
      EXPECT_EQ(it->At().t, 10);
      ASSERT_TRUE(it->Seek(490));  // the last sample, across decode blocks
      EXPECT_EQ(it->At().t, 490);
      EXPECT_FALSE(it->Next());
      EXPECT_FALSE(it->Seek(0));  // exhausted stays exhausted
      EXPECT_TRUE(it->status().ok());
    }
    {
      auto it = NewIterator(chunk);
      EXPECT_FALSE(it->Seek(491));  // past the end
      EXPECT_FALSE(it->Next());
      EXPECT_TRUE(it->status().ok());
    }
  }
}

TEST(ChunkTest, SeekAcrossManyBlocks) {
  auto samples = Regular(1000, 0, 7, [](int i) { return i * 0.25; });
  for (const auto& chunk : AllEncodings(samples)) {
    auto it = NewIterator(chunk);
    for (int target = 3; target <= 6993; target += 333) {  // the last time is 6993
      ASSERT_TRUE(it->Seek(target));
      const int64_t want = (target + 6) / 7 * 7;
      ASSERT_EQ(it->At().t, want);
      ASSERT_EQ(it->At().v, want / 7 * 0.25);
    }
    EXPECT_FALSE(it->Seek(6994));
    EXPECT_TRUE(it->status().ok());
  }
}

TEST(ChunkTest, ErrorSurfacesAfterTheSamplesBeforeIt) {
  auto samples = Regular(100, 0, 1000, [](int i) { return i * 1.5; });
  auto chunk = EncodeXor(samples);
  chunk.resize(chunk.size() / 2);  // loses the second half
  auto it = NewIterator(chunk);
  int n = 0;
  while (it->Next()) {
    ASSERT_EQ(it->At().t, samples[n].t);
    ++n;
  }
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 100);
  EXPECT_FALSE(it->status().ok());
  EXPECT_FALSE(it->Next());
  EXPECT_FALSE(it->Seek(0));
}

TEST(ChunkTest, CountSamplesMatchesDecoding) {
  std::mt19937_64 rng(5);
  for (int n : {1, 2, 3, 31, 32, 33, 120, 241, 1000}) {
    auto samples = chunktest::RandomSeries(rng, n);
    for (const auto& chunk : AllEncodings(samples)) {
      Result<int> count = CountSamples(chunk);
      ASSERT_TRUE(count.ok());
      EXPECT_EQ(*count, n);
      EXPECT_EQ(DecodeAll(chunk).samples.size(), static_cast<size_t>(n));
    }
  }
}

TEST(ChunkTest, UnknownAndEmptyChunksAreErrors) {
  const std::vector<uint8_t> empty;
  EXPECT_FALSE(CountSamples(empty).ok());
  auto it = NewIterator(empty);
  EXPECT_FALSE(it->Next());
  EXPECT_FALSE(it->status().ok());
  const std::vector<uint8_t> unknown = {0x7f, 1, 2, 3};
  EXPECT_FALSE(CountSamples(unknown).ok());
  it = NewIterator(unknown);
  EXPECT_FALSE(it->Seek(0));
  EXPECT_NE(it->status().message().find("unknown encoding"), std::string::npos);
}

TEST(ChunkTest, EncodingNames) {
  EXPECT_EQ(EncodingName(1), "xor");
  EXPECT_EQ(EncodingName(2), "packed");
  EXPECT_EQ(EncodingName(0), "unknown");
  EXPECT_EQ(EncodingName(200), "unknown");
}

// The values the agent exports, computed the way it computes them
// (src/gpu/collector.cc), stored exactly and compactly.
TEST(ChunkTest, AgentValuesAreExactAndCompact) {
  struct Case {
    const char* name;
    double (*value)(int);
    double max_bytes_per_sample;
  };
  const Case cases[] = {
      {"power W from mW", [](int i) { return (300000 + (i * 7919) % 50000) / 1000.0; }, 2.5},
      {"utilization from %", [](int i) { return ((i * 37) % 101) / 100.0; }, 1.2},
      {"clock Hz from MHz", [](int i) { return (1980 - 15 * (i % 3)) * 1e6; }, 0.5},
      {"energy J from mJ", [](int i) { return (1e9 + i * 9000000.0 + (i * 7) % 999) / 1000.0; },
       2.0},
      {"event s from ns", [](int i) { return (123456789012.0 + i * 1500000000.0) / 1e9; }, 0.5},
      {"temperature", [](int i) { return 40.0 + (i % 5); }, 0.6},
  };
  for (const Case& c : cases) {
    auto samples = Regular(120, 1700000000000, 15000, c.value);
    auto best = EncodeBest(samples);
    EXPECT_TRUE(RoundTrips(best, samples)) << c.name;
    EXPECT_LE(double(best.size()) / samples.size(), c.max_bytes_per_sample)
        << c.name << ": " << best.size() << " bytes";
  }
}

TEST(ChunkTest, EveryMilliwattValueIsExact) {
  // All of 0..2000 W in mW steps, in chunks of 120: each mW / 1000.0 must
  // come back bit for bit.
  std::vector<Sample> samples;
  for (int mw = 0; mw <= 2000000; ++mw) {
    samples.push_back({int64_t{mw} * 1000, mw / 1000.0});
    if (samples.size() == 120 || mw == 2000000) {
      auto best = EncodeBest(samples);
      ASSERT_EQ(best[0], static_cast<uint8_t>(Encoding::kPacked)) << mw;
      ASSERT_TRUE(RoundTrips(best, samples)) << mw;
      samples.clear();
    }
  }
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
