// Chunk encodings: compressed runs of samples of one series.
//
// Contract (the API the head and blocks rely on; implementations in this
// folder, format in docs/formats/chunks.md):
// - A chunk is a byte string: one encoding byte, then the payload. Chunks are
//   self-describing and immutable once finished.
// - XorAppender builds a chunk sample by sample (delta-of-delta timestamps,
//   Gorilla XOR floats) — the baseline, used for the open head chunk; its
//   bytes are a valid kXor chunk at any moment.
// - EncodeBest re-encodes a finished run of samples with the smallest
//   encoding that round-trips every sample bit-exactly (checked by decoding),
//   falling back to kXor. Values are compared as bit patterns, so NaN
//   payloads (the stale marker) and -0.0 survive.
// - NewIterator decodes any encoding. Corrupt or truncated input never reads
//   out of bounds or crashes: the iterator stops and status() says why.
//   Decoded timestamps are strictly increasing (anything else is reported as
//   corruption), so Seek can rely on order.
// - A chunk holds at most kMaxSamples samples; the head cuts chunks far
//   below that (120-480 samples).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tsdb/chunkenc/chunk_iterator.h"
#include "tsdb/sample.h"
#include "tsdb/storage.h"

namespace gpumon::tsdb::chunkenc {

enum class Encoding : uint8_t {
  kXor = 1,  // Prometheus-style: delta-of-delta timestamps, XOR floats
  // Columnar: bit-packed integer timestamps; values as one of constant,
  // scaled decimal integers (with exceptions) or XOR floats.
  kPacked = 2,
  // Further encodings are numbered from 3 and documented in
  // docs/formats/chunks.md.
};

inline constexpr int kMaxSamples = 65535;

std::string_view EncodingName(uint8_t encoding);

class XorAppender {
 public:
  XorAppender();
  // Samples must come in strictly increasing time order (the caller checks)
  // and the appender must not be full(); appending to a full one aborts.
  void Append(int64_t t, double v);
  int num_samples() const { return num_samples_; }
  bool full() const { return num_samples_ >= kMaxSamples; }
  // The chunk so far: encoding byte + payload.
  std::span<const uint8_t> bytes() const { return bytes_; }
  size_t MemoryBytes() const { return bytes_.capacity() + sizeof(*this); }

 private:
  // Grows the buffer ahead of an append by about a quarter, to sizes the
  // allocator serves without rounding: the open chunk of every head series
  // lives here, and doubling would leave a third of it unused on average.
  void Reserve();

  // Ordered so the object packs without padding.
  std::vector<uint8_t> bytes_;
  int64_t t_ = 0;
  int64_t t_delta_ = 0;
  uint64_t v_bits_ = 0;
  int num_samples_ = 0;
  uint8_t bit_pos_ = 0;  // bits used in the last byte (0: full)
  uint8_t leading_ = 0xff;
  uint8_t trailing_ = 0;
};

// Encodes `samples` (strictly increasing in time, 1 to kMaxSamples) with the
// smallest exact encoding.
std::vector<uint8_t> EncodeBest(std::span<const Sample> samples);

// The kXor chunk of `samples` (same preconditions), as XorAppender builds it.
std::vector<uint8_t> EncodeXor(std::span<const Sample> samples);

// Decodes a chunk of any encoding. The bytes must outlive the iterator.
std::unique_ptr<SeriesIterator> NewIterator(std::span<const uint8_t> chunk);
// The same iterator with its concrete base, whose Next, At and Seek are
// final and inline: callers holding it avoid a virtual call per sample.
std::unique_ptr<ChunkIterator> NewChunkIterator(std::span<const uint8_t> chunk);

// Number of samples in a chunk without decoding it all (an error on corrupt
// input).
Result<int> CountSamples(std::span<const uint8_t> chunk);

}  // namespace gpumon::tsdb::chunkenc
