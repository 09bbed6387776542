// WAL framing: how one record is laid out in a segment, and a decoder that
// walks the frames of one segment held in memory.
//
// Frame = 12-byte header + payload:
//   u32 LE payload length | u32 LE crc32(payload) | u32 LE crc32(first 8 bytes)
// The header checksum lets a reader trust a length before it reads the
// payload, so "record cut short by the end of the file" (a torn write) can
// be told apart from "length field damaged" (corruption). All-zero bytes
// never form a valid header.
//
// Contract of SegmentDecoder (the one place that judges frames; the file
// reader, the writer's tail check and the fuzzer all use it):
// - Next() yields records in order until the end of the segment (kEnd), a
//   torn tail (kTorn) or corruption (kCorrupt); it then keeps returning
//   that result.
// - A bad frame in the LAST segment followed by nothing but zero bytes (or
//   by nothing at all) is a torn write: the tail of an append that was cut
//   off by a crash. offset() is where to truncate. Anything else — a bad
//   frame followed by data, any bad frame in an earlier segment, a bad
//   segment header — is corruption at offset().
// - A record is never yielded unless its checksum matched; records are
//   views into the segment bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gpumon::tsdb::wal {

inline constexpr size_t kFrameHeaderSize = 12;
// Larger records are refused by the writer and treated as corruption by the
// reader; callers split big batches (e.g. series records) below this.
inline constexpr uint32_t kMaxRecordSize = 256u << 20;

uint32_t Crc32(std::span<const uint8_t> bytes);

// Fills the 12 header bytes for `payload`.
void EncodeFrameHeader(std::span<const uint8_t> payload, uint8_t out[kFrameHeaderSize]);

enum class FrameResult { kRecord, kEnd, kTorn, kCorrupt };

class SegmentDecoder {
 public:
  // `segment` is the whole segment file, header included. `last`: whether
  // this is the newest segment, the only one that may end in a torn write.
  SegmentDecoder(std::span<const uint8_t> segment, bool last);

  FrameResult Next();

  // After kRecord: the payload, and the offset of its frame in the segment.
  std::span<const uint8_t> record() const { return record_; }
  uint64_t record_offset() const { return record_offset_; }
  // Bytes consumed so far (after kTorn/kCorrupt: where the problem starts).
  uint64_t offset() const { return offset_; }
  // After kTorn or kCorrupt: what was wrong.
  const std::string& reason() const { return reason_; }

 private:
  FrameResult Bad(std::string reason, uint64_t check_zero_from);

  std::span<const uint8_t> segment_;
  bool last_;
  bool header_checked_ = false;
  FrameResult final_ = FrameResult::kRecord;  // kRecord: not finished yet
  uint64_t offset_ = 0;
  uint64_t record_offset_ = 0;
  std::span<const uint8_t> record_;
  std::string reason_;
};

}  // namespace gpumon::tsdb::wal
