// The Gorilla coders shared by the kXor chunk and the packed encoding's XOR
// value column: delta-of-delta timestamps in Prometheus's buckets and XOR
// floats with a reusable leading/trailing-zero window.
//
// Contract: Get* decode exactly what Put* wrote and return false (never
// read out of bounds) on truncated or impossible input.
#pragma once

#include <bit>
#include <cstdint>

#include "tsdb/chunkenc/bitstream.h"

namespace gpumon::tsdb::chunkenc {

// Window state of the XOR value coder. leading == kNoWindow until the first
// non-zero XOR has been written.
struct XorWindow {
  static constexpr uint8_t kNoWindow = 0xff;
  uint8_t leading = kNoWindow;
  uint8_t trailing = 0;
};

// Counts bits instead of writing them: the Put* templates below run with
// either, so a size computed this way is exactly what BitWriter produces.
struct BitCounter {
  uint64_t bits = 0;
  void WriteBits(uint64_t, int n) { bits += static_cast<uint64_t>(n); }
  void WriteBit(bool) { ++bits; }
  void WriteByte(uint8_t) { bits += 8; }
};

// Writes `bits` relative to *prev and updates *prev and the window.
template <typename Writer>
void PutXorValue(Writer& w, uint64_t bits, uint64_t* prev, XorWindow* window) {
  const uint64_t x = bits ^ *prev;
  *prev = bits;
  if (x == 0) {
    w.WriteBit(false);
    return;
  }
  int leading = std::countl_zero(x);
  const int trailing = std::countr_zero(x);
  if (leading > 31) leading = 31;  // the window stores it in 5 bits
  if (window->leading != XorWindow::kNoWindow && leading >= window->leading &&
      trailing >= window->trailing) {
    // Fits the previous window: no need to spend 11 bits on a new one.
    w.WriteBits(0b10, 2);
    w.WriteBits(x >> window->trailing, 64 - window->leading - window->trailing);
    return;
  }
  window->leading = static_cast<uint8_t>(leading);
  window->trailing = static_cast<uint8_t>(trailing);
  const int sig = 64 - leading - trailing;
  w.WriteBits(0b11, 2);
  w.WriteBits(static_cast<uint64_t>(leading), 5);
  w.WriteBits(static_cast<uint64_t>(sig & 63), 6);  // 64 is written as 0
  w.WriteBits(x >> trailing, sig);
}
bool GetXorValue(BitReader& r, uint64_t* prev, XorWindow* window);

// Delta of deltas: '0' for 0, then '10' + 14 bits, '110' + 17 bits,
// '1110' + 20 bits (two's complement), '1111' + 64 bits.
template <typename Writer>
void PutDod(Writer& w, int64_t dod) {
  auto fits = [dod](int bits) {
    const int64_t lim = int64_t{1} << (bits - 1);
    return dod >= -lim && dod < lim;
  };
  auto low = [dod](int bits) { return static_cast<uint64_t>(dod) & ((uint64_t{1} << bits) - 1); };
  if (dod == 0) {
    w.WriteBit(false);
  } else if (fits(14)) {
    w.WriteBits(0b10, 2);
    w.WriteBits(low(14), 14);
  } else if (fits(17)) {
    w.WriteBits(0b110, 3);
    w.WriteBits(low(17), 17);
  } else if (fits(20)) {
    w.WriteBits(0b1110, 4);
    w.WriteBits(low(20), 20);
  } else {
    w.WriteBits(0b1111, 4);
    w.WriteBits(static_cast<uint64_t>(dod), 64);
  }
}
bool GetDod(BitReader& r, int64_t* dod);

// Unsigned LEB128 varints inside a bit stream (byte-sized groups of bits).
template <typename Writer>
void PutBitsUvarint(Writer& w, uint64_t v) {
  while (v >= 0x80) {
    w.WriteByte(static_cast<uint8_t>(v) | 0x80);
    v >>= 7;
  }
  w.WriteByte(static_cast<uint8_t>(v));
}
bool GetBitsUvarint(BitReader& r, uint64_t* v);

}  // namespace gpumon::tsdb::chunkenc
