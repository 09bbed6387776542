// Integer column coder of the packed encoding: a sequence of int64 values
// as differences of a chosen order (0: the values, 1: deltas, 2: deltas of
// deltas, 3: offsets from a straight line), reduced by a base and by the residuals' common divisor
// g, then coded one of three ways:
//   - kEqual: every residual equals the base; nothing per value (regular
//     scrape intervals, unchanged gauges).
//   - kFor: frame of reference (base = the minimum) in miniblocks of 32
//     residuals, one bit width each, LSB-first bit-packed. Fastest to
//     decode.
//   - kHuffman: each residual's offset from the base (the median), in
//     zigzag form, as its exact bit width in a per-stream canonical Huffman
//     code followed by the bits below its leading one. Adapts per value:
//     steps, spikes and mostly-quiet series cost about their entropy.
// The encoder picks the smallest.
//
// Layout (docs/formats/chunks.md): header byte = order | kind << 2 |
// (base < 0) << 4; zigzag varints: v0 (orders 1-3), then v1 - v0 (order 2)
// or the line's step (order 3); when there are residuals: |base| (uvarint)
// and, unless kEqual, g (uvarint, > 0) and the kind's payload.
//
// Contract: all arithmetic is modulo 2^64, so every int64 sequence
// round-trips. The reader never reads outside [p, end); Init checks the
// layout's sizes, Read reports codes that do not decode.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tsdb/chunkenc/bitstream.h"
#include "tsdb/chunkenc/huffman_table.h"

namespace gpumon::tsdb::chunkenc {

inline constexpr int kMiniblock = 32;
inline constexpr int kMaxOrder = 2;  // highest difference order
// Order 3: residuals from the line through the first and the last value
// (v[i] - v0 - i * step), for timestamps with jitter around a fixed
// interval, where deltas would double the jitter.
inline constexpr int kLinear = 3;

enum class IntKind : uint8_t { kFor = 0, kHuffman = 1, kEqual = 2 };

// Appends the stream of `values` with order 0..3 and the given kind (kEqual is used instead
// whenever all residuals are equal).
void EncodeIntStream(std::span<const int64_t> values, int order, IntKind kind,
                     std::vector<uint8_t>& out);

// Appends the smallest stream over orders [min_order, max_order] (0..3)
// and the kinds (only `kind`, plus kEqual, when kind >= 0).
void EncodeIntStreamBest(std::span<const int64_t> values, int min_order, int max_order,
                         std::vector<uint8_t>& out, int kind = -1);

class IntStreamReader {
 public:
  // Parses a stream of n values at *p; on success *p points past it.
  bool Init(const uint8_t** p, const uint8_t* end, int n);

  // Decodes the next `count` values (count <= values left); false when the
  // data does not decode (corrupt input).
  bool Read(int count, int64_t* out);

  // Advances past the next `count` values (count <= values left) as Read
  // would, without producing them: residuals that later values do not
  // depend on (orders 0 and 3) are stepped over, order 1 only sums them.
  bool Skip(int count);

  // True when the values are first + i * step for i = 0.. (a kEqual stream
  // of order 1: regular scrape times), so the i-th is known without
  // decoding. The step is 0 for a single value. Modulo 2^64 like Read.
  bool Arithmetic(uint64_t* first, uint64_t* step) const;

  int order() const { return order_; }
  IntKind kind() const { return kind_; }

 private:
  bool InitHuffman(const uint8_t* begin, const uint8_t* end);
  // Decodes `count` Huffman-coded values with one table lookup each and
  // hands each one's signed quotient to emit(i, q); needs huffman_fast_.
  template <typename Emit>
  bool DecodeHuffman(int count, Emit emit);
  // Steps over `count` Huffman-coded values several at a time (the
  // multi-symbol table), adding their quotients to *q; needs huffman_fast_.
  bool SkipHuffman(int count, uint64_t* q);
  bool ReadResiduals(int count, uint64_t* r);
  // Steps over `count` residuals; with `sum`, adds their total to it.
  bool SkipResiduals(int count, uint64_t* sum);
  uint64_t Extract(uint64_t bit, int width) const;

  // Ordered to pack: a packed chunk's iterator holds two readers and stays
  // small enough for the allocator's fast path.
  uint64_t first_[2] = {0, 0};
  uint64_t base_ = 0;
  uint64_t g_ = 0;
  uint64_t prev_ = 0;
  uint64_t prev_delta_ = 0;
  int emitted_ = 0;  // values returned so far
  int residuals_ = 0;
  int residual_ = 0;  // residuals returned so far
  int8_t order_ = 0;
  IntKind kind_ = IntKind::kFor;
  // kHuffman (see below)
  int8_t single_width_ = -1;    // >= 0: one symbol, zero-length code
  uint8_t lut_bits_ = 0;        // the longest code
  uint8_t longest_symbol_ = 0;  // code plus mantissa bits
  bool huffman_fast_ = false;   // table_->fast()

  // kFor
  const uint8_t* widths_ = nullptr;
  const uint8_t* data_ = nullptr;  // packed quotients
  const uint8_t* end_ = nullptr;
  uint64_t bit_ = 0;  // read position in data_

  // kHuffman: the next lut_bits_ bits index table_->lut().
  BitReader bits_;
  std::shared_ptr<const HuffmanTable> table_;
};

}  // namespace gpumon::tsdb::chunkenc
