#include "tsdb/wal/frame.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "tsdb/record/varint.h"
#include "tsdb/wal/segment.h"

namespace gpumon::tsdb::wal {

using record::GetFixed32Raw;
using record::PutFixed32Raw;

uint32_t Crc32(std::span<const uint8_t> bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  // zlib takes uInt lengths; feed very large inputs in pieces.
  while (n > 0) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

void EncodeFrameHeader(std::span<const uint8_t> payload, uint8_t out[kFrameHeaderSize]) {
  PutFixed32Raw(out, static_cast<uint32_t>(payload.size()));
  PutFixed32Raw(out + 4, Crc32(payload));
  PutFixed32Raw(out + 8, Crc32(std::span<const uint8_t>(out, 8)));
}

SegmentDecoder::SegmentDecoder(std::span<const uint8_t> segment, bool last)
    : segment_(segment), last_(last) {}

FrameResult SegmentDecoder::Bad(std::string reason, uint64_t check_zero_from) {
  // A crash can leave the tail of the newest segment cut short, or (after
  // power loss) zero-filled; nothing written after the bad frame means no
  // acknowledged record can be behind it.
  bool only_zeros_follow = true;
  if (check_zero_from < segment_.size()) {
    auto rest = segment_.subspan(check_zero_from);
    only_zeros_follow = std::all_of(rest.begin(), rest.end(), [](uint8_t b) { return b == 0; });
  }
  reason_ = std::move(reason);
  final_ = last_ && only_zeros_follow ? FrameResult::kTorn : FrameResult::kCorrupt;
  return final_;
}

FrameResult SegmentDecoder::Next() {
  if (final_ != FrameResult::kRecord) return final_;
  record_ = {};
  const uint64_t size = segment_.size();
  if (!header_checked_) {
    header_checked_ = true;
    if (size == 0) {
      // A segment created by a crash before its header was written.
      if (last_) return final_ = FrameResult::kEnd;
      reason_ = "empty segment";
      return final_ = FrameResult::kCorrupt;
    }
    if (size < kSegmentHeaderSize) return Bad("segment header cut short", size);
    uint8_t want[kSegmentHeaderSize];
    WriteSegmentHeader(want);
    if (std::memcmp(segment_.data(), want, kSegmentHeaderSize) != 0) {
      return Bad("bad segment header (magic or version)", 0);
    }
    offset_ = kSegmentHeaderSize;
  }
  if (offset_ == size) return final_ = FrameResult::kEnd;
  const uint64_t left = size - offset_;
  if (left < kFrameHeaderSize) return Bad("frame header cut short", size);
  const uint8_t* h = segment_.data() + offset_;
  if (GetFixed32Raw(h + 8) != Crc32(std::span<const uint8_t>(h, 8))) {
    return Bad("frame header checksum mismatch", offset_ + kFrameHeaderSize);
  }
  const uint32_t length = GetFixed32Raw(h);
  if (length > kMaxRecordSize) {
    // The header checksum matched, so the writer wrote this; it never
    // writes such a length.
    reason_ = "record length " + std::to_string(length) + " exceeds the maximum";
    return final_ = FrameResult::kCorrupt;
  }
  if (length > left - kFrameHeaderSize) return Bad("record cut short by end of segment", size);
  std::span<const uint8_t> payload(h + kFrameHeaderSize, length);
  const uint64_t end = offset_ + kFrameHeaderSize + length;
  if (GetFixed32Raw(h + 4) != Crc32(payload)) return Bad("record checksum mismatch", end);
  record_offset_ = offset_;
  record_ = payload;
  offset_ = end;
  return FrameResult::kRecord;
}

}  // namespace gpumon::tsdb::wal
