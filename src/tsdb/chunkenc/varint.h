// Varints for chunk headers: LEB128 unsigned varints and zigzag signed ones.
//
// Contract: Put* append to a byte vector. Get* read from [*p, end), advance
// *p and return true, or return false without reading past end when the
// input is truncated or the varint is longer than 10 bytes / overflows 64
// bits (corrupt input).
#pragma once

#include <cstdint>
#include <vector>

namespace gpumon::tsdb::chunkenc {

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t u) { return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1)); }

inline void PutUvarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v) | 0x80);
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}
inline void PutVarint(std::vector<uint8_t>& out, int64_t v) { PutUvarint(out, ZigZag(v)); }

inline int UvarintSize(uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline bool GetUvarint(const uint8_t** p, const uint8_t* end, uint64_t* v) {
  uint64_t result = 0;
  const uint8_t* q = *p;
  for (int shift = 0; shift < 64; shift += 7) {
    if (q == end) return false;
    const uint8_t b = *q++;
    // The tenth byte may only carry the top bit of a 64-bit value.
    if (shift == 63 && b > 1) return false;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *p = q;
      *v = result;
      return true;
    }
  }
  return false;
}

inline bool GetVarint(const uint8_t** p, const uint8_t* end, int64_t* v) {
  uint64_t u;
  if (!GetUvarint(p, end, &u)) return false;
  *v = UnZigZag(u);
  return true;
}

}  // namespace gpumon::tsdb::chunkenc
