// SeriesCache on its own (lookups, the byte budget, concurrent use) and as
// the block querier uses it: answers must not depend on whether the cache is
// cold, warm, evicting or off, and tombstones added after it warmed up must
// still apply.
#include "tsdb/block/series_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "tsdb/block/block.h"
#include "tsdb/block/block_fixture.h"

namespace gpumon::tsdb::block {
namespace {

using index::ChunkMeta;
using testing::BlockTestBase;
using testing::Drain;
using testing::SamplesFor;
using tsdb::testing::M;
using T = MatchType;

Labels SeriesLabels(int i) {
  // Long values, so the strings live on the heap and count against the budget.
  return Labels{{"__name__", "gpu_temperature_celsius"},
                {"uuid", "GPU-" + std::to_string(i) + "-0000-0000-0000-000000000000"}};
}

TEST(SeriesCacheTest, ReturnsWhatWasPut) {
  SeriesCache c(1 << 20);
  Labels l;
  std::vector<ChunkMeta> chunks{{9, 9, 9}};
  EXPECT_FALSE(c.Get(7, &l, &chunks));
  const std::vector<ChunkMeta> want{{0, 10, 1}, {11, 20, 2}};
  c.Put(7, SeriesLabels(7), want);
  ASSERT_TRUE(c.Get(7, &l, &chunks));
  EXPECT_EQ(l, SeriesLabels(7));
  EXPECT_EQ(chunks, want);  // replaced, not appended
  EXPECT_FALSE(c.Get(8, &l, &chunks));
  EXPECT_EQ(c.size(), 1u);
  EXPECT_GT(c.bytes(), 0u);
}

TEST(SeriesCacheTest, StaysWithinBudgetDroppingOldestFirst) {
  const size_t budget = 64 * 1024;
  SeriesCache c(budget);
  const std::vector<ChunkMeta> chunks{{0, 10, 1}};
  // Ids of one shard (the cache shards by id modulo 16), in insertion order.
  std::vector<uint64_t> ids;
  for (uint64_t id = 0; id < 16 * 400; id += 16) ids.push_back(id);
  for (uint64_t id : ids) {
    c.Put(id, SeriesLabels(static_cast<int>(id)), chunks);
    EXPECT_LE(c.bytes(), budget);
  }
  ASSERT_LT(c.size(), ids.size());  // something was dropped
  ASSERT_GT(c.size(), 0u);
  // What is left is the newest ones.
  Labels l;
  std::vector<ChunkMeta> got;
  const size_t kept = c.size();
  for (size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(c.Get(ids[k], &l, &got), k >= ids.size() - kept) << k;
  }
}

TEST(SeriesCacheTest, ZeroBudgetDisables) {
  SeriesCache c(0);
  c.Put(1, SeriesLabels(1), {});
  Labels l;
  std::vector<ChunkMeta> chunks;
  EXPECT_FALSE(c.Get(1, &l, &chunks));
  EXPECT_EQ(c.size(), 0u);
}

TEST(SeriesCacheTest, ConcurrentReadersAndWritersAgree) {
  SeriesCache c(256 * 1024);  // small enough to evict while the threads run
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&c, &wrong, t] {
      Labels l;
      std::vector<ChunkMeta> chunks;
      for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 2000; ++i) {
          const uint64_t id = static_cast<uint64_t>((i * 7 + t) % 2000);
          if (c.Get(id, &l, &chunks)) {
            const int n = static_cast<int>(id);
            if (l != SeriesLabels(n) || chunks.size() != 1 || chunks[0].ref != id ||
                l.Hash() != SeriesLabels(n).Hash()) {
              ++wrong[t];
            }
          } else {
            c.Put(id, SeriesLabels(static_cast<int>(id)), std::vector<ChunkMeta>{{0, 1, id}});
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << t;
  EXPECT_LE(c.bytes(), 256u * 1024);
}

class BlockSeriesCacheTest : public BlockTestBase {
 protected:
  void SetUp() override {
    BlockTestBase::SetUp();
    series_ = tsdb::testing::MakeTestSeries(600);
    dir_ = WriteBlock(series_);
  }

  std::shared_ptr<Block> Open(size_t cache_bytes) {
    auto b = Block::Open(dir_, {.series_cache_bytes = cache_bytes});
    EXPECT_TRUE(b.ok()) << b.status().message();
    return b.ok() ? *b : nullptr;
  }

  // Every selected series with its samples in [mint, maxt].
  struct Result {
    std::vector<Labels> labels;
    std::vector<std::vector<Sample>> samples;
  };
  static Result Query(const Block& b, const std::vector<Matcher>& ms, int64_t mint, int64_t maxt) {
    Result r;
    auto set = b.NewQuerier(mint, maxt)->Select(ms);
    while (set->Next()) {
      r.labels.push_back(set->labels());
      auto it = set->Iterator();
      r.samples.push_back(Drain(*it));
    }
    EXPECT_TRUE(set->status().ok()) << set->status().message();
    return r;
  }

  // Recomputed from the fixture's data: the expected answer.
  Result Want(const std::vector<Matcher>& ms, int64_t mint, int64_t maxt) {
    Result r;
    for (uint64_t i : tsdb::testing::BruteForce(series_, ms)) {
      std::vector<Sample> s;
      for (const Sample& x : SamplesFor(i)) {
        if (x.t >= mint && x.t <= maxt) s.push_back(x);
      }
      if (s.empty()) continue;
      r.labels.push_back(series_[i]);
      r.samples.push_back(std::move(s));
    }
    return r;
  }

  static void ExpectSame(const Result& got, const Result& want) {
    ASSERT_EQ(got.labels, want.labels);
    ASSERT_EQ(got.samples.size(), want.samples.size());
    for (size_t i = 0; i < got.samples.size(); ++i) {
      ASSERT_EQ(got.samples[i].size(), want.samples[i].size()) << i;
      for (size_t k = 0; k < got.samples[i].size(); ++k) {
        ASSERT_TRUE(testing::SameSample(got.samples[i][k], want.samples[i][k])) << i << " " << k;
      }
    }
  }

  std::vector<Labels> series_;
  std::string dir_;
};

TEST_F(BlockSeriesCacheTest, ColdWarmEvictingAndDisabledCachesAnswerAlike) {
  const std::vector<Matcher> ms{M(T::kRegexMatch, "instance", "node-[1-4]")};
  const int64_t mint = 1800 * 1000 + 7, maxt = 5400 * 1000;
  const Result want = Want(ms, mint, maxt);
  ASSERT_GT(want.labels.size(), 20u);
  for (size_t bytes : {Block::kAutoSeriesCache, size_t{16 * 1024}, size_t{0}}) {
    auto b = Open(bytes);
    ASSERT_NE(b, nullptr);
    ExpectSame(Query(*b, ms, mint, maxt), want);  // cold
    ExpectSame(Query(*b, ms, mint, maxt), want);  // warm (or evicting, or off)
    // A narrower range over the same cached entries.
    ExpectSame(Query(*b, ms, 100 * 1000, 200 * 1000), Want(ms, 100 * 1000, 200 * 1000));
    if (bytes == 0) {
      EXPECT_EQ(b->series_cache().size(), 0u);
    } else if (bytes == Block::kAutoSeriesCache) {
      EXPECT_EQ(b->series_cache().size(), want.labels.size());
    } else {  // about 1 KiB a shard: room for one or two entries each
      EXPECT_GT(b->series_cache().size(), 0u);
      EXPECT_LT(b->series_cache().size(), want.labels.size());
      EXPECT_LE(b->series_cache().bytes(), size_t{16 * 1024});
    }
  }
}

TEST_F(BlockSeriesCacheTest, TombstonesAddedAfterWarmUpApply) {
  auto b = Open(Block::kAutoSeriesCache);
  ASSERT_NE(b, nullptr);
  const std::vector<Matcher> ms{M(T::kEqual, "instance", "node-3")};
  Query(*b, {}, testing::kBlockMin, testing::kBlockMax);  // warms every series
  const int64_t del_min = 1000 * 1000, del_max = 2000 * 1000;
  ASSERT_TRUE(b->Delete(ms, del_min, del_max).ok());
  const Result got = Query(*b, ms, testing::kBlockMin, testing::kBlockMax);
  const Result all = Want(ms, testing::kBlockMin, testing::kBlockMax);
  ASSERT_EQ(got.labels, all.labels);
  for (size_t i = 0; i < got.samples.size(); ++i) {
    std::vector<Sample> want;
    for (const Sample& s : all.samples[i]) {
      if (s.t < del_min || s.t > del_max) want.push_back(s);
    }
    ASSERT_EQ(got.samples[i].size(), want.size()) << i;
  }
  // A fully deleted series disappears even though its entry is cached.
  ASSERT_TRUE(b->Delete(ms, testing::kBlockMin, testing::kBlockMax).ok());
  EXPECT_TRUE(Query(*b, ms, testing::kBlockMin, testing::kBlockMax).labels.empty());
}

}  // namespace
}  // namespace gpumon::tsdb::block
