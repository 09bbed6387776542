// The kPacked chunk: columnar, with the timestamp column and the value
// column each coded the cheapest way for this chunk.
//
// Layout (docs/formats/chunks.md): encoding byte 2; sample count (uvarint);
// a mode byte (timestamp mode in the low nibble, value mode in the high);
// the timestamp column as an integer stream (int_stream.h); the value
// column:
//   kValueXor:     Gorilla XOR bit stream (64 raw bits, then XOR codes);
//   kValueConst:   the one value's 64 bits, little-endian;
//   kValueDecimal: exceptions (count, then per exception the gap to the
//                  previous one and the raw 64 bits) and an integer stream
//                  of m with the scale k in its tag: value = m / 10^k.
//
// Contract: EncodePacked picks, per column, the smallest coding among those
// the options allow and returns an error only when a forced value mode
// cannot hold the samples (kValueConst with differing values). It does not
// verify the result; EncodeBest (chunk.h) does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "tsdb/chunkenc/chunk_iterator.h"
#include "tsdb/chunkenc/decimal.h"
#include "tsdb/sample.h"
#include "tsdb/storage.h"

namespace gpumon::tsdb::chunkenc {

enum ValueMode : uint8_t { kValueXor = 0, kValueConst = 1, kValueDecimal = 2 };

// Forced choices, for tests and measurements; -1 lets the encoder choose.
struct PackedOptions {
  int ts_order = -1;     // 0..2 (the encoder tries 1 and 2)
  int ts_kind = -1;      // IntKind
  int value_mode = -1;   // ValueMode
  int value_order = -1;  // 0..2 for kValueDecimal
  int scale = -1;        // 0..kMaxScale for kValueDecimal
  int value_kind = -1;   // IntKind for kValueDecimal
};

Result<std::vector<uint8_t>> EncodePacked(std::span<const Sample> samples,
                                          const PackedOptions& options = {});

// What EncodePacked chose, read back from a kPacked chunk's header.
struct PackedLayout {
  int samples = 0;
  int ts_order = 0;
  int ts_kind = 0;
  int value_mode = 0;
  int value_kind = 0;   // kValueDecimal only
  int value_order = 0;  // kValueDecimal only
  int scale = 0;        // kValueDecimal only
  int exceptions = 0;   // kValueDecimal only
};
Result<PackedLayout> DescribePacked(std::span<const uint8_t> chunk);

// `chunk` includes the encoding byte.
std::unique_ptr<ChunkIterator> NewPackedIterator(std::span<const uint8_t> chunk);
Result<int> PackedSampleCount(std::span<const uint8_t> chunk);

}  // namespace gpumon::tsdb::chunkenc
