// Damaged block files must give an error naming the file (and, for binary
// files, the offset), never a crash; the sanitizer build runs these too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tsdb/block/block.h"
#include "tsdb/block/block_fixture.h"
#include "tsdb/index/encoding.h"
#include "tsdb/index/format.h"

namespace gpumon::tsdb::block {
namespace {

namespace fs = std::filesystem;
using testing::BlockTestBase;

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}
void WriteAll(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Opens the block and reads everything; returns the first error.
Status OpenAndReadAll(const std::string& dir) {
  auto b = Block::Open(dir);
  if (!b.ok()) return b.status();
  auto set = (*b)->NewQuerier(kMinTime, kMaxTime)->Select({});
  while (set->Next()) {
    auto it = set->Iterator();
    while (it->Next()) {
    }
    if (!it->status().ok()) return it->status();
  }
  if (!set->status().ok()) return set->status();
  return (*b)->Verify();
}

class BlockCorruptionTest : public BlockTestBase {
 protected:
  void SetUp() override {
    BlockTestBase::SetUp();
    dir_ = WriteBlock(tsdb::testing::MakeTestSeries(200));
    ASSERT_TRUE(OpenAndReadAll(dir_).ok());
  }
  // Applies `damage` to a copy of file `rel`, checks the error, restores.
  void ExpectError(const std::string& rel, const std::function<void(std::vector<uint8_t>&)>& damage,
                   const std::string& must_mention) {
    const std::string path = dir_ + "/" + rel;
    const auto good = ReadAll(path);
    auto bad = good;
    damage(bad);
    WriteAll(path, bad);
    Status s = OpenAndReadAll(dir_);
    EXPECT_FALSE(s.ok()) << rel << " " << must_mention;
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(must_mention), std::string::npos) << s.message();
    WriteAll(path, good);
  }
  std::string dir_;
};

TEST_F(BlockCorruptionTest, FlippedByteInEachIndexSection) {
  const auto good = ReadAll(dir_ + "/index");
  const uint8_t* toc = good.data() + good.size() - index::kTocSize;
  for (int s = 0; s < index::kNumSections; ++s) {
    const uint64_t off = index::LoadU64(toc + 16 * s), len = index::LoadU64(toc + 16 * s + 8);
    ExpectError(
        "index", [&](auto& b) { b[off + len / 3] ^= 0x10; }, index::kSectionNames[s]);
  }
  ExpectError(
      "index", [](auto& b) { b[4] = 9; }, "version");
  ExpectError(
      "index", [](auto& b) { b[5] = 1; }, "padding");
}

TEST_F(BlockCorruptionTest, TruncatedIndex) {
  for (size_t keep : {size_t{0}, size_t{7}, size_t{100}, size_t{5000}}) {
    ExpectError(
        "index", [keep](auto& b) { b.resize(std::min(b.size() - 1, keep)); }, "index");
  }
}

TEST_F(BlockCorruptionTest, DamagedChunkSegment) {
  ExpectError(
      "chunks/000001", [](auto& b) { b[b.size() / 2] ^= 0xFF; }, "offset");
  ExpectError(
      "chunks/000001", [](auto& b) { b.resize(b.size() / 2); }, "offset");
  ExpectError(
      "chunks/000001", [](auto& b) { b[1] = 'X'; }, "magic");
}

TEST_F(BlockCorruptionTest, MissingChunkSegment) {
  fs::rename(dir_ + "/chunks/000001", dir_ + "/chunks/000002");
  Status s = OpenAndReadAll(dir_);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("000001"), std::string::npos) << s.message();
}

TEST_F(BlockCorruptionTest, DamagedTombstonesAndMeta) {
  ExpectError(
      "tombstones", [](auto& b) { b.back() ^= 1; }, "checksum");
  ExpectError(
      "tombstones", [](auto& b) { b.resize(3); }, "offset");
  ExpectError(
      "meta.json", [](auto& b) { b.resize(b.size() / 2); }, "offset");
  ExpectError(
      "meta.json",
      [](auto& b) {
        b = {'{', '}'};
      },
      "version");
  fs::remove(dir_ + "/meta.json");
  EXPECT_FALSE(Block::Open(dir_).ok());
}

}  // namespace
}  // namespace gpumon::tsdb::block
