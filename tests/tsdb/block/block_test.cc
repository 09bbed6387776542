#include "tsdb/block/block.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "tsdb/block/block_fixture.h"
#include "tsdb/block/ulid.h"

namespace gpumon::tsdb::block {
namespace {

namespace fs = std::filesystem;
using testing::BlockTestBase;
using testing::Drain;
using testing::SamplesFor;
using tsdb::testing::BruteForce;
using tsdb::testing::Describe;
using tsdb::testing::M;
using T = MatchType;

constexpr size_t kSeries = 1500;

class BlockTest : public BlockTestBase {
 protected:
  void SetUp() override {
    BlockTestBase::SetUp();
    series_ = tsdb::testing::MakeTestSeries(kSeries);
    ASSERT_EQ(series_.size(), kSeries);
    dir_ = WriteBlock(series_);
    block_ = OpenBlock(dir_);
    ASSERT_NE(block_, nullptr);
  }

  std::vector<Labels> SelectLabels(const Querier& q, const std::vector<Matcher>& ms) {
    auto set = q.Select(ms);
    std::vector<Labels> out;
    while (set->Next()) out.push_back(set->labels());
    EXPECT_TRUE(set->status().ok()) << set->status().message();
    return out;
  }

  std::vector<Labels> series_;
  std::string dir_;
  std::shared_ptr<Block> block_;
};

TEST_F(BlockTest, MetaRoundTripsAndCountsEverything) {
  const BlockMeta& m = block_->meta();
  EXPECT_TRUE(IsUlid(m.id)) << m.id;
  EXPECT_EQ(dir_, data_ + "/" + m.id);
  EXPECT_EQ(m.min_time, testing::kBlockMin);
  EXPECT_EQ(m.max_time, testing::kBlockMax);
  EXPECT_EQ(m.compaction_level, 1);
  EXPECT_EQ(m.sources, std::vector<std::string>{m.id});
  uint64_t samples = 0, chunks = 0;
  for (size_t i = 0; i < kSeries; ++i) {
    size_t n = SamplesFor(i).size();
    samples += n;
    chunks += (n + testing::kSamplesPerChunk - 1) / testing::kSamplesPerChunk;
  }
  EXPECT_EQ(m.stats.num_series, kSeries);
  EXPECT_EQ(m.stats.num_samples, samples);
  EXPECT_EQ(m.stats.num_chunks, chunks);
  EXPECT_GT(m.stats.num_bytes, 0u);
  auto reread = ReadMeta(dir_);
  ASSERT_TRUE(reread.ok());
  EXPECT_EQ(*reread, m);
  EXPECT_GE(block_->SizeBytes(), m.stats.num_bytes);
  EXPECT_FALSE(fs::exists(dir_ + kTmpForCreationSuffix));
  ASSERT_TRUE(block_->Verify().ok()) << block_->Verify().message();
}

TEST_F(BlockTest, SelectAgreesWithBruteForceForEveryMatcherKind) {
  auto q = block_->NewQuerier(kMinTime, kMaxTime);
  std::mt19937_64 rng(3);
  for (const auto& ms : tsdb::testing::MakeTestMatcherSets(rng, 200)) {
    std::vector<Labels> want;
    for (uint64_t i : BruteForce(series_, ms)) want.push_back(series_[i]);
    EXPECT_EQ(SelectLabels(*q, ms), want) << Describe(ms);
  }
}

TEST_F(BlockTest, SamplesRoundTripBitExactly) {
  auto q = block_->NewQuerier(kMinTime, kMaxTime);
  auto set = q->Select({});
  size_t i = 0;
  while (set->Next()) {
    ASSERT_LT(i, kSeries);
    EXPECT_EQ(set->labels(), series_[i]);
    auto it = set->Iterator();
    auto got = Drain(*it);
    auto want = SamplesFor(i);
    ASSERT_EQ(got.size(), want.size()) << i;
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_TRUE(testing::SameSample(got[k], want[k])) << i << " " << k;
    }
    ++i;
  }
  EXPECT_EQ(i, kSeries);
  EXPECT_TRUE(set->status().ok());
}

TEST_F(BlockTest, QuerierClipsToItsTimeRangeAndSeeks) {
  const int64_t mint = 1800 * 1000 + 7, maxt = 3600 * 1000 + 999;
  auto q = block_->NewQuerier(mint, maxt);
  auto ms = std::vector<Matcher>{M(T::kEqual, "instance", "node-5")};
  auto set = q->Select(ms);
  size_t n = 0;
  while (set->Next()) {
    size_t i = static_cast<size_t>(std::find(series_.begin(), series_.end(), set->labels()) -
                                   series_.begin());
    std::vector<Sample> want;
    for (const Sample& s : SamplesFor(i)) {
      if (s.t >= mint && s.t <= maxt) want.push_back(s);
    }
    auto it = set->Iterator();
    auto got = Drain(*it);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(testing::SameSample(got[k], want[k]));
    // Seek lands on the first sample at or after t, never moves back, and
    // fails past the range.
    auto it2 = set->Iterator();
    ASSERT_TRUE(it2->Seek(want[10].t - 1));
    EXPECT_EQ(it2->At().t, want[10].t);
    ASSERT_TRUE(it2->Seek(want[5].t));
    EXPECT_EQ(it2->At().t, want[10].t);
    ASSERT_TRUE(it2->Next());
    EXPECT_EQ(it2->At().t, want[11].t);
    ASSERT_GT(want.size(), 100u);
    ASSERT_TRUE(it2->Seek(want[100].t));  // a later chunk
    EXPECT_EQ(it2->At().t, want[100].t);
    EXPECT_FALSE(it2->Seek(maxt + 1));
    ++n;
  }
  EXPECT_EQ(n, BruteForce(series_, ms).size());
  // Ranges outside the block select nothing.
  EXPECT_TRUE(SelectLabels(*block_->NewQuerier(testing::kBlockMax, kMaxTime), {}).empty());
  EXPECT_TRUE(SelectLabels(*block_->NewQuerier(kMinTime, -1), {}).empty());
  EXPECT_TRUE(SelectLabels(*block_->NewQuerier(10, 5), {}).empty());
}

TEST_F(BlockTest, LabelNamesAndValuesWithAndWithoutMatchers) {
  auto q = block_->NewQuerier(kMinTime, kMaxTime);
  std::mt19937_64 rng(5);
  auto sets = tsdb::testing::MakeTestMatcherSets(rng, 40);
  for (const auto& ms : sets) {
    std::set<std::string> names;
    std::map<std::string, std::set<std::string>> values;
    for (uint64_t i : BruteForce(series_, ms)) {
      for (const auto& l : series_[i]) {
        names.insert(l.name);
        values[l.name].insert(l.value);
      }
    }
    auto got_names = q->LabelNames(ms);
    ASSERT_TRUE(got_names.ok());
    EXPECT_EQ(*got_names, std::vector<std::string>(names.begin(), names.end())) << Describe(ms);
    for (const char* name : {"__name__", "instance", "mig", "uni", "empty", "missing", "serial"}) {
      auto got = q->LabelValues(name, ms);
      ASSERT_TRUE(got.ok());
      const auto& want = values[name];
      EXPECT_EQ(*got, std::vector<std::string>(want.begin(), want.end()))
          << name << " " << Describe(ms);
    }
  }
}

TEST_F(BlockTest, StatsCountCardinalities) {
  IndexStats st = block_->Stats(5);
  EXPECT_EQ(st.num_series, kSeries);
  std::map<std::string, std::set<std::string>> values;
  std::map<std::string, uint64_t> pairs;
  for (const auto& s : series_) {
    for (const auto& l : s) {
      values[l.name].insert(l.value);
      pairs[l.name + "=" + l.value]++;
    }
  }
  EXPECT_EQ(st.num_label_names, values.size());
  ASSERT_EQ(st.label_value_count_by_label_name.size(), 5u);
  EXPECT_EQ(st.label_value_count_by_label_name[0].name, "serial");
  EXPECT_EQ(st.label_value_count_by_label_name[0].count, kSeries);
  for (const auto& lc : st.label_value_count_by_label_name) {
    EXPECT_EQ(lc.count, values[lc.name].size()) << lc.name;
  }
  ASSERT_EQ(st.series_count_by_label_value_pair.size(), 5u);
  uint64_t prev = UINT64_MAX;
  for (const auto& lc : st.series_count_by_label_value_pair) {
    EXPECT_EQ(lc.count, pairs[lc.name]) << lc.name;
    EXPECT_LE(lc.count, prev);
    prev = lc.count;
  }
  ASSERT_EQ(st.series_count_by_metric_name.size(), 5u);
  for (const auto& lc : st.series_count_by_metric_name) {
    EXPECT_EQ(lc.count, pairs["__name__=" + lc.name]);
  }
  uint64_t serial_bytes = 0;
  for (const auto& v : values["serial"]) serial_bytes += v.size();
  bool found = false;
  for (const auto& lc : block_->Stats(100).memory_in_bytes_by_label_name) {
    if (lc.name == "serial") {
      EXPECT_EQ(lc.count, serial_bytes);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(BlockTest, DeleteWritesTombstonesThatSurviveReopen) {
  const int64_t del_min = 1000 * 1000, del_max = 2000 * 1000;
  auto node3 = std::vector<Matcher>{M(T::kEqual, "instance", "node-3")};
  // Disjoint from node3, so each series gets one kind of deletion.
  auto up = std::vector<Matcher>{M(T::kEqual, "__name__", "up"), M(T::kEqual, "gpu", "1"),
                                 M(T::kNotEqual, "instance", "node-3")};
  // A querier opened before the delete keeps its view.
  auto before = block_->NewQuerier(kMinTime, kMaxTime);
  ASSERT_TRUE(block_->Delete(node3, del_min, del_max).ok());
  ASSERT_TRUE(block_->Delete(up, kMinTime, kMaxTime).ok());
  // Deleting what is not there changes nothing.
  auto none = std::vector<Matcher>{M(T::kEqual, "instance", "nope")};
  ASSERT_TRUE(block_->Delete(none, kMinTime, kMaxTime).ok());
  EXPECT_EQ(block_->tombstones()->num_series(),
            BruteForce(series_, node3).size() + BruteForce(series_, up).size());

  EXPECT_EQ(SelectLabels(*before, up).size(), BruteForce(series_, up).size());

  block_.reset();
  auto reopened = OpenBlock(dir_);
  ASSERT_NE(reopened, nullptr);
  auto q = reopened->NewQuerier(kMinTime, kMaxTime);
  EXPECT_TRUE(SelectLabels(*q, up).empty());  // fully deleted series vanish
  std::set<Labels> deleted_node3;
  for (uint64_t i : BruteForce(series_, node3)) deleted_node3.insert(series_[i]);
  std::set<Labels> deleted_up;
  for (uint64_t i : BruteForce(series_, up)) deleted_up.insert(series_[i]);
  auto set = q->Select({});
  size_t i = 0, seen = 0;
  while (set->Next()) {
    while (series_[i] != set->labels()) {
      ASSERT_LT(i + 1, kSeries);
      EXPECT_TRUE(deleted_up.count(series_[i])) << series_[i].ToString();
      ++i;
    }
    std::vector<Sample> want;
    for (const Sample& s : SamplesFor(i)) {
      if (!deleted_node3.count(series_[i]) || s.t < del_min || s.t > del_max) want.push_back(s);
    }
    auto it = set->Iterator();
    auto got = Drain(*it);
    ASSERT_EQ(got.size(), want.size()) << series_[i].ToString();
    for (size_t k = 0; k < got.size(); ++k) ASSERT_TRUE(testing::SameSample(got[k], want[k]));
    ++i;
    ++seen;
  }
  EXPECT_EQ(seen, kSeries - deleted_up.size());
  // Raw chunk access reports the tombstones for the consumer to apply.
  auto cs = reopened->ChunkSelect(node3, kMinTime, kMaxTime);
  size_t with_tombstones = 0;
  while (cs->Next()) {
    ASSERT_EQ(cs->deleted().size(), 1u);
    EXPECT_EQ(cs->deleted()[0], (Interval{del_min, del_max}));
    for (const auto& c : cs->chunks()) EXPECT_EQ(c.data[0], 1);  // the XOR encoding byte
    auto it = cs->Iterator();
    for (const Sample& s : Drain(*it)) EXPECT_TRUE(s.t < del_min || s.t > del_max);
    ++with_tombstones;
  }
  EXPECT_TRUE(cs->status().ok());
  EXPECT_EQ(with_tombstones, deleted_node3.size());
}

TEST_F(BlockTest, BlockOutlivesItsOwnerWhileQueried) {
  auto q = block_->NewQuerier(kMinTime, kMaxTime);
  auto set = q->Select(std::vector<Matcher>{M(T::kEqual, "serial", "S42")});
  block_.reset();
  q.reset();
  ASSERT_TRUE(set->Next());
  auto it = set->Iterator();
  set.reset();
  EXPECT_EQ(Drain(*it).size(), SamplesFor(42).size());
}

TEST_F(BlockTest, ListsBlocksAndCleansTemporaryDirectories) {
  fs::create_directories(data_ + "/01ARZ3NDEKTSV4RRFFQ69G5FAV.tmp-for-creation/chunks");
  fs::create_directories(data_ + "/not-a-block");
  auto dirs = ListBlockDirs(data_);
  ASSERT_TRUE(dirs.ok());
  EXPECT_EQ(*dirs, std::vector<std::string>{dir_});
  ASSERT_TRUE(RemoveTemporaryBlockDirs(data_).ok());
  EXPECT_FALSE(fs::exists(data_ + "/01ARZ3NDEKTSV4RRFFQ69G5FAV.tmp-for-creation"));
  EXPECT_TRUE(fs::exists(dir_));
}

class BlockWriterTest : public BlockTestBase {
 protected:
  static BlockWriterOptions Range(int64_t mint, int64_t maxt) {
    BlockWriterOptions o;
    o.min_time = mint;
    o.max_time = maxt;
    return o;
  }
};

TEST_F(BlockWriterTest, RejectsBadInputAndLeavesNothingBehindOnAbort) {
  {
    auto w = BlockWriter::Create(data_, Range(0, 1000));
    ASSERT_TRUE(w.ok());
    auto e = testing::Encode({{10, 1}, {20, 2}});
    ASSERT_TRUE((*w)->AddSeries(Labels{{"a", "2"}}, e.chunks).ok());
    Status s = (*w)->AddSeries(Labels{{"a", "1"}}, e.chunks);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("out of order"), std::string::npos) << s.message();
    EXPECT_FALSE((*w)->AddSeries(Labels{{"a", "2"}}, e.chunks).ok());  // duplicate
    auto late = testing::Encode({{1000, 1}});
    EXPECT_FALSE((*w)->AddSeries(Labels{{"a", "3"}}, late.chunks).ok());
    std::vector<ChunkData> overlap{e.chunks[0], e.chunks[0]};
    EXPECT_FALSE((*w)->AddSeries(Labels{{"a", "3"}}, overlap).ok());
    uint8_t junk[] = {0xEE, 1, 2, 3};
    std::vector<ChunkData> bad{{10, 20, junk}};
    EXPECT_FALSE((*w)->AddSeries(Labels{{"a", "3"}}, bad).ok());
    // The writer stays usable after rejected series.
    EXPECT_TRUE((*w)->AddSeries(Labels{{"a", "3"}}, e.chunks).ok());
    EXPECT_EQ(std::distance(fs::directory_iterator(data_), fs::directory_iterator()), 1);
  }  // destroyed without Finish
  EXPECT_TRUE(fs::is_empty(data_));
  EXPECT_FALSE(BlockWriter::Create(data_, Range(5, 5)).ok());
}

TEST_F(BlockWriterTest, CutsSegmentsAndKeepsLineageAndEmptyBlocks) {
  const auto series = tsdb::testing::MakeTestSeries(100);
  BlockWriterOptions opts = Range(testing::kBlockMin, testing::kBlockMax);
  opts.segment_size = 4096;
  opts.compaction_level = 3;
  opts.sources = {"01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAW"};
  opts.parents = {{"01ARZ3NDEKTSV4RRFFQ69G5FAX", 0, 3600000}};
  opts.downsample_resolution_ms = 300000;
  const std::string dir = WriteBlock(series, opts);
  size_t segments = 0;
  for (const auto& e : fs::directory_iterator(dir + "/chunks")) {
    EXPECT_LE(fs::file_size(e.path()), 4096u);
    ++segments;
  }
  EXPECT_GT(segments, 10u);
  auto b = OpenBlock(dir);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->meta().compaction_level, 3);
  EXPECT_EQ(b->meta().sources, opts.sources);
  EXPECT_EQ(b->meta().parents, opts.parents);
  EXPECT_EQ(b->meta().downsample_resolution_ms, 300000);
  ASSERT_TRUE(b->Verify().ok()) << b->Verify().message();
  auto set = b->NewQuerier(kMinTime, kMaxTime)->Select({});
  size_t n = 0;
  while (set->Next()) {
    auto it = set->Iterator();
    EXPECT_EQ(Drain(*it).size(), SamplesFor(n).size());
    ++n;
  }
  EXPECT_EQ(n, series.size());

  const std::string empty = WriteBlock({});
  auto eb = OpenBlock(empty);
  ASSERT_NE(eb, nullptr);
  EXPECT_EQ(eb->meta().stats.num_series, 0u);
  EXPECT_FALSE(eb->NewQuerier(kMinTime, kMaxTime)->Select({})->Next());
}

// Chunks of other encodings go through unchanged.
TEST_F(BlockWriterTest, StoresAnyChunkEncoding) {
  std::vector<Sample> samples;
  for (int i = 0; i < 500; ++i) samples.push_back({i * 1000, 20.5 + (i % 10) * 0.25});
  auto best = chunkenc::EncodeBest(samples);
  auto w = BlockWriter::Create(data_, Range(0, 1000000));
  ASSERT_TRUE(w.ok());
  std::vector<ChunkData> chunks{{0, 499000, best}};
  ASSERT_TRUE((*w)->AddSeries(Labels{{"__name__", "x"}}, chunks).ok());
  auto dir = (*w)->Finish();
  ASSERT_TRUE(dir.ok());
  auto b = OpenBlock(*dir);
  auto set = b->NewQuerier(0, 1000000)->Select({});
  ASSERT_TRUE(set->Next());
  auto it = set->Iterator();
  auto got = Drain(*it);
  ASSERT_EQ(got.size(), samples.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(testing::SameSample(got[i], samples[i]));
  EXPECT_EQ(b->meta().stats.num_samples, 500u);
}

}  // namespace
}  // namespace gpumon::tsdb::block
