// The block's smaller parts: meta.json, JSON reading, tombstones, chunk
// segments, ULIDs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <set>

#include "tsdb/block/chunk_segments.h"
#include "tsdb/block/json.h"
#include "tsdb/block/meta.h"
#include "common/mmap_file.h"
#include "tsdb/block/tombstones.h"
#include "tsdb/block/ulid.h"

namespace gpumon::tsdb::block {
namespace {

namespace fs = std::filesystem;

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "gpumon_block_parts_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST(JsonTest, ParsesValuesAndReportsErrorOffsets) {
  auto v =
      ParseJson(R"( {"a": [1, -9223372036854775808, 2.5e3, true, null, "x\u00e9\ud83d\ude00\n"],
                          "b": {"c": false}} )");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const JsonValue* a = v->Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->array.size(), 6u);
  EXPECT_TRUE(a->array[0].is_int);
  EXPECT_EQ(a->array[1].integer, std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(a->array[2].is_int);
  EXPECT_EQ(a->array[2].number, 2500);
  EXPECT_TRUE(a->array[3].boolean);
  EXPECT_EQ(a->array[4].type, JsonValue::Type::kNull);
  EXPECT_EQ(a->array[5].string, "x\xC3\xA9\xF0\x9F\x98\x80\n");
  EXPECT_FALSE(v->Find("b")->Find("c")->boolean);
  EXPECT_FALSE(ParseJson("9223372036854775808")->is_int);  // too large for int64

  auto bad = ParseJson("{\"a\": [1, 2,, 3]}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("offset 12"), std::string::npos) << bad.status().message();
  for (const char* s : {"", "{", "[1", "\"abc", "01", "{\"a\" 1}", "tru", "1 2", "\"\\ud800\""}) {
    EXPECT_FALSE(ParseJson(s).ok()) << s;
  }
  EXPECT_FALSE(ParseJson(std::string(100, '[') + std::string(100, ']')).ok());  // too deep
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\u000a\\u0001\"");
}

TEST_F(TempDir, MetaRoundTripsAndRejectsBadFiles) {
  BlockMeta m;
  m.id = NewUlid();
  m.min_time = -5;
  m.max_time = 7200000;
  m.stats = {1, 2, 3, 4};
  m.compaction_level = 2;
  m.sources = {"A\"quoted", NewUlid()};
  m.parents = {{NewUlid(), 0, 10}, {NewUlid(), 10, 20}};
  m.downsample_resolution_ms = 3600000;
  ASSERT_TRUE(WriteMeta(dir_, m).ok());
  auto back = ReadMeta(dir_);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, m);
  EXPECT_FALSE(fs::exists(dir_ + "/meta.json.tmp"));

  // Unknown members are ignored; missing or mistyped ones are named.
  auto ok = MetaFromJson(R"({"version":1,"ulid":"x","minTime":0,"maxTime":1,"future":{}})", "f");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->compaction_level, 1);
  struct Case {
    const char* json;
    const char* mention;
  } cases[] = {
      {R"({"version":2,"ulid":"x","minTime":0,"maxTime":1})", "version"},
      {R"({"version":1,"minTime":0,"maxTime":1})", "ulid"},
      {R"({"version":1,"ulid":"x","minTime":"0","maxTime":1})", "minTime"},
      {R"({"version":1,"ulid":"x","minTime":5,"maxTime":1})", "maxTime"},
      {R"({"version":1,"ulid":"x","minTime":0,"maxTime":1,"stats":{"numSeries":-1}})", "numSeries"},
      {R"({"version":1,"ulid":"x","minTime":0,"maxTime":1,"compaction":{"parents":[1]}})",
       "parents"},
      {R"([])", "object"},
  };
  for (const auto& c : cases) {
    auto r = MetaFromJson(c.json, "some/meta.json");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.status().message().find("some/meta.json"), std::string::npos);
    EXPECT_NE(r.status().message().find(c.mention), std::string::npos) << r.status().message();
  }
}

TEST(IntervalsTest, AddMergesOverlappingAndAdjacentRanges) {
  Intervals ivs;
  AddInterval(&ivs, {10, 20});
  AddInterval(&ivs, {30, 40});
  EXPECT_EQ(ivs, (Intervals{{10, 20}, {30, 40}}));
  AddInterval(&ivs, {21, 25});  // adjacent to the first
  EXPECT_EQ(ivs, (Intervals{{10, 25}, {30, 40}}));
  AddInterval(&ivs, {0, 5});
  AddInterval(&ivs, {50, 60});
  EXPECT_EQ(ivs, (Intervals{{0, 5}, {10, 25}, {30, 40}, {50, 60}}));
  AddInterval(&ivs, {24, 51});  // spans several
  EXPECT_EQ(ivs, (Intervals{{0, 5}, {10, 60}}));
  AddInterval(&ivs, {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(ivs.size(), 1u);
  ivs = {{0, 5}, {10, 60}};
  EXPECT_TRUE(IsDeleted(ivs, 0));
  EXPECT_TRUE(IsDeleted(ivs, 60));
  EXPECT_FALSE(IsDeleted(ivs, 7));
  EXPECT_FALSE(IsDeleted(ivs, 61));
  EXPECT_TRUE(Covers(ivs, 10, 60));
  EXPECT_FALSE(Covers(ivs, 4, 11));
  EXPECT_FALSE(Covers({}, 1, 1));
}

TEST_F(TempDir, TombstonesRoundTripAndRejectDamage) {
  EXPECT_TRUE(ReadTombstones(dir_)->empty());  // missing file: none
  Tombstones t;
  t.Add(7, {1, 2});
  t.Add(7, {-100, -50});
  t.Add(0, {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
  t.Add(1u << 31, {5, 5});
  ASSERT_TRUE(WriteTombstones(dir_, t).ok());
  auto back = ReadTombstones(dir_);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, t);
  EXPECT_EQ(back->num_intervals(), 4u);
  const auto bytes = EncodeTombstones(t);
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto bad = bytes;
    bad[i] ^= 0x40;
    auto r = DecodeTombstones(bad, "tomb");
    EXPECT_FALSE(r.ok()) << i;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("tomb"), std::string::npos);
    }
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeTombstones(std::span(bytes).first(n), "tomb").ok()) << n;
  }
}

TEST_F(TempDir, ChunkSegmentsRoundTripAndCutAtTheSizeLimit) {
  auto w = ChunkWriter::Create(dir_, 256);
  ASSERT_TRUE(w.ok());
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<uint64_t> refs;
  for (int i = 0; i < 50; ++i) {
    std::vector<uint8_t> c(1 + static_cast<size_t>(i) * 7, static_cast<uint8_t>(i));
    auto ref = (*w)->Write(c);
    ASSERT_TRUE(ref.ok());
    chunks.push_back(c);
    refs.push_back(*ref);
  }
  ASSERT_FALSE((*w)->Write({}).ok());
  ASSERT_TRUE((*w)->Close().ok());
  std::vector<MmapFile> files;
  std::vector<ChunkReader::Segment> segs;
  for (uint32_t n = 1; n <= (*w)->num_segments(); ++n) {
    auto f = MmapFile::Open(dir_ + "/" + SegmentFileName(n));
    ASSERT_TRUE(f.ok());
    segs.push_back({n, f->bytes(), SegmentFileName(n)});
    files.push_back(std::move(f).value());
  }
  EXPECT_GT(segs.size(), 10u);
  auto r = ChunkReader::Open(segs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (size_t i = 0; i < chunks.size(); ++i) {
    auto c = r->Chunk(refs[i]);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_TRUE(std::equal(c->begin(), c->end(), chunks[i].begin(), chunks[i].end()));
  }
  size_t walked = 0;
  for (size_t s = 0; s < r->num_segments(); ++s) {
    size_t records = 0;
    ASSERT_TRUE(r->ForEachChunk(s, [&](uint64_t, std::span<const uint8_t>) { ++records; }).ok());
    EXPECT_GT(records, 0u);
    // Only a segment holding a single oversized record may pass the limit.
    if (segs[s].bytes.size() > 256) {
      EXPECT_EQ(records, 1u);
    }
    walked += records;
  }
  EXPECT_EQ(walked, chunks.size());
  // Bad references are errors naming the segment and offset.
  auto bad = r->Chunk(refs[3] + 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("offset"), std::string::npos);
  EXPECT_FALSE(r->Chunk((uint64_t{999} << 32) | 8).ok());
  EXPECT_FALSE(r->Chunk(uint64_t{1} << 32).ok());  // inside the header
  // Segments must be numbered from 1 without gaps.
  auto gap = segs;
  gap.erase(gap.begin());
  EXPECT_FALSE(ChunkReader::Open(gap).ok());
}

TEST(UlidTest, ShapeOrderAndUniqueness) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewUlid();
    EXPECT_TRUE(IsUlid(id)) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 1000u);
  EXPECT_LT(NewUlid(1000), NewUlid(2000));
  EXPECT_EQ(NewUlid(0).substr(0, 10), "0000000000");
  EXPECT_FALSE(IsUlid("01ARZ3NDEKTSV4RRFFQ69G5FA"));   // 25 chars
  EXPECT_FALSE(IsUlid("01ARZ3NDEKTSV4RRFFQ69G5FAI"));  // I is not in the alphabet
  EXPECT_FALSE(IsUlid("81ARZ3NDEKTSV4RRFFQ69G5FAV"));  // over 128 bits
}

}  // namespace
}  // namespace gpumon::tsdb::block
