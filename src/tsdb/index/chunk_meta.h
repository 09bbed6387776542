// ChunkMeta: where a chunk of one series lives and which time span it covers,
// as the index records it.
//
// Contract: mint <= maxt, both inclusive milliseconds. ref locates the chunk
// in the block's segment files: (segment number << 32) | byte offset.
#pragma once

#include <cstdint>

namespace gpumon::tsdb::index {

struct ChunkMeta {
  int64_t mint = 0;
  int64_t maxt = 0;
  uint64_t ref = 0;
  bool operator==(const ChunkMeta&) const = default;
};

inline constexpr uint64_t ChunkRef(uint32_t segment, uint32_t offset) {
  return static_cast<uint64_t>(segment) << 32 | offset;
}
inline constexpr uint32_t ChunkRefSegment(uint64_t ref) { return static_cast<uint32_t>(ref >> 32); }
inline constexpr uint32_t ChunkRefOffset(uint64_t ref) { return static_cast<uint32_t>(ref); }

}  // namespace gpumon::tsdb::index
