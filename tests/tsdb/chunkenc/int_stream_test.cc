// The packed encoding's integer streams (int_stream.h): every order and
// kind round-trips any int64 sequence, read in any slicing.
#include "tsdb/chunkenc/int_stream.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

namespace gpumon::tsdb::chunkenc {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Decodes n values reading `slice` at a time.
std::vector<int64_t> Decode(const std::vector<uint8_t>& bytes, int n, int slice) {
  IntStreamReader reader;
  const uint8_t* p = bytes.data();
  EXPECT_TRUE(reader.Init(&p, bytes.data() + bytes.size(), n));
  EXPECT_EQ(p, bytes.data() + bytes.size()) << "stream length";
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int i = 0; i < n; i += slice) {
    EXPECT_TRUE(reader.Read(std::min(slice, n - i), out.data() + i));
  }
  return out;
}

std::vector<std::vector<int64_t>> Sequences() {
  std::mt19937_64 rng(1);
  std::vector<std::vector<int64_t>> out = {
      {},
      {0},
      {kMin},
      {kMax, kMin},
      {kMin, kMax, kMin, kMax, 0, -1, 1},
      {5, 5, 5, 5},
      {1700000000000, 1700000015000, 1700000030000},
  };
  std::vector<int64_t> v;
  for (int i = 0; i < 200; ++i) v.push_back(static_cast<int64_t>(rng()));
  out.push_back(v);
  v.clear();
  for (int i = 0; i < 300; ++i) v.push_back(kMax - 3 * i);  // progression at the edge
  out.push_back(v);
  v.clear();
  for (int i = 0; i < 130; ++i) v.push_back(int64_t{1024} * (i * i % 97));  // common divisor
  out.push_back(v);
  v.clear();
  // Mostly zeros with rare wide values: skewed widths test the Huffman
  // length limit.
  for (int i = 0; i < 5000; ++i) {
    v.push_back(i % 997 == 0 ? static_cast<int64_t>(rng()) : (i % 13 == 0 ? 1 : 0));
  }
  out.push_back(v);
  v.clear();
  // Counter with noise.
  int64_t c = 0;
  for (int i = 0; i < 1000; ++i) v.push_back(c += 1000000 + static_cast<int64_t>(rng() % 5000));
  out.push_back(v);
  v.clear();
  // Geometric spread of widths, so that codes get long.
  for (int i = 0; i < 4000; ++i) {
    const int w = static_cast<int>(rng() % 64);
    v.push_back(static_cast<int64_t>(rng() >> (63 - (w * w) / 64)));
  }
  out.push_back(v);
  return out;
}

TEST(IntStreamTest, EveryOrderAndKindRoundTrips) {
  for (const auto& values : Sequences()) {
    const int n = static_cast<int>(values.size());
    for (int order = 0; order <= kLinear; ++order) {
      for (IntKind kind : {IntKind::kFor, IntKind::kHuffman}) {
        std::vector<uint8_t> bytes;
        EncodeIntStream(values, order, kind, bytes);
        for (int slice : {1, 7, 32, 33, 1000}) {
          ASSERT_EQ(Decode(bytes, n, slice), values)
              << "n=" << n << " order=" << order << " kind=" << int(kind) << " slice=" << slice;
        }
      }
    }
  }
}

// Skip(k) followed by Read gives the same values as reading everything, for
// every order and kind (kEqual included, via the constant sequences), with
// skips and reads interleaved at varied lengths.
TEST(IntStreamTest, SkipThenReadMatchesFullRead) {
  for (const auto& values : Sequences()) {
    const int n = static_cast<int>(values.size());
    for (int order = 0; order <= kLinear; ++order) {
      for (IntKind kind : {IntKind::kFor, IntKind::kHuffman, IntKind::kEqual}) {
        std::vector<uint8_t> bytes;
        EncodeIntStream(values, order, kind, bytes);
        for (int pattern : {1, 2, 5, 31, 32, 70}) {
          IntStreamReader reader;
          const uint8_t* p = bytes.data();
          ASSERT_TRUE(reader.Init(&p, bytes.data() + bytes.size(), n));
          int i = 0;
          bool skip = true;
          while (i < n) {
            const int len = std::min(n - i, skip ? pattern : (pattern % 7) + 1);
            if (skip) {
              ASSERT_TRUE(reader.Skip(len));
            } else {
              std::vector<int64_t> got(static_cast<size_t>(len));
              ASSERT_TRUE(reader.Read(len, got.data()));
              for (int j = 0; j < len; ++j) {
                ASSERT_EQ(got[static_cast<size_t>(j)], values[static_cast<size_t>(i + j)])
                    << "n=" << n << " order=" << order << " kind=" << int(kind)
                    << " pattern=" << pattern << " at " << i + j;
              }
            }
            i += len;
            skip = !skip;
          }
        }
      }
    }
  }
}

// Huffman streams of small steps with spikes of 12 to 40 bits: long
// skips step over several short symbols per table lookup and over the
// spikes, longer than one lookup covers, one at a time. Every skip length
// and start must land where reading does.
TEST(IntStreamTest, HuffmanSkipOverShortAndLongSymbols) {
  std::mt19937_64 rng(9);
  std::vector<int64_t> v;
  int64_t x = 0;
  for (int i = 0; i < 3000; ++i) {
    const uint64_t r = rng() % 64;
    x += r < 40 ? 0 : (r < 50 ? 1 : (r < 60 ? -1 : (r < 63 ? 3 : 0)));
    if (r == 63) x += static_cast<int64_t>(rng() % (uint64_t{1} << (12 + rng() % 28)));
    v.push_back(x);
  }
  const int n = static_cast<int>(v.size());
  for (int order : {0, 1, kLinear}) {
    std::vector<uint8_t> bytes;
    EncodeIntStream(v, order, IntKind::kHuffman, bytes);
    for (int start : {0, 1, 5, 77}) {
      for (int skip : {43, 44, 45, 100, 257, 1000, n - start - 1}) {
        IntStreamReader reader;
        const uint8_t* p = bytes.data();
        ASSERT_TRUE(reader.Init(&p, bytes.data() + bytes.size(), n));
        ASSERT_EQ(reader.kind(), IntKind::kHuffman);
        std::vector<int64_t> got(static_cast<size_t>(n));
        ASSERT_TRUE(reader.Read(start, got.data()));
        ASSERT_TRUE(reader.Skip(skip));
        ASSERT_TRUE(reader.Read(1, got.data()));
        ASSERT_EQ(got[0], v[static_cast<size_t>(start + skip)])
            << "order " << order << " start " << start << " skip " << skip;
      }
    }
  }
}

TEST(IntStreamTest, BestIsTheSmallest) {
  for (const auto& values : Sequences()) {
    std::vector<uint8_t> best;
    EncodeIntStreamBest(values, 0, kLinear, best);
    ASSERT_EQ(Decode(best, static_cast<int>(values.size()), 64), values);
    for (int order = 0; order <= kLinear; ++order) {
      for (IntKind kind : {IntKind::kFor, IntKind::kHuffman}) {
        std::vector<uint8_t> one;
        EncodeIntStream(values, order, kind, one);
        EXPECT_LE(best.size(), one.size()) << "order " << order << " kind " << int(kind);
      }
    }
  }
}

TEST(IntStreamTest, ConstantStepsCostNoBitsPerValue) {
  std::vector<int64_t> times;
  for (int i = 0; i < 1000; ++i) times.push_back(1700000000000 + i * int64_t{15000});
  std::vector<uint8_t> bytes;
  EncodeIntStreamBest(times, 1, 2, bytes);
  EXPECT_LE(bytes.size(), 9u);  // header, first time, step
}

TEST(IntStreamTest, LinearOrderHalvesJitterCost) {
  // Scrape times with +-2 ms of jitter around a 15 s grid: deltas carry
  // the jitter twice, offsets from the line only once.
  std::mt19937_64 rng(6);
  std::vector<int64_t> times;
  for (int i = 0; i < 240; ++i) {
    times.push_back(1700000000000 + i * int64_t{15000} + static_cast<int64_t>(rng() % 5) - 2);
  }
  std::vector<uint8_t> deltas, line, best;
  EncodeIntStreamBest(times, 1, 1, deltas);
  EncodeIntStreamBest(times, kLinear, kLinear, line);
  EncodeIntStreamBest(times, 1, kLinear, best);
  EXPECT_LT(line.size(), deltas.size());
  EXPECT_EQ(best.size(), line.size());
  EXPECT_EQ(Decode(line, 240, 32), times);
}

TEST(IntStreamTest, HuffmanBeatsFrameOfReferenceOnSteps) {
  // A gauge that mostly holds still and sometimes jumps far.
  std::vector<int64_t> v;
  std::mt19937_64 rng(4);
  int64_t x = 0;
  for (int i = 0; i < 240; ++i) {
    if (rng() % 8 == 0) x = static_cast<int64_t>(rng() % 100000000);
    v.push_back(x);
  }
  std::vector<uint8_t> f, h;
  EncodeIntStream(v, 1, IntKind::kFor, f);
  EncodeIntStream(v, 1, IntKind::kHuffman, h);
  EXPECT_LT(h.size() * 2, f.size());
}

TEST(IntStreamTest, RejectsMalformedHeaders) {
  const std::vector<std::vector<uint8_t>> bad = {
      {0x0c, 0, 0},      // kind 3
      {0x20, 0, 0},      // reserved bit
      {0x00, 0, 0, 1},   // FOR with divisor 0
      {0x00, 0, 2, 65},  // FOR miniblock wider than 64 bits
      {0x04, 0, 1, 9},   // Huffman payload longer than the input
  };
  for (const auto& bytes : bad) {
    IntStreamReader reader;
    const uint8_t* p = bytes.data();
    EXPECT_FALSE(reader.Init(&p, bytes.data() + bytes.size(), 5)) << int(bytes[0]);
  }
  // A valid equal stream, for contrast.
  const std::vector<uint8_t> equal = {0x08, 6};
  IntStreamReader reader;
  const uint8_t* p = equal.data();
  ASSERT_TRUE(reader.Init(&p, equal.data() + equal.size(), 5));
  int64_t out[5];
  ASSERT_TRUE(reader.Read(5, out));
  EXPECT_EQ(out[4], 6);
  // Truncated: every prefix of a valid stream fails to initialise.
  std::vector<int64_t> values;
  for (int i = 0; i < 100; ++i) values.push_back(i * i * 7919);
  for (IntKind kind : {IntKind::kFor, IntKind::kHuffman}) {
    std::vector<uint8_t> bytes;
    EncodeIntStream(values, 1, kind, bytes);
    for (size_t len = 0; len < bytes.size(); ++len) {
      IntStreamReader r;
      const uint8_t* q = bytes.data();
      EXPECT_FALSE(r.Init(&q, bytes.data() + len, 100)) << len;
    }
  }
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
