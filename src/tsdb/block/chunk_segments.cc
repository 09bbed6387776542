#include "tsdb/block/chunk_segments.h"

#include <cstdio>
#include <cstring>

#include "tsdb/index/crc.h"
#include "tsdb/index/encoding.h"

namespace gpumon::tsdb::block {

std::string SegmentFileName(uint32_t number) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%06u", number);
  return buf;
}

Result<std::unique_ptr<ChunkWriter>> ChunkWriter::Create(const std::string& dir,
                                                         uint64_t segment_size) {
  if (segment_size <= kChunkSegmentHeaderSize || segment_size > kMaxSegmentSize) {
    return Status::Error("chunk segment size " + std::to_string(segment_size) + " out of range");
  }
  return std::unique_ptr<ChunkWriter>(new ChunkWriter(dir, segment_size));
}

Status ChunkWriter::Cut() {
  if (file_) {
    Status s = file_->Close();
    if (!s.ok()) return s;
  }
  ++segment_;
  auto f = index::FileWriter::Create(dir_ + "/" + SegmentFileName(segment_));
  if (!f.ok()) return f.status();
  file_ = std::move(f).value();
  uint8_t header[kChunkSegmentHeaderSize] = {kChunkSegmentMagic[0],
                                             kChunkSegmentMagic[1],
                                             kChunkSegmentMagic[2],
                                             kChunkSegmentMagic[3],
                                             kChunkSegmentVersion,
                                             0,
                                             0,
                                             0};
  total_bytes_ += sizeof(header);
  return file_->Write(header);
}

Result<uint64_t> ChunkWriter::Write(std::span<const uint8_t> chunk) {
  if (chunk.empty()) return Status::Error("chunk writer: empty chunk");
  index::Encbuf head;
  head.PutUvarint(chunk.size());
  const uint64_t record = head.size() + chunk.size() + 4;
  if (record > kMaxSegmentSize - kChunkSegmentHeaderSize) {
    return Status::Error("chunk writer: chunk of " + std::to_string(chunk.size()) +
                         " bytes too large");
  }
  if (!file_ ||
      (file_->position() > kChunkSegmentHeaderSize && file_->position() + record > segment_size_)) {
    Status s = Cut();
    if (!s.ok()) return s;
  }
  const uint64_t offset = file_->position();
  uint8_t crc[4];
  index::StoreU32(crc, index::Crc32c(chunk));
  Status s = file_->Write(head.bytes());
  if (s.ok()) s = file_->Write(chunk);
  if (s.ok()) s = file_->Write(crc);
  if (!s.ok()) return s;
  total_bytes_ += record;
  return (static_cast<uint64_t>(segment_) << 32) | offset;
}

Status ChunkWriter::Close() {
  if (file_) {
    Status s = file_->Close();
    if (!s.ok()) return s;
    file_.reset();
  }
  return index::SyncDir(dir_);
}

Result<ChunkReader> ChunkReader::Open(std::vector<Segment> segments, Options options) {
  ChunkReader r;
  r.options_ = options;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& s = segments[i];
    if (s.number != i + 1) {
      return Status::Error("chunks: segment " + SegmentFileName(static_cast<uint32_t>(i + 1)) +
                           " missing (found " + s.name + ")");
    }
    if (s.bytes.size() < kChunkSegmentHeaderSize) {
      return Status::Error("chunks " + s.name + ": file too small (" +
                           std::to_string(s.bytes.size()) + " bytes)");
    }
    if (std::memcmp(s.bytes.data(), kChunkSegmentMagic, 4) != 0) {
      return Status::Error("chunks " + s.name + ": bad magic at offset 0");
    }
    if (s.bytes[4] != kChunkSegmentVersion) {
      return Status::Error("chunks " + s.name + ": unsupported version " +
                           std::to_string(s.bytes[4]) + " at offset 4");
    }
    if (s.bytes[5] != 0 || s.bytes[6] != 0 || s.bytes[7] != 0) {
      return Status::Error("chunks " + s.name + ": non-zero header padding at offset 5");
    }
  }
  r.segments_ = std::move(segments);
  return r;
}

Result<std::span<const uint8_t>> ChunkReader::ReadAt(const Segment& s, uint64_t offset,
                                                     uint64_t* next) const {
  auto err = [&](const std::string& what) {
    return Status::Error("chunks " + s.name + ": " + what + " at offset " + std::to_string(offset));
  };
  if (offset < kChunkSegmentHeaderSize || offset >= s.bytes.size()) {
    return err("chunk reference out of bounds");
  }
  index::Decbuf d(s.bytes.subspan(offset));
  uint64_t len = d.Uvarint();
  if (!d.ok() || len == 0 || len > d.remaining() || d.remaining() - len < 4) {
    return err("chunk record truncated or malformed");
  }
  std::span<const uint8_t> chunk = d.Bytes(len);
  uint32_t crc = d.U32();
  if (options_.verify_checksums && crc != index::Crc32c(chunk)) {
    return err("chunk checksum mismatch");
  }
  if (next != nullptr) *next = offset + d.position();
  return chunk;
}

Result<std::span<const uint8_t>> ChunkReader::Chunk(uint64_t ref) const {
  uint64_t number = ref >> 32;
  if (number == 0 || number > segments_.size()) {
    return Status::Error("chunks: reference " + std::to_string(ref) + " names segment " +
                         std::to_string(number) + ", which does not exist");
  }
  return ReadAt(segments_[number - 1], ref & 0xFFFFFFFFULL, nullptr);
}

}  // namespace gpumon::tsdb::block
