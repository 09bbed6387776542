#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "tsdb/index/crc.h"
#include "tsdb/index/encoding.h"
#include "tsdb/index/format.h"
#include "tsdb/index/index_reader.h"
#include "tsdb/index/index_writer.h"
#include "tsdb/index/test_series.h"

namespace gpumon::tsdb::index {
namespace {

namespace fs = std::filesystem;
using testing::BruteForce;
using testing::Describe;
using testing::M;

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

// Chunk metas derived from the series number, so each series differs.
std::vector<ChunkMeta> MetasFor(size_t i) {
  std::vector<ChunkMeta> out;
  int64_t t = -1000 + static_cast<int64_t>(i) * 3;
  for (size_t k = 0; k < 1 + i % 4; ++k) {
    ChunkMeta c{t, t + 100 + static_cast<int64_t>(k), (uint64_t{1} << 32) + i * 1000 + k * 77};
    out.push_back(c);
    t = c.maxt + 1 + static_cast<int64_t>(k) * 5;
  }
  return out;
}

class IndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "gpumon_index_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `series` with IndexWriter the way a block writer does.
  std::string Write(const std::vector<Labels>& series, const std::string& name = "index") {
    std::set<std::string> strings;
    std::map<std::pair<std::string, std::string>, std::vector<uint32_t>> postings;
    for (size_t i = 0; i < series.size(); ++i) {
      for (const auto& l : series[i]) {
        strings.insert(l.name);
        strings.insert(l.value);
        postings[{l.name, l.value}].push_back(static_cast<uint32_t>(i));
      }
    }
    std::vector<std::string_view> symbols(strings.begin(), strings.end());
    auto ref = [&](const std::string& s) {
      return static_cast<uint32_t>(std::lower_bound(symbols.begin(), symbols.end(), s) -
                                   symbols.begin());
    };
    const std::string path = dir_ + "/" + name;
    auto w = IndexWriter::Create(path);
    EXPECT_TRUE(w.ok()) << w.status().message();
    EXPECT_TRUE((*w)->AddSymbols(symbols).ok());
    for (size_t i = 0; i < series.size(); ++i) {
      std::vector<LabelRef> refs;
      for (const auto& l : series[i]) refs.emplace_back(ref(l.name), ref(l.value));
      Status s = (*w)->AddSeries(refs, MetasFor(i));
      EXPECT_TRUE(s.ok()) << s.message();
    }
    for (const auto& [k, ids] : postings) {
      Status s = (*w)->AddPostings(ref(k.first), ref(k.second), ids);
      EXPECT_TRUE(s.ok()) << s.message();
    }
    Status s = (*w)->Finish();
    EXPECT_TRUE(s.ok()) << s.message();
    return path;
  }

  std::string dir_;
};

TEST_F(IndexTest, RoundTripsSeriesSymbolsAndLabels) {
  const auto series = testing::MakeTestSeries(2000);
  const auto bytes = ReadAll(Write(series));
  auto r = IndexReader::Open(bytes, "index");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->Verify().ok()) << r->Verify().message();
  ASSERT_EQ(r->num_series(), series.size());

  std::map<std::string, std::set<std::string>> values;
  for (size_t i = 0; i < series.size(); ++i) {
    Labels l;
    std::vector<ChunkMeta> chunks;
    Status s = r->ReadSeries(i, &l, &chunks);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(l, series[i]);
    EXPECT_EQ(chunks, MetasFor(i));
    for (const auto& x : series[i]) values[x.name].insert(x.value);
  }
  std::vector<std::string> names;
  for (auto n : r->LabelNames()) names.emplace_back(n);
  std::vector<std::string> want_names;
  for (const auto& [n, v] : values) want_names.push_back(n);
  EXPECT_EQ(names, want_names);
  for (const auto& [n, vs] : values) {
    std::vector<std::string> got;
    for (auto v : r->LabelValues(n)) got.emplace_back(v);
    EXPECT_EQ(got, std::vector<std::string>(vs.begin(), vs.end())) << n;
  }
  EXPECT_TRUE(r->LabelValues("missing").empty());
  // Symbol lookups agree with the sorted table.
  for (uint32_t i = 0; i < r->num_symbols(); ++i) EXPECT_EQ(r->FindSymbol(r->Symbol(i)), i);
  EXPECT_FALSE(r->FindSymbol("definitely not a symbol").has_value());
  // Out-of-range series ids are an error, not a crash.
  Labels l;
  std::vector<ChunkMeta> c;
  EXPECT_FALSE(r->ReadSeries(series.size(), &l, &c).ok());
}

TEST_F(IndexTest, PostingsForMatchersAgreesWithBruteForce) {
  const auto series = testing::MakeTestSeries(2000);
  const auto bytes = ReadAll(Write(series));
  auto r = IndexReader::Open(bytes, "index");
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::mt19937_64 rng(1);
  size_t nonempty = 0;
  for (const auto& ms : testing::MakeTestMatcherSets(rng, 300)) {
    auto got = PostingsForMatchers(*r, ms);
    ASSERT_TRUE(got.ok()) << got.status().message();
    auto want = BruteForce(series, ms);
    EXPECT_EQ(*got, want) << Describe(ms);
    nonempty += !want.empty();
  }
  EXPECT_GT(nonempty, 100u);  // the matcher sets are not trivially empty
}

TEST_F(IndexTest, EmptyIndex) {
  const auto bytes = ReadAll(Write({}));
  auto r = IndexReader::Open(bytes, "index");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->num_series(), 0u);
  EXPECT_TRUE(r->LabelNames().empty());
  auto p = PostingsForMatchers(*r, std::vector<Matcher>{M(MatchType::kEqual, "a", "")});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->empty());
}

TEST_F(IndexTest, WriterRejectsMisuse) {
  auto w = IndexWriter::Create(dir_ + "/bad1");
  ASSERT_TRUE(w.ok());
  std::vector<std::string_view> unsorted{"b", "a"};
  EXPECT_FALSE((*w)->AddSymbols(unsorted).ok());

  w = IndexWriter::Create(dir_ + "/bad2");
  std::vector<std::string_view> syms{"a", "b", "c"};
  ASSERT_TRUE((*w)->AddSymbols(syms).ok());
  std::vector<LabelRef> unsorted_labels{{1, 0}, {0, 2}};
  EXPECT_FALSE((*w)->AddSeries(unsorted_labels, {}).ok());

  w = IndexWriter::Create(dir_ + "/bad3");
  ASSERT_TRUE((*w)->AddSymbols(syms).ok());
  std::vector<LabelRef> labels{{0, 1}};
  std::vector<ChunkMeta> overlapping{{0, 10, 1}, {10, 20, 2}};
  EXPECT_FALSE((*w)->AddSeries(labels, overlapping).ok());

  w = IndexWriter::Create(dir_ + "/bad4");
  ASSERT_TRUE((*w)->AddSymbols(syms).ok());
  ASSERT_TRUE((*w)->AddSeries(labels, {}).ok());
  std::vector<uint32_t> unknown_series{0, 1};
  EXPECT_FALSE((*w)->AddPostings(0, 1, unknown_series).ok());
  std::vector<uint32_t> ok_ids{0};
  EXPECT_FALSE((*w)->AddPostings(0, 1, ok_ids).ok());  // the writer stays failed
}

// Section extents as the TOC records them.
std::vector<std::pair<uint64_t, uint64_t>> Sections(const std::vector<uint8_t>& b) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  const uint8_t* toc = b.data() + b.size() - kTocSize;
  for (int s = 0; s < kNumSections; ++s)
    out.emplace_back(LoadU64(toc + 16 * s), LoadU64(toc + 16 * s + 8));
  return out;
}

// Reads everything the reader offers; returns the first error.
Status ReadEverything(const IndexReader& r) {
  Labels l;
  std::vector<ChunkMeta> c;
  for (uint64_t i = 0; i < r.num_series(); ++i) {
    Status s = r.ReadSeries(i, &l, &c);
    if (!s.ok()) return s;
  }
  Postings p;
  for (uint32_t i = 0; i < r.num_postings_entries(); ++i) {
    Status s = r.ReadPostings(r.PostingsEntryAt(i), &p);
    if (!s.ok()) return s;
  }
  for (auto n : r.LabelNames()) r.LabelValues(n);
  return r.Verify();
}

TEST_F(IndexTest, CorruptionInEachSectionIsReportedWithFileAndOffset) {
  const auto series = testing::MakeTestSeries(300);
  const auto good = ReadAll(Write(series));
  const auto sections = Sections(good);
  for (int s = 0; s < kNumSections; ++s) {
    auto bad = good;
    const auto [off, len] = sections[s];
    ASSERT_GT(len, 0u);
    bad[off + len / 2] ^= 0x5A;
    auto r = IndexReader::Open(bad, "idx-file");
    Status err = r.ok() ? ReadEverything(*r) : r.status();
    ASSERT_FALSE(err.ok()) << kSectionNames[s];
    EXPECT_NE(err.message().find("idx-file"), std::string::npos) << err.message();
    EXPECT_NE(err.message().find("offset"), std::string::npos) << err.message();
    EXPECT_NE(err.message().find(kSectionNames[s]), std::string::npos) << err.message();
    if (s == kSeries) {
      // Series entries are checked when read, not at open.
      EXPECT_TRUE(r.ok());
    }
  }
  // The header and the TOC too.
  auto bad = good;
  bad[0] = 'X';
  EXPECT_NE(IndexReader::Open(bad, "f").status().message().find("magic"), std::string::npos);
  bad = good;
  bad[bad.size() - 10] ^= 1;
  EXPECT_NE(IndexReader::Open(bad, "f").status().message().find("table of contents"),
            std::string::npos);
}

TEST_F(IndexTest, TruncationAtEveryLengthFails) {
  const auto good = ReadAll(Write(testing::MakeTestSeries(50)));
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(n));
    auto r = IndexReader::Open(cut, "f");
    EXPECT_FALSE(r.ok()) << n;
  }
}

// Without checksums every damaged byte must still be handled: the reader
// either rejects the file or reads it without going out of bounds (the
// sanitizer build checks the latter).
TEST_F(IndexTest, EveryFlippedByteIsSafeWithoutChecksums) {
  // Small series (no long values) keep the byte-by-byte loop fast.
  std::vector<Labels> series;
  for (const Labels& l : testing::MakeTestSeries(15)) {
    std::vector<Label> kept;
    for (const Label& x : l) {
      if (x.name != "long") kept.push_back(x);
    }
    series.push_back(Labels::FromSorted(std::move(kept)));
  }
  const auto good = ReadAll(Write(series));
  size_t rejected = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0xFF}}) {
      auto bad = good;
      bad[i] ^= mask;
      auto r = IndexReader::Open(bad, "f", {.verify_checksums = false});
      if (!r.ok()) {
        ++rejected;
        continue;
      }
      std::mt19937_64 rng(i);
      for (const auto& ms : testing::MakeTestMatcherSets(rng, 0)) (void)PostingsForMatchers(*r, ms);
      (void)ReadEverything(*r);
    }
  }
  EXPECT_GT(rejected, 0u);
}

}  // namespace
}  // namespace gpumon::tsdb::index
