// Chunk cutting, bit-exact round trips through closed (re-encoded) chunks,
// and the block-cutting iteration.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "head_test_util.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::tsdb::head {
namespace {

using testing::AppendOk;
using testing::M;
using testing::ReadAll;
using testing::SameSamples;

struct CutSeries {
  Labels labels;
  std::vector<ChunkData> chunks;
  std::vector<std::vector<uint8_t>> bytes;  // copies (spans die after the call)
};

std::vector<CutSeries> Cut(const Head& head, int64_t mint, int64_t maxt) {
  std::vector<CutSeries> out;
  Status st = head.ForEachSeriesInRange(
      mint, maxt, [&](uint64_t, const Labels& l, std::span<const ChunkData> chunks) {
        CutSeries c{l, {chunks.begin(), chunks.end()}, {}};
        for (const auto& ch : chunks) c.bytes.emplace_back(ch.bytes.begin(), ch.bytes.end());
        out.push_back(std::move(c));
        return Status::Ok();
      });
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

std::vector<Sample> Decode(std::span<const uint8_t> bytes) {
  std::vector<Sample> out;
  auto it = chunkenc::NewIterator(bytes);
  while (it->Next()) out.push_back(it->At());
  EXPECT_TRUE(it->status().ok());
  return out;
}

TEST(HeadChunksTest, CutsAfterSamplesPerChunk) {
  HeadOptions opts;
  opts.samples_per_chunk = 5;
  Head head(opts);
  auto app = head.Appender();
  Labels l{{"__name__", "a"}};
  std::vector<Sample> want;
  for (int64_t t = 0; t < 12; ++t) {
    AppendOk(app.get(), l, t * 1000, static_cast<double>(t) * 1.5);
    want.push_back({t * 1000, static_cast<double>(t) * 1.5});
  }
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_EQ(head.Stats().chunks, 3u);  // 5 + 5 closed, 2 open
  auto cut = Cut(head, kMinTime, kMaxTime);
  ASSERT_EQ(cut.size(), 1u);
  ASSERT_EQ(cut[0].chunks.size(), 3u);
  EXPECT_EQ(cut[0].chunks[0].mint, 0);
  EXPECT_EQ(cut[0].chunks[0].maxt, 4000);
  EXPECT_EQ(cut[0].chunks[1].mint, 5000);
  EXPECT_EQ(cut[0].chunks[2].maxt, 11000);
  std::vector<Sample> got;
  for (const auto& b : cut[0].bytes) {
    auto part = Decode(b);
    got.insert(got.end(), part.begin(), part.end());
  }
  EXPECT_TRUE(SameSamples(got, want));
  // Closed chunks hold exactly what EncodeBest makes of their samples.
  std::vector<Sample> first(want.begin(), want.begin() + 5);
  EXPECT_EQ(cut[0].bytes[0], chunkenc::EncodeBest(first));
}

TEST(HeadChunksTest, CutsAtChunkRangeBoundariesIncludingNegativeTimes) {
  HeadOptions opts;
  opts.chunk_range_ms = 1000;
  Head head(opts);
  auto app = head.Appender();
  Labels l{{"__name__", "a"}};
  for (int64_t t : {-1500, -1100, -1000, -10, 900, 950, 1000, 1050}) {
    AppendOk(app.get(), l, t, 1);
  }
  ASSERT_TRUE(app->Commit().ok());
  auto cut = Cut(head, kMinTime, kMaxTime);
  ASSERT_EQ(cut.size(), 1u);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto& c : cut[0].chunks) ranges.emplace_back(c.mint, c.maxt);
  EXPECT_EQ(ranges, (std::vector<std::pair<int64_t, int64_t>>{
                        {-1500, -1100}, {-1000, -10}, {900, 950}, {1000, 1050}}));
}

TEST(HeadChunksTest, ClosedChunksRoundTripBitExactly) {
  HeadOptions opts;
  opts.samples_per_chunk = 120;
  Head head(opts);
  std::mt19937_64 rng(3);
  const std::vector<double> specials = {StaleNaN(),
                                        -0.0,
                                        0.0,
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::denorm_min(),
                                        std::bit_cast<double>(uint64_t{0x7ff8000000000123}),
                                        std::numeric_limits<double>::max(),
                                        std::numeric_limits<double>::lowest(),
                                        1e-300};
  struct Gen {
    Labels labels;
    std::vector<Sample> samples;
  };
  std::vector<Gen> gens = {{Labels{{"__name__", "decimal"}}, {}},
                           {Labels{{"__name__", "integer"}}, {}},
                           {Labels{{"__name__", "constant"}}, {}},
                           {Labels{{"__name__", "special"}}, {}},
                           {Labels{{"__name__", "random"}}, {}}};
  int64_t t = 1700000000000;
  for (int i = 0; i < 500; ++i) {
    t += 15000 + static_cast<int64_t>(rng() % 7) - 3;  // jittered scrape interval
    gens[0].samples.push_back({t, std::round(static_cast<double>(rng() % 100000)) / 100.0});
    gens[1].samples.push_back({t, static_cast<double>(rng() % 90)});
    gens[2].samples.push_back({t, 1410.0});
    gens[3].samples.push_back({t, specials[rng() % specials.size()]});
    gens[4].samples.push_back({t, std::bit_cast<double>(rng())});
  }
  auto app = head.Appender();
  for (const auto& g : gens) {
    for (const auto& s : g.samples) AppendOk(app.get(), g.labels, s.t, s.v);
  }
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_EQ(head.Stats().chunks, 5u * 5u);  // 4 closed + 1 open each
  for (const auto& g : gens) {
    auto got =
        ReadAll(head, {M(MatchType::kEqual, "__name__", std::string(g.labels.Get("__name__")))});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(SameSamples(got[0].samples, g.samples)) << g.labels.ToString();
  }
  // Re-encoding pays: the constant series is far below 16 bytes per sample.
  size_t constant_bytes = 0;
  for (const auto& c : Cut(head, kMinTime, kMaxTime)) {
    if (c.labels.Get("__name__") != "constant") continue;
    for (const auto& b : c.bytes) constant_bytes += b.size();
  }
  EXPECT_LT(constant_bytes, 500u * 2);
}

TEST(HeadChunksTest, ForEachSeriesInRangeRestrictsAndOrders) {
  HeadOptions opts;
  opts.samples_per_chunk = 4;
  Head head(opts);
  auto app = head.Appender();
  Labels b{{"__name__", "b"}, {"gpu", "0"}};
  Labels a{{"__name__", "a"}, {"gpu", "1"}};
  Labels outside{{"__name__", "c"}};
  for (int64_t t = 0; t < 10; ++t) {
    AppendOk(app.get(), b, t * 10, static_cast<double>(t));
    AppendOk(app.get(), a, t * 10, static_cast<double>(-t));
  }
  AppendOk(app.get(), outside, 1000, 1);
  ASSERT_TRUE(app->Commit().ok());
  // [20, 70): chunk [0,30] is cut, [40,70] trimmed to [40,60], open [80,90] out.
  auto cut = Cut(head, 20, 70);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[0].labels, a);  // label order, not insertion order
  EXPECT_EQ(cut[1].labels, b);
  for (const auto& c : cut) {
    std::vector<Sample> got;
    for (size_t i = 0; i < c.bytes.size(); ++i) {
      auto part = Decode(c.bytes[i]);
      ASSERT_FALSE(part.empty());
      EXPECT_EQ(part.front().t, c.chunks[i].mint);
      EXPECT_EQ(part.back().t, c.chunks[i].maxt);
      got.insert(got.end(), part.begin(), part.end());
    }
    ASSERT_EQ(got.size(), 5u);
    EXPECT_EQ(got.front().t, 20);
    EXPECT_EQ(got.back().t, 60);
  }
  // A closed chunk fully inside the range is passed through unchanged.
  auto whole = Cut(head, 40, 80);
  ASSERT_EQ(whole.size(), 2u);
  ASSERT_EQ(whole[0].chunks.size(), 1u);
  EXPECT_EQ(whole[0].chunks[0].mint, 40);
  EXPECT_EQ(whole[0].chunks[0].maxt, 70);
  // The callback's error stops the iteration.
  int calls = 0;
  Status st = head.ForEachSeriesInRange(kMinTime, kMaxTime, [&](uint64_t, const Labels&, auto) {
    ++calls;
    return Status::Error("stop");
  });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(calls, 1);
}

TEST(HeadChunksTest, ForEachSeriesInRangeMergesOutOfOrderSamples) {
  HeadOptions opts;
  opts.ooo_window_ms = 1000;
  Head head(opts);
  auto app = head.Appender();
  Labels l{{"__name__", "a"}};
  for (int64_t t : {100, 300, 500}) AppendOk(app.get(), l, t, static_cast<double>(t));
  ASSERT_TRUE(app->Commit().ok());
  AppendOk(app.get(), l, 200, 200);
  AppendOk(app.get(), l, 400, 400);
  ASSERT_TRUE(app->Commit().ok());
  auto cut = Cut(head, 0, 1000);
  ASSERT_EQ(cut.size(), 1u);
  std::vector<Sample> got;
  for (const auto& b : cut[0].bytes) {
    auto part = Decode(b);
    got.insert(got.end(), part.begin(), part.end());
  }
  EXPECT_TRUE(SameSamples(got, {{100, 100}, {200, 200}, {300, 300}, {400, 400}, {500, 500}}));
}

}  // namespace
}  // namespace gpumon::tsdb::head
