// SegmentDecoder on in-memory segments: records, torn tails, corruption.
#include "tsdb/wal/frame.h"

#include <gtest/gtest.h>

#include <vector>

#include "tsdb/wal/segment.h"
#include "wal_test_util.h"

namespace gpumon::tsdb::wal {
namespace {

using testing::MakeRecord;

struct Built {
  std::vector<uint8_t> bytes;
  std::vector<size_t> starts;  // frame offsets
};

Built BuildSegment(int n) {
  Built b;
  b.bytes.resize(kSegmentHeaderSize);
  WriteSegmentHeader(b.bytes.data());
  for (int i = 0; i < n; ++i) {
    auto r = MakeRecord(i);
    uint8_t h[kFrameHeaderSize];
    EncodeFrameHeader(r, h);
    b.starts.push_back(b.bytes.size());
    b.bytes.insert(b.bytes.end(), h, h + kFrameHeaderSize);
    b.bytes.insert(b.bytes.end(), r.begin(), r.end());
  }
  return b;
}

struct Decoded {
  std::vector<std::vector<uint8_t>> records;
  FrameResult end;
  uint64_t offset;
  std::string reason;
};

Decoded DecodeAll(std::span<const uint8_t> bytes, bool last) {
  SegmentDecoder d(bytes, last);
  Decoded out;
  while ((out.end = d.Next()) == FrameResult::kRecord) {
    out.records.emplace_back(d.record().begin(), d.record().end());
  }
  out.offset = d.offset();
  out.reason = d.reason();
  EXPECT_EQ(d.Next(), out.end) << "result must be sticky";
  return out;
}

TEST(FrameTest, DecodesAllRecords) {
  Built b = BuildSegment(50);
  Decoded d = DecodeAll(b.bytes, false);
  EXPECT_EQ(d.end, FrameResult::kEnd);
  ASSERT_EQ(d.records.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(d.records[i], MakeRecord(i));
}

TEST(FrameTest, EmptyRecordIsValid) {
  std::vector<uint8_t> bytes(kSegmentHeaderSize);
  WriteSegmentHeader(bytes.data());
  uint8_t h[kFrameHeaderSize];
  EncodeFrameHeader({}, h);
  bytes.insert(bytes.end(), h, h + kFrameHeaderSize);
  Decoded d = DecodeAll(bytes, false);
  EXPECT_EQ(d.end, FrameResult::kEnd);
  ASSERT_EQ(d.records.size(), 1u);
  EXPECT_TRUE(d.records[0].empty());
}

TEST(FrameTest, TornTailAtEveryOffsetOfLastRecord) {
  Built b = BuildSegment(5);
  size_t last_start = b.starts.back();
  for (size_t cut = last_start; cut < b.bytes.size(); ++cut) {
    std::span<const uint8_t> prefix(b.bytes.data(), cut);
    Decoded d = DecodeAll(prefix, /*last=*/true);
    ASSERT_EQ(d.records.size(), 4u) << cut;
    if (cut == last_start) {
      EXPECT_EQ(d.end, FrameResult::kEnd);
    } else {
      EXPECT_EQ(d.end, FrameResult::kTorn) << cut;
      EXPECT_EQ(d.offset, last_start);
    }
    // The same cut in an older segment is corruption at the same place.
    Decoded older = DecodeAll(prefix, /*last=*/false);
    if (cut != last_start) {
      EXPECT_EQ(older.end, FrameResult::kCorrupt) << cut;
      EXPECT_EQ(older.offset, last_start);
    }
  }
}

TEST(FrameTest, ZeroFilledTailIsTorn) {
  // Power loss can leave the file longer than what reached the disk, the
  // rest reading as zeros.
  Built b = BuildSegment(3);
  b.bytes.insert(b.bytes.end(), 4096, 0);
  Decoded d = DecodeAll(b.bytes, true);
  EXPECT_EQ(d.end, FrameResult::kTorn);
  EXPECT_EQ(d.records.size(), 3u);
  // Zeroed payload of the last record, followed by zeros.
  Built c = BuildSegment(3);
  std::fill(c.bytes.begin() + c.starts[2] + kFrameHeaderSize + 2, c.bytes.end(), 0);
  c.bytes.insert(c.bytes.end(), 100, 0);
  d = DecodeAll(c.bytes, true);
  EXPECT_EQ(d.end, FrameResult::kTorn);
  EXPECT_EQ(d.offset, c.starts[2]);
  EXPECT_EQ(d.records.size(), 2u);
}

TEST(FrameTest, FlippedByteBeforeTheEndIsCorruption) {
  Built b = BuildSegment(6);
  // Every byte of record 2 (header and payload): flipping it must stop the
  // decoder at record 2 with corruption, keeping records 0 and 1.
  for (size_t pos = b.starts[2]; pos < b.starts[3]; ++pos) {
    std::vector<uint8_t> bytes = b.bytes;
    bytes[pos] ^= 0x10;
    Decoded d = DecodeAll(bytes, /*last=*/true);
    EXPECT_EQ(d.end, FrameResult::kCorrupt) << pos;
    EXPECT_EQ(d.offset, b.starts[2]) << pos;
    EXPECT_EQ(d.records.size(), 2u) << pos;
    EXPECT_FALSE(d.reason.empty());
  }
}

TEST(FrameTest, FlipInLastRecordOfNewestSegmentIsTorn) {
  Built b = BuildSegment(3);
  b.bytes[b.starts[2] + kFrameHeaderSize + 1] ^= 1;
  Decoded d = DecodeAll(b.bytes, true);
  EXPECT_EQ(d.end, FrameResult::kTorn);
  EXPECT_EQ(d.records.size(), 2u);
  EXPECT_EQ(DecodeAll(b.bytes, false).end, FrameResult::kCorrupt);
}

TEST(FrameTest, SegmentHeaderChecks) {
  Built b = BuildSegment(2);
  std::vector<uint8_t> bad = b.bytes;
  bad[0] = 'X';
  Decoded d = DecodeAll(bad, true);
  EXPECT_EQ(d.end, FrameResult::kCorrupt);
  EXPECT_EQ(d.offset, 0u);
  EXPECT_TRUE(d.records.empty());

  EXPECT_EQ(DecodeAll({}, true).end, FrameResult::kEnd);
  EXPECT_EQ(DecodeAll({}, false).end, FrameResult::kCorrupt);
  std::span<const uint8_t> partial(b.bytes.data(), 5);
  EXPECT_EQ(DecodeAll(partial, true).end, FrameResult::kTorn);
  EXPECT_EQ(DecodeAll(partial, false).end, FrameResult::kCorrupt);
  std::vector<uint8_t> zeros(64, 0);
  EXPECT_EQ(DecodeAll(zeros, true).end, FrameResult::kTorn);
}

TEST(FrameTest, ImpossibleLengthWithValidHeaderIsCorruption) {
  std::vector<uint8_t> bytes(kSegmentHeaderSize);
  WriteSegmentHeader(bytes.data());
  uint8_t h[kFrameHeaderSize] = {0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0};
  uint32_t hc = Crc32(std::span<const uint8_t>(h, 8));
  for (int i = 0; i < 4; ++i) h[8 + i] = static_cast<uint8_t>(hc >> (8 * i));
  bytes.insert(bytes.end(), h, h + kFrameHeaderSize);
  Decoded d = DecodeAll(bytes, true);
  EXPECT_EQ(d.end, FrameResult::kCorrupt);
  EXPECT_NE(d.reason.find("exceeds"), std::string::npos) << d.reason;
}

}  // namespace
}  // namespace gpumon::tsdb::wal
