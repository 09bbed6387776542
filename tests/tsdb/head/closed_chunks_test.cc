// ClosedChunks (one exact-size buffer per series) and the head's retiring
// of replaced buffers while snapshots still read them.
#include "tsdb/head/closed_chunks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "head_test_util.h"
#include "tsdb/chunkenc/chunk.h"

namespace gpumon::tsdb::head {
namespace {

using testing::AppendOk;
using testing::M;
using testing::ReadAll;
using testing::SameSamples;

std::vector<uint8_t> Bytes(size_t n, uint8_t fill) { return std::vector<uint8_t>(n, fill); }

std::vector<ClosedChunks::Entry> Entries(const ClosedChunks& c) {
  std::vector<ClosedChunks::Entry> out;
  for (auto it = c.begin(); !it.Done(); it.Advance()) out.push_back(it.Get());
  return out;
}

TEST(ClosedChunksTest, AppendKeepsOrderAndExactSize) {
  ClosedChunks c;
  EXPECT_TRUE(c.empty());
  const auto a = Bytes(7, 0xaa), b = Bytes(300, 0xbb);
  EXPECT_EQ(c.Append({-5, 10, 3, a}), nullptr);  // nothing to retire yet
  uint8_t* old = c.Append({20, 1LL << 40, 65535, b});
  ASSERT_NE(old, nullptr);
  // The retired buffer still holds the first entry, so a reader's span into
  // it stays readable until the caller frees it.
  // First header: zigzag(-5 - 0), 10 - -5, 3, 7: one varint byte each.
  EXPECT_EQ(old[4], 0xaa);
  delete[] old;
  EXPECT_EQ(c.size(), 2u);
  // Second header: zigzag(20 - 10) (1 byte), 2^40 - 20 (6), 65535 (3), 300 (2).
  EXPECT_EQ(c.buffer_bytes(), 4 + 12 + a.size() + b.size());
  auto e = Entries(c);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].mint, -5);
  EXPECT_EQ(e[0].maxt, 10);
  EXPECT_EQ(e[0].num_samples, 3u);
  EXPECT_EQ(std::vector<uint8_t>(e[0].bytes.begin(), e[0].bytes.end()), a);
  EXPECT_EQ(e[1].mint, 20);
  EXPECT_EQ(e[1].maxt, 1LL << 40);
  EXPECT_EQ(e[1].num_samples, 65535u);
  EXPECT_EQ(std::vector<uint8_t>(e[1].bytes.begin(), e[1].bytes.end()), b);
  EXPECT_EQ(c.front().mint, -5);
  EXPECT_EQ(c.back().mint, 20);
}

// A full head's chunk (120 samples at 15 s, a 2023 timestamp) costs a
// dozen header bytes (22 with fixed-width fields), the ones after it fewer
// (their mint is a delta).
TEST(ClosedChunksTest, HeadersOfHeadChunksAreSmall) {
  const int64_t t0 = 1'700'000'000'000;
  const auto a = Bytes(150, 1), b = Bytes(20, 2);
  const ClosedChunks::Entry e0{t0, t0 + 119 * 15'000, 120, a};
  const ClosedChunks::Entry e1{t0 + 120 * 15'000, t0 + 239 * 15'000, 120, b};
  // zigzag(t0) has 42 bits (6 bytes), 119 * 15 s 21 bits (3), 120 (1), 150 (2).
  EXPECT_EQ(ClosedChunks::HeaderBytes(e0, 0), 12u);
  // zigzag(15 s) (3 bytes), 119 * 15 s (3), 120 (1), 20 (1).
  EXPECT_EQ(ClosedChunks::HeaderBytes(e1, e0.maxt), 8u);
  ClosedChunks c;
  delete[] c.Append(e0);
  delete[] c.Append(e1);
  EXPECT_EQ(c.buffer_bytes(),
            ClosedChunks::HeaderBytes(e0, 0) + ClosedChunks::HeaderBytes(e1, e0.maxt) + 170);
  EXPECT_EQ(c.back().mint, e1.mint);
  EXPECT_EQ(c.back().maxt, e1.maxt);
  EXPECT_EQ(c.back().num_samples, 120u);
}

// Delta-coded headers still hold any int64 times exactly.
TEST(ClosedChunksTest, ExtremeTimesRoundTrip) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  const auto a = Bytes(1, 9), b = Bytes(2, 8), d = Bytes(3, 7);
  ClosedChunks c;
  delete[] c.Assign(
      std::vector<ClosedChunks::Entry>{{lo, lo + 1, 2, a}, {-1, 0, 1, b}, {hi - 1, hi, 70000, d}});
  auto e = Entries(c);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].mint, lo);
  EXPECT_EQ(e[0].maxt, lo + 1);
  EXPECT_EQ(e[1].mint, -1);
  EXPECT_EQ(e[1].maxt, 0);
  EXPECT_EQ(e[2].mint, hi - 1);
  EXPECT_EQ(e[2].maxt, hi);
  EXPECT_EQ(e[2].num_samples, 70000u);
  EXPECT_EQ(std::vector<uint8_t>(e[2].bytes.begin(), e[2].bytes.end()), d);
  EXPECT_LE(c.buffer_bytes(), 3 * ClosedChunks::kMaxHeaderBytes + 6);
}

TEST(ClosedChunksTest, AssignFromOwnEntriesAndToEmpty) {
  ClosedChunks c;
  const auto a = Bytes(4, 1), b = Bytes(5, 2), d = Bytes(6, 3);
  delete[] c.Append({0, 1, 2, a});
  delete[] c.Append({2, 3, 2, b});
  delete[] c.Append({4, 5, 2, d});
  // Keep the last two; their spans point into the buffer being replaced.
  auto e = Entries(c);
  std::vector<ClosedChunks::Entry> keep(e.begin() + 1, e.end());
  delete[] c.Assign(keep);
  e = Entries(c);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].mint, 2);
  EXPECT_EQ(std::vector<uint8_t>(e[1].bytes.begin(), e[1].bytes.end()), d);
  delete[] c.Assign({});
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.buffer_bytes(), 0u);
}

// A snapshot taken before later commits replace its series' closed-chunk
// buffer (and before the epoch it holds was rotated by another cut) must
// still read its data: bytes retired in a later epoch outlive older readers.
TEST(ClosedChunksTest, OldSnapshotSurvivesLaterCutsAndRotations) {
  HeadOptions opts;
  opts.samples_per_chunk = 4;
  Head head(opts);
  Labels x{{"__name__", "x"}}, y{{"__name__", "y"}};
  std::vector<Sample> want;
  int64_t t = 0;
  auto append = [&](const Labels& l, int n) {
    auto app = head.Appender();
    for (int i = 0; i < n; ++i, ++t) {
      AppendOk(app.get(), l, t * 1000, static_cast<double>(t) * 0.1);
      if (&l == &x) want.push_back({t * 1000, static_cast<double>(t) * 0.1});
    }
    ASSERT_TRUE(app->Commit().ok());
  };
  append(x, 9);  // two closed chunks + one open sample
  append(y, 5);
  auto q = head.Querier(kMinTime, kMaxTime);
  auto set = q->Select(std::vector<Matcher>{M(MatchType::kEqual, "__name__", "x")});
  ASSERT_TRUE(set->Next());
  auto it = set->Iterator();
  const std::vector<Sample> snapshot = want;
  append(y, 4);  // cuts y while the snapshot holds the current epoch
  for (int round = 0; round < 50; ++round) append(x, 4);  // cuts x every time
  std::vector<Sample> got;
  while (it->Next()) got.push_back(it->At());
  ASSERT_TRUE(it->status().ok()) << it->status().message();
  EXPECT_TRUE(SameSamples(got, snapshot));
  auto all = ReadAll(head, {M(MatchType::kEqual, "__name__", "x")});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(SameSamples(all[0].samples, want));
}

}  // namespace
}  // namespace gpumon::tsdb::head
