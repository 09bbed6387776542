#include "tsdb/compact/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tsdb/sample.h"

namespace gpumon::tsdb::compact {
namespace {

constexpr int64_t H = kHourMs;
using Groups = std::vector<std::vector<std::string>>;

PlanBlock B(const std::string& id, int64_t min_h, int64_t max_h, int64_t resolution = 0,
            uint64_t tombstone_series = 0) {
  PlanBlock b;
  b.meta.id = id;
  b.meta.min_time = min_h * H;
  b.meta.max_time = max_h * H;
  b.meta.downsample_resolution_ms = resolution;
  b.meta.stats.num_series = 1000;
  b.tombstone_series = tombstone_series;
  return b;
}

// Groups with sorted ids, sorted, for order-independent comparison.
Groups Normal(Groups g) {
  for (auto& x : g) std::sort(x.begin(), x.end());
  std::sort(g.begin(), g.end());
  return g;
}

Groups PlanOf(const std::vector<PlanBlock>& blocks, int64_t exclude_after = kMaxTime) {
  return Normal(Plan(std::span<const PlanBlock>(blocks), CompactionRanges{}, exclude_after));
}

TEST(PlannerTest, NothingToDo) {
  EXPECT_TRUE(PlanOf({}).empty());
  EXPECT_TRUE(PlanOf({B("a", 0, 2)}).empty());
  // Two blocks of a range that is not yet full, the second the newest.
  EXPECT_TRUE(PlanOf({B("a", 0, 2), B("b", 2, 4)}).empty());
}

TEST(PlannerTest, FullRangeIsMerged) {
  EXPECT_EQ(PlanOf({B("a", 0, 2), B("b", 2, 4), B("c", 4, 6), B("d", 6, 8)}),
            (Groups{{"a", "b", "c"}}));
  // Input order does not matter.
  EXPECT_EQ(PlanOf({B("d", 6, 8), B("c", 4, 6), B("a", 0, 2), B("b", 2, 4)}),
            (Groups{{"a", "b", "c"}}));
  // A full range is merged even when it holds the newest block.
  EXPECT_EQ(PlanOf({B("a", 0, 2), B("b", 2, 4), B("c", 4, 6)}), (Groups{{"a", "b", "c"}}));
}

TEST(PlannerTest, RangeBeforeTheNewestBlockIsMergedWithGaps) {
  // [0,6h) holds two blocks with a gap; a newer block exists, so nothing
  // more will arrive there.
  EXPECT_EQ(PlanOf({B("a", 0, 2), B("b", 2, 4), B("z", 6, 8)}), (Groups{{"a", "b"}}));
  // The span counts, not the number of blocks: [0,2) and [4,6) span 6 h.
  EXPECT_EQ(PlanOf({B("a", 0, 2), B("c", 4, 6)}), (Groups{{"a", "c"}}));
}

TEST(PlannerTest, NewestBlocksAreExcluded) {
  auto blocks = std::vector<PlanBlock>{B("a", 0, 2), B("b", 2, 4), B("c", 4, 6)};
  EXPECT_EQ(PlanOf(blocks, 6 * H), (Groups{{"a", "b", "c"}}));
  // "c" may still receive data: the range is incomplete without it.
  EXPECT_TRUE(PlanOf(blocks, 6 * H - 1).empty());
  EXPECT_TRUE(PlanOf(blocks, 4 * H).empty());
  // Excluded blocks are never planned, not even when they overlap.
  EXPECT_TRUE(PlanOf({B("a", 0, 2), B("b", 1, 3)}, 2 * H).empty());
}

TEST(PlannerTest, OverlappingBlocksAreMergedFirst) {
  EXPECT_EQ(PlanOf({B("a", 0, 2), B("b", 1, 3)}), (Groups{{"a", "b"}}));
  // A chain of overlaps is one group; unrelated blocks are planned apart.
  EXPECT_EQ(PlanOf({B("a", 0, 2), B("b", 1, 3), B("c", 2, 5), B("x", 12, 14), B("y", 14, 16),
                    B("z", 16, 18), B("n", 18, 20)}),
            (Groups{{"a", "b", "c"}, {"x", "y", "z"}}));
  // Identical ranges overlap; touching ranges do not.
  EXPECT_EQ(PlanOf({B("a", 0, 2), B("b", 0, 2)}), (Groups{{"a", "b"}}));
  // A small block inside a big one.
  EXPECT_EQ(PlanOf({B("big", 0, 54), B("small", 10, 12)}), (Groups{{"big", "small"}}));
}

TEST(PlannerTest, TiersArePlannedSeparately) {
  constexpr int64_t k5m = 300000, k1h = 3600000;
  EXPECT_EQ(PlanOf({B("r1", 0, 2), B("r2", 2, 4), B("r3", 4, 6), B("m1", 0, 2, k5m),
                    B("m2", 2, 4, k5m), B("m3", 4, 6, k5m), B("h1", 0, 2, k1h)}),
            (Groups{{"m1", "m2", "m3"}, {"r1", "r2", "r3"}}));
  // Blocks of different tiers never count as overlapping.
  EXPECT_TRUE(PlanOf({B("r", 0, 2), B("m", 0, 2, k5m)}).empty());
}

TEST(PlannerTest, LargerRanges) {
  // Three 6 h blocks fill an 18 h range.
  EXPECT_EQ(PlanOf({B("a", 0, 6), B("b", 6, 12), B("c", 12, 18), B("d", 18, 20)}),
            (Groups{{"a", "b", "c"}}));
  // Smaller ranges go first: the 2 h blocks of [12,18) are merged to 6 h
  // before anything is merged to 18 h.
  EXPECT_EQ(PlanOf({B("a", 0, 6), B("b", 6, 12), B("c", 12, 14), B("d", 14, 16), B("e", 16, 18),
                    B("f", 18, 20)}),
            (Groups{{"c", "d", "e"}}));
  // A block bigger than a range is not put in a group of that range.
  EXPECT_EQ(PlanOf({B("a", 0, 18), B("b", 18, 20), B("c", 20, 22), B("d", 22, 24), B("e", 54, 56)}),
            (Groups{{"b", "c", "d"}}));
}

TEST(PlannerTest, NegativeTimesAlign) {
  EXPECT_EQ(PlanOf({B("a", -6, -4), B("b", -4, -2), B("c", -2, 0), B("d", 0, 2)}),
            (Groups{{"a", "b", "c"}}));
}

TEST(PlannerTest, TombstonesRewriteBigBlocksAlone) {
  // Ranges 2,6,18,54,162 h: blocks of at least 18 h are rewritten for >5%.
  EXPECT_EQ(PlanOf({B("a", 0, 54, 0, 100)}), (Groups{{"a"}}));
  EXPECT_TRUE(PlanOf({B("a", 0, 54, 0, 10)}).empty());  // 1%
  EXPECT_TRUE(PlanOf({B("a", 0, 2, 0, 100)}).empty());  // small: merged soon anyway
  // Every series deleted: rewritten whatever its size.
  EXPECT_EQ(PlanOf({B("a", 0, 2, 0, 1000)}), (Groups{{"a"}}));
  // A block planned for merging is not also planned alone.
  EXPECT_EQ(PlanOf({B("a", 0, 18, 0, 500), B("b", 18, 36), B("c", 36, 54), B("n", 54, 56)}),
            (Groups{{"a", "b", "c"}}));
  // The metas-only overload knows no tombstones.
  std::vector<block::BlockMeta> metas = {B("a", 0, 2, 0, 1000).meta};
  EXPECT_TRUE(Plan(std::span<const block::BlockMeta>(metas), CompactionRanges{}, kMaxTime).empty());
}

TEST(PlannerTest, GroupsAreDisjoint) {
  std::vector<PlanBlock> blocks;
  for (int i = 0; i < 40; ++i) blocks.push_back(B("b" + std::to_string(100 + i), 2 * i, 2 * i + 2));
  blocks.push_back(B("o1", 5, 7));
  blocks.push_back(B("t", 100, 154, 0, 200));
  auto groups = PlanOf(blocks);
  ASSERT_FALSE(groups.empty());
  std::vector<std::string> all;
  for (const auto& g : groups) {
    EXPECT_GE(g.size(), g == std::vector<std::string>{"t"} ? 1u : 2u);
    all.insert(all.end(), g.begin(), g.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

TEST(PlannerTest, Ranges) {
  EXPECT_EQ(CompactionRanges::Exponential(2 * H, 4, 3).ranges_ms,
            (std::vector<int64_t>{2 * H, 6 * H, 18 * H, 54 * H}));
  EXPECT_EQ(CompactionRanges::ForRetention(2 * H, 90 * 24 * H).ranges_ms,
            (std::vector<int64_t>{2 * H, 6 * H, 18 * H, 54 * H, 162 * H}));
  EXPECT_EQ(CompactionRanges::ForRetention(2 * H, 15 * 24 * H).ranges_ms,
            (std::vector<int64_t>{2 * H, 6 * H, 18 * H}));
  EXPECT_EQ(CompactionRanges::ForRetention(2 * H, H).ranges_ms, (std::vector<int64_t>{2 * H}));
  EXPECT_EQ(CompactionRanges::ForRetention(2 * H, 0).ranges_ms.back(), 486 * H);  // <= 31 days
  EXPECT_EQ(CompactionRanges{}.ranges_ms.front(), 2 * H);
}

}  // namespace
}  // namespace gpumon::tsdb::compact
