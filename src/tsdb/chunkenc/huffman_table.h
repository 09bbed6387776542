// Decoding tables for the canonical Huffman codes of kHuffman integer
// streams (int_stream.h), shared between the chunks that use the same code.
//
// A code is its bit-width range [min_w, max_w] and one code length per
// width. Many chunks of a block share a handful of codes (a gauge's deltas
// look alike from chunk to chunk), so HuffmanTable::Get keeps the recently
// used tables in a small process-wide cache and a chunk reuses them instead
// of rebuilding them.
//
// Contract: tables are immutable once Get returns them, except for the
// multi-symbol table, which MultiSymbol builds on first use and publishes
// atomically; a table may be used from any thread. Get expects lengths
// that passed the reader's checks (at most kMaxCodeLength, not
// over-subscribed, at least one symbol).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace gpumon::tsdb::chunkenc {

inline constexpr int kHuffmanSymbols = 65;  // bit widths 0..64
inline constexpr int kMaxCodeLength = 8;    // codes decode by one table lookup

// Canonical codes from lengths (DEFLATE's assignment); symbols outside
// [lo, hi] must have length 0 and get no code.
void CanonicalCodes(const uint8_t* lengths, uint32_t* codes, int lo = 0,
                    int hi = kHuffmanSymbols - 1);

class HuffmanTable {
 public:
  // lut entries: width << 16 | code length << 8 | code length plus mantissa
  // bits; kNoCode where no code starts with the index's bits.
  static constexpr uint32_t kNoCode = 0xff;
  // Multi-symbol entries cover this many bits: the whole symbols (code and
  // mantissa) at the start of them, as sum << 32 | bits << 8 | count, sum
  // being the symbols' values (zigzag-decoded) added as int32; kNoSymbols
  // (count 0, more bits than any buffer holds) when the first symbol is
  // longer.
  static constexpr int kMultiBits = 11;
  static constexpr uint64_t kNoSymbols = 0xff << 8;

  static std::shared_ptr<const HuffmanTable> Get(int min_w, int max_w, const uint8_t* lengths);

  HuffmanTable(int min_w, int max_w, const uint8_t* lengths);
  ~HuffmanTable();
  HuffmanTable(const HuffmanTable&) = delete;
  HuffmanTable& operator=(const HuffmanTable&) = delete;

  bool Matches(int min_w, int max_w, const uint8_t* lengths) const;

  int lut_bits() const { return lut_bits_; }
  const uint32_t* lut() const { return lut_; }
  // The most bits one symbol takes (at least lut_bits()).
  int longest() const { return longest_; }
  // Every symbol fits in the 56 bits one BitReader refill provides.
  bool fast() const { return longest_ <= 56; }
  // The multi-symbol table (1 << kMultiBits entries), built on first use;
  // only for fast() codes.
  const uint64_t* MultiSymbol() const;

 private:
  const uint64_t* BuildMultiSymbol() const;

  int min_w_;
  int max_w_;
  uint8_t lengths_[kHuffmanSymbols] = {};
  uint32_t codes_[kHuffmanSymbols] = {};
  int lut_bits_ = 0;
  int longest_ = 0;
  uint32_t lut_[1 << kMaxCodeLength];
  mutable std::atomic<const uint64_t*> multi_{nullptr};
};

inline const uint64_t* HuffmanTable::MultiSymbol() const {
  const uint64_t* m = multi_.load(std::memory_order_acquire);
  return m != nullptr ? m : BuildMultiSymbol();
}

}  // namespace gpumon::tsdb::chunkenc
