#include "tsdb/compact/compactor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <set>

#include "tsdb/compact/block_test_util.h"
#include "tsdb/matcher.h"

namespace gpumon::tsdb::compact {
namespace {

namespace fs = std::filesystem;
using testing::kHour;
using testing::ReadBlock;
using testing::SameSeries;
using testing::SeriesLabels;
using testing::SeriesMap;

Matcher Eq(const std::string& name, const std::string& value) {
  return std::move(Matcher::Make(MatchType::kEqual, name, value)).value();
}

std::shared_ptr<block::Block> MustCompact(const std::string& dir,
                                          std::vector<std::shared_ptr<block::Block>> blocks,
                                          CompactStats* stats = nullptr,
                                          CompactOptions options = {}) {
  auto out = Compact(dir, blocks, options, stats);
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (!out.ok()) return nullptr;
  return testing::OpenBlock(*out);
}

// Merges b into a by time; on equal timestamps a's sample wins.
void MergeInto(SeriesMap* a, const SeriesMap& b) {
  for (const auto& [labels, samples] : b) {
    auto& dst = (*a)[labels];
    std::vector<Sample> out;
    size_t i = 0, j = 0;
    while (i < dst.size() || j < samples.size()) {
      if (j == samples.size() || (i < dst.size() && dst[i].t <= samples[j].t)) {
        if (j < samples.size() && dst[i].t == samples[j].t) ++j;
        out.push_back(dst[i++]);
      } else {
        out.push_back(samples[j++]);
      }
    }
    dst = std::move(out);
  }
}

class CompactorTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
};

TEST_F(CompactorTest, ConsecutiveBlocksMergeBitExactByCopyingChunks) {
  std::mt19937_64 rng(1);
  std::vector<SeriesMap> parts(3);
  SeriesMap all;
  std::vector<std::shared_ptr<block::Block>> blocks;
  uint64_t chunks = 0, samples = 0;
  for (int b = 0; b < 3; ++b) {
    for (size_t i = 0; i < 200; ++i) {
      if ((i + static_cast<size_t>(b)) % 7 == 0) continue;  // series absent from some blocks
      parts[b][SeriesLabels(i)] =
          testing::RandomSamples(rng, b * 2 * kHour, (b + 1) * 2 * kHour, 15000);
    }
    MergeInto(&all, parts[b]);
    blocks.push_back(
        testing::WriteBlock(dir_.path(), parts[b], b * 2 * kHour, (b + 1) * 2 * kHour));
    ASSERT_NE(blocks.back(), nullptr);
    chunks += blocks.back()->meta().stats.num_chunks;
    samples += blocks.back()->meta().stats.num_samples;
  }
  CompactStats st;
  auto out = MustCompact(dir_.path(), blocks, &st);
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(SameSeries(all, ReadBlock(*out)));
  ASSERT_TRUE(out->Verify().ok()) << out->Verify().message();

  // Nothing overlaps and nothing is deleted: every chunk is copied.
  EXPECT_EQ(st.chunks_copied, chunks);
  EXPECT_EQ(st.chunks_reencoded, 0u);
  EXPECT_EQ(st.series, all.size());

  const block::BlockMeta& m = out->meta();
  EXPECT_EQ(m.min_time, 0);
  EXPECT_EQ(m.max_time, 6 * kHour);
  EXPECT_EQ(m.compaction_level, 2);
  EXPECT_EQ(m.downsample_resolution_ms, 0);
  EXPECT_EQ(m.stats.num_samples, samples);
  EXPECT_EQ(m.stats.num_chunks, chunks);
  EXPECT_EQ(m.stats.num_series, all.size());
  std::vector<std::string> ids;
  for (const auto& b : blocks) ids.push_back(b->meta().id);
  std::vector<std::string> sorted_ids = ids;
  std::sort(sorted_ids.begin(), sorted_ids.end());
  EXPECT_EQ(m.sources, sorted_ids);
  ASSERT_EQ(m.parents.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(m.parents[i],
              (block::BlockParent{ids[i], blocks[i]->meta().min_time, blocks[i]->meta().max_time}));
  }
  // The inputs are untouched.
  for (int b = 0; b < 3; ++b) {
    EXPECT_TRUE(fs::exists(blocks[b]->dir()));
    EXPECT_TRUE(SameSeries(parts[b], ReadBlock(*testing::OpenBlock(blocks[b]->dir()))));
  }
}

TEST_F(CompactorTest, OverlappingBlocksAreMergedAndDeduplicated) {
  std::mt19937_64 rng(2);
  SeriesMap a, b;
  for (size_t i = 0; i < 100; ++i) {
    a[SeriesLabels(i)] = testing::RandomSamples(rng, 0, 2 * kHour, 10000);
    if (i % 4 == 3) continue;  // only in a: its chunks are copied
    auto& s = b[SeriesLabels(i)];
    s = testing::RandomSamples(rng, kHour, 3 * kHour, 7000);
    // Some samples at exactly a's timestamps, with other values.
    for (const Sample& x : a[SeriesLabels(i)]) {
      if (x.t >= kHour && rng() % 5 == 0) s.push_back({x.t, x.v + 1});
    }
    std::sort(s.begin(), s.end(), [](const Sample& p, const Sample& q) { return p.t < q.t; });
    s.erase(std::unique(s.begin(), s.end(),
                        [](const Sample& p, const Sample& q) { return p.t == q.t; }),
            s.end());
  }
  for (size_t i = 200; i < 210; ++i)
    b[SeriesLabels(i)] = testing::RandomSamples(rng, kHour, 3 * kHour, 15000);
  auto ba = testing::WriteBlock(dir_.path(), a, 0, 2 * kHour);
  auto bb = testing::WriteBlock(dir_.path(), b, kHour, 3 * kHour);
  ASSERT_TRUE(ba && bb);

  CompactOptions opts;
  opts.samples_per_chunk = 50;
  CompactStats st;
  auto ab = MustCompact(dir_.path(), {ba, bb}, &st, opts);
  ASSERT_NE(ab, nullptr);
  SeriesMap want_a = a;
  MergeInto(&want_a, b);
  EXPECT_TRUE(SameSeries(want_a, ReadBlock(*ab)));
  EXPECT_GT(st.chunks_copied, 0u);
  EXPECT_GT(st.chunks_reencoded, 0u);
  EXPECT_GT(st.samples_dropped, 0u);  // the duplicates
  EXPECT_EQ(ab->meta().min_time, 0);
  EXPECT_EQ(ab->meta().max_time, 3 * kHour);

  // Merged chunks respect the chunk size and do not overlap.
  auto set = ab->ChunkSelect({}, kMinTime, kMaxTime);
  while (set->Next()) {
    int64_t prev_max = kMinTime;
    for (const auto& c : set->chunks()) {
      auto n = chunkenc::CountSamples(c.data);
      ASSERT_TRUE(n.ok());
      EXPECT_LE(*n, 120);
      EXPECT_GT(c.meta.mint, prev_max);
      prev_max = c.meta.maxt;
    }
  }

  // The other order: b's samples win the ties.
  auto ba2 = MustCompact(dir_.path(), {bb, ba});
  ASSERT_NE(ba2, nullptr);
  SeriesMap want_b = b;
  MergeInto(&want_b, a);
  EXPECT_TRUE(SameSeries(want_b, ReadBlock(*ba2)));
  EXPECT_FALSE(SameSeries(want_a, ReadBlock(*ba2)));
}

TEST_F(CompactorTest, TombstonesArePurged) {
  std::mt19937_64 rng(3);
  SeriesMap data;
  for (size_t i = 0; i < 160; ++i) {
    data[SeriesLabels(i)] = testing::RandomSamples(rng, 0, 2 * kHour, 15000);
  }
  auto blk = testing::WriteBlock(dir_.path(), data, 0, 2 * kHour);
  ASSERT_NE(blk, nullptr);
  std::vector<Matcher> gpu3 = {Eq("gpu", "3")};
  std::vector<Matcher> gpu5 = {Eq("gpu", "5")};
  std::vector<Matcher> one = {Eq("gpu", "6"), Eq("instance", "node-2")};
  ASSERT_TRUE(blk->Delete(gpu3, kMinTime, kMaxTime).ok());  // whole series
  ASSERT_TRUE(blk->Delete(gpu5, kHour / 2, kHour).ok());    // a middle part
  ASSERT_TRUE(blk->Delete(gpu5, 100 * 60 * 1000, 101 * 60 * 1000).ok());
  ASSERT_TRUE(blk->Delete(one, 0, 30 * 60 * 1000).ok());  // the first chunk
  const SeriesMap visible = ReadBlock(*blk);              // tombstones applied
  ASSERT_LT(visible.size(), data.size());

  CompactStats st;
  auto out = MustCompact(dir_.path(), {blk}, &st);
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(out->tombstones()->empty());
  EXPECT_TRUE(SameSeries(visible, ReadBlock(*out)));
  uint64_t n = 0;
  for (const auto& [l, s] : visible) n += s.size();
  EXPECT_EQ(out->meta().stats.num_samples, n);
  EXPECT_EQ(out->meta().stats.num_series, visible.size());
  auto postings = out->Postings(gpu3);
  ASSERT_TRUE(postings.ok());
  EXPECT_TRUE(postings->empty());
  // Untouched chunks were still copied.
  EXPECT_GT(st.chunks_copied, st.chunks_reencoded);
  EXPECT_GT(st.samples_dropped, 0u);
}

TEST_F(CompactorTest, TombstonesApplyOnlyToTheirOwnBlock) {
  std::mt19937_64 rng(4);
  SeriesMap a, b;
  const Labels l = SeriesLabels(1);
  a[l] = testing::RandomSamples(rng, 0, 2 * kHour, 10000, false);
  b[l] = testing::RandomSamples(rng, kHour, 3 * kHour, 10000, false);
  auto ba = testing::WriteBlock(dir_.path(), a, 0, 2 * kHour);
  auto bb = testing::WriteBlock(dir_.path(), b, kHour, 3 * kHour);
  std::vector<Matcher> ms = {Eq("gpu", "1")};
  ASSERT_TRUE(ba->Delete(ms, kHour, 2 * kHour).ok());
  SeriesMap want = ReadBlock(*ba);
  MergeInto(&want, b);
  auto out = MustCompact(dir_.path(), {ba, bb});
  ASSERT_NE(out, nullptr);
  const SeriesMap got = ReadBlock(*out);
  EXPECT_TRUE(SameSeries(want, got));
  // b's samples inside a's deleted range survive.
  size_t in_range = 0;
  for (const Sample& s : got.at(l)) in_range += (s.t >= kHour && s.t < 2 * kHour);
  EXPECT_GT(in_range, 0u);
}

TEST_F(CompactorTest, EverythingDeletedGivesAnEmptyBlock) {
  std::mt19937_64 rng(5);
  SeriesMap data;
  for (size_t i = 0; i < 10; ++i)
    data[SeriesLabels(i)] = testing::RandomSamples(rng, 0, 2 * kHour, 15000);
  auto blk = testing::WriteBlock(dir_.path(), data, 0, 2 * kHour);
  ASSERT_TRUE(blk->Delete({}, kMinTime, kMaxTime).ok());
  auto out = MustCompact(dir_.path(), {blk});
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->meta().stats.num_series, 0u);
  EXPECT_EQ(out->meta().stats.num_samples, 0u);
  EXPECT_EQ(out->meta().min_time, 0);
  EXPECT_EQ(out->meta().max_time, 2 * kHour);
  EXPECT_TRUE(ReadBlock(*out).empty());
}

TEST_F(CompactorTest, LevelsAndSourcesAccumulate) {
  std::mt19937_64 rng(6);
  std::vector<std::shared_ptr<block::Block>> blocks;
  SeriesMap all;
  for (int b = 0; b < 4; ++b) {
    SeriesMap d;
    for (size_t i = 0; i < 5; ++i) {
      d[SeriesLabels(i)] = testing::RandomSamples(rng, b * 2 * kHour, (b + 1) * 2 * kHour, 60000);
    }
    MergeInto(&all, d);
    blocks.push_back(testing::WriteBlock(dir_.path(), d, b * 2 * kHour, (b + 1) * 2 * kHour));
  }
  auto c1 = MustCompact(dir_.path(), {blocks[0], blocks[1]});
  auto c2 = MustCompact(dir_.path(), {c1, blocks[2]});
  auto c3 = MustCompact(dir_.path(), {blocks[3], c2});
  ASSERT_TRUE(c1 && c2 && c3);
  EXPECT_EQ(c2->meta().compaction_level, 3);
  EXPECT_EQ(c3->meta().compaction_level, 4);
  std::set<std::string> want;
  for (const auto& b : blocks) want.insert(b->meta().id);
  EXPECT_EQ(std::set<std::string>(c3->meta().sources.begin(), c3->meta().sources.end()), want);
  EXPECT_TRUE(std::is_sorted(c3->meta().sources.begin(), c3->meta().sources.end()));
  EXPECT_TRUE(SameSeries(all, ReadBlock(*c3)));
}

TEST_F(CompactorTest, RejectsBadInput) {
  SeriesMap d = {{SeriesLabels(0), {{1, 1.0}}}};
  auto raw = testing::WriteBlock(dir_.path(), d, 0, 2 * kHour);
  auto ds = testing::WriteBlock(dir_.path(), d, 0, 2 * kHour, 120, 300000);
  EXPECT_FALSE(Compact(dir_.path(), {}).ok());
  std::vector<std::shared_ptr<block::Block>> mixed = {raw, ds};
  EXPECT_FALSE(Compact(dir_.path(), mixed).ok());
  std::vector<std::shared_ptr<block::Block>> twice = {raw, raw};
  EXPECT_FALSE(Compact(dir_.path(), twice).ok());
  // Downsampled blocks compact among themselves and keep their resolution.
  std::vector<std::shared_ptr<block::Block>> one = {ds};
  auto out = Compact(dir_.path(), one);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(testing::OpenBlock(*out)->meta().downsample_resolution_ms, 300000);
}

TEST_F(CompactorTest, PlanReadsTombstonesFromOpenBlocks) {
  std::mt19937_64 rng(7);
  SeriesMap d;
  for (size_t i = 0; i < 40; ++i)
    d[SeriesLabels(i)] = testing::RandomSamples(rng, 0, 2 * kHour, 60000);
  auto blk = testing::WriteBlock(dir_.path(), d, 0, 2 * kHour);
  std::vector<std::shared_ptr<block::Block>> blocks = {blk};
  EXPECT_TRUE(Plan(blocks, CompactionRanges{}, kMaxTime).empty());
  ASSERT_TRUE(blk->Delete({}, kMinTime, kMaxTime).ok());
  EXPECT_EQ(Plan(blocks, CompactionRanges{}, kMaxTime),
            (std::vector<std::vector<std::string>>{{blk->meta().id}}));
}

}  // namespace
}  // namespace gpumon::tsdb::compact
