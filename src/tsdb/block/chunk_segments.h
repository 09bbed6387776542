// Chunk segment files (docs/formats/block.md): a block's chunks, appended to
// numbered files chunks/000001, chunks/000002, ... and addressed by a
// reference (segment number << 32 | byte offset of the record).
//
// Contract:
// - ChunkWriter appends each chunk as one record (length, bytes, CRC-32) and
//   starts a new segment before one would grow past segment_size (a single
//   record larger than that gets a segment of its own). Close fsyncs every
//   segment and the directory.
// - ChunkReader reads records from segments held in memory (mmaps). Open
//   checks each segment's header and that segments are numbered 1..n. Chunk()
//   bounds-checks the reference and the record and, with verify_checksums,
//   its CRC; errors name the segment file and offset. Returned bytes point
//   into the segment memory and live as long as it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "tsdb/index/file_writer.h"

namespace gpumon::tsdb::block {

inline constexpr uint8_t kChunkSegmentMagic[4] = {'G', 'P', 'M', 'C'};
inline constexpr uint8_t kChunkSegmentVersion = 1;
inline constexpr size_t kChunkSegmentHeaderSize = 8;
inline constexpr uint64_t kDefaultSegmentSize = uint64_t{512} << 20;
inline constexpr uint64_t kMaxSegmentSize = 0xFFFFFFFFULL;

// "000042"
std::string SegmentFileName(uint32_t number);

class ChunkWriter {
 public:
  static Result<std::unique_ptr<ChunkWriter>> Create(const std::string& dir,
                                                     uint64_t segment_size = kDefaultSegmentSize);
  // Returns the chunk's reference. `chunk` holds the encoding byte and payload.
  Result<uint64_t> Write(std::span<const uint8_t> chunk);
  Status Close();
  // Bytes in all segments, headers included.
  uint64_t total_bytes() const { return total_bytes_; }
  uint32_t num_segments() const { return segment_; }

 private:
  ChunkWriter(std::string dir, uint64_t segment_size)
      : dir_(std::move(dir)), segment_size_(segment_size) {}
  Status Cut();

  std::string dir_;
  uint64_t segment_size_;
  uint32_t segment_ = 0;
  std::unique_ptr<index::FileWriter> file_;
  uint64_t total_bytes_ = 0;
};

class ChunkReader {
 public:
  struct Segment {
    uint32_t number = 0;
    std::span<const uint8_t> bytes;
    std::string name;  // for errors
  };
  struct Options {
    bool verify_checksums = true;
  };

  ChunkReader() = default;
  static Result<ChunkReader> Open(std::vector<Segment> segments, Options options);
  static Result<ChunkReader> Open(std::vector<Segment> segments) {
    return Open(std::move(segments), Options{});
  }

  Result<std::span<const uint8_t>> Chunk(uint64_t ref) const;
  size_t num_segments() const { return segments_.size(); }
  // Every record of a segment in file order, for verification and fuzzing:
  // calls f(ref, bytes) until a record fails to read.
  template <typename F>
  Status ForEachChunk(size_t segment_index, F&& f) const;

 private:
  Result<std::span<const uint8_t>> ReadAt(const Segment& s, uint64_t offset, uint64_t* next) const;

  std::vector<Segment> segments_;  // segments_[i].number == i + 1
  Options options_;
};

template <typename F>
Status ChunkReader::ForEachChunk(size_t segment_index, F&& f) const {
  const Segment& s = segments_.at(segment_index);
  uint64_t off = kChunkSegmentHeaderSize;
  while (off < s.bytes.size()) {
    uint64_t next = 0;
    auto c = ReadAt(s, off, &next);
    if (!c.ok()) return c.status();
    f((static_cast<uint64_t>(s.number) << 32) | off, *c);
    off = next;
  }
  return Status::Ok();
}

}  // namespace gpumon::tsdb::block
