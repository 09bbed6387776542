// The kXor chunk's reader side (the writer is XorAppender in chunk.h).
//
// Layout: encoding byte 1, sample count (uint16 big-endian), then an
// MSB-first bit stream: first timestamp (zigzag varint) and value (64 raw
// bits); second timestamp delta (varint) and XOR value; then per sample a
// delta-of-delta code and an XOR value. See docs/formats/chunks.md.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "common/status.h"
#include "tsdb/chunkenc/chunk_iterator.h"
#include "tsdb/sample.h"
#include "tsdb/storage.h"

namespace gpumon::tsdb::chunkenc {

inline constexpr int kXorHeaderBytes = 3;

// The size EncodeXor(samples) would have, without building it.
size_t XorChunkSize(std::span<const Sample> samples);

// `chunk` includes the encoding byte.
std::unique_ptr<ChunkIterator> NewXorIterator(std::span<const uint8_t> chunk);
Result<int> XorSampleCount(std::span<const uint8_t> chunk);

}  // namespace gpumon::tsdb::chunkenc
