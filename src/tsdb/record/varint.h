// Varint helpers shared by the WAL record codecs: LEB128 unsigned varints,
// zigzag signed varints, little-endian fixed-width integers, and a bounds-
// checked cursor for decoding untrusted bytes.
//
// Contract: Put* append to a byte vector. ByteReader never reads past its
// end; every getter returns false (and leaves the output unspecified) on
// truncated or malformed input, e.g. a varint longer than 10 bytes or one
// whose value overflows 64 bits.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace gpumon::tsdb::record {

inline constexpr size_t kMaxVarintLen = 10;

// Writes v at p (which must have kMaxVarintLen bytes of room); returns the
// byte after it. Raw-pointer form so hot encoders can size once and fill.
inline uint8_t* PutUvarintRaw(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

inline void PutUvarint(std::vector<uint8_t>* out, uint64_t v) {
  uint8_t buf[kMaxVarintLen];
  uint8_t* end = PutUvarintRaw(buf, v);
  out->insert(out->end(), buf, end);
}
inline void PutVarint(std::vector<uint8_t>* out, int64_t v) { PutUvarint(out, ZigZag(v)); }

inline void PutFixed64Raw(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint64_t GetFixed64Raw(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
inline void PutFixed32Raw(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t GetFixed32Raw(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

inline void PutString(std::vector<uint8_t>* out, std::string_view s) {
  PutUvarint(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> bytes)
      : begin_(bytes.data()), p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool done() const { return p_ == end_; }

  bool GetByte(uint8_t* v) {
    if (p_ == end_) return false;
    *v = *p_++;
    return true;
  }

  bool GetUvarint(uint64_t* v) {
    uint64_t result = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      uint8_t b = *p_++;
      // The 10th byte may only hold the top bit of a 64-bit value.
      if (shift == 63 && b > 1) return false;
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        *v = result;
        return true;
      }
    }
    return false;
  }

  bool GetVarint(int64_t* v) {
    uint64_t u;
    if (!GetUvarint(&u)) return false;
    *v = UnZigZag(u);
    return true;
  }

  bool GetFixed64(uint64_t* v) {
    if (remaining() < 8) return false;
    *v = GetFixed64Raw(p_);
    p_ += 8;
    return true;
  }

  // A length-prefixed string; the view points into the input.
  bool GetString(std::string_view* s) {
    uint64_t n;
    if (!GetUvarint(&n) || n > remaining()) return false;
    *s = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }

  // Offset from the start of the input, for error messages.
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }

 private:
  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace gpumon::tsdb::record
