// Byte encoding for the block files (index, chunk segments, tombstones):
// little-endian fixed-width integers, LEB128 unsigned varints, zigzag signed
// varints, and a bounds-checked decoder for untrusted bytes.
//
// Contract: Encbuf appends to a growable buffer. Decbuf never reads past the
// end of its span; the first failure (truncation, an over-long varint) makes
// it sticky-bad, every later read returns 0 and ok() stays false, so callers
// may decode a whole record and check once. position() counts bytes consumed
// so errors can name an offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace gpumon::tsdb::index {

inline uint32_t LoadU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline uint64_t LoadU64(const uint8_t* p) {
  return static_cast<uint64_t>(LoadU32(p)) | static_cast<uint64_t>(LoadU32(p + 4)) << 32;
}
inline void StoreU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void StoreU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

class Encbuf {
 public:
  void Reset() { b_.clear(); }
  const std::vector<uint8_t>& bytes() const { return b_; }
  std::vector<uint8_t>& bytes() { return b_; }
  size_t size() const { return b_.size(); }

  void PutByte(uint8_t v) { b_.push_back(v); }
  void PutU32(uint32_t v) {
    uint8_t t[4];
    StoreU32(t, v);
    b_.insert(b_.end(), t, t + 4);
  }
  void PutU64(uint64_t v) {
    uint8_t t[8];
    StoreU64(t, v);
    b_.insert(b_.end(), t, t + 8);
  }
  void PutUvarint(uint64_t v) {
    while (v >= 0x80) {
      b_.push_back(static_cast<uint8_t>(v) | 0x80);
      v >>= 7;
    }
    b_.push_back(static_cast<uint8_t>(v));
  }
  void PutVarint(int64_t v) { PutUvarint(ZigZag(v)); }
  void PutBytes(std::span<const uint8_t> s) { b_.insert(b_.end(), s.begin(), s.end()); }
  void PutString(std::string_view s) {
    b_.insert(b_.end(), reinterpret_cast<const uint8_t*>(s.data()),
              reinterpret_cast<const uint8_t*>(s.data()) + s.size());
  }

 private:
  std::vector<uint8_t> b_;
};

class Decbuf {
 public:
  explicit Decbuf(std::span<const uint8_t> b)
      : begin_(b.data()), p_(b.data()), end_(b.data() + b.size()) {}

  bool ok() const { return ok_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  size_t position() const { return static_cast<size_t>(p_ - begin_); }
  const uint8_t* cursor() const { return p_; }

  uint8_t Byte() {
    if (!Need(1)) return 0;
    return *p_++;
  }
  uint32_t U32() {
    if (!Need(4)) return 0;
    uint32_t v = LoadU32(p_);
    p_ += 4;
    return v;
  }
  uint64_t U64() {
    if (!Need(8)) return 0;
    uint64_t v = LoadU64(p_);
    p_ += 8;
    return v;
  }
  uint64_t Uvarint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!Need(1)) return 0;
      uint8_t c = *p_++;
      // The tenth byte may only carry the top bit of a 64-bit value.
      if (shift == 63 && c > 1) return Fail();
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (c < 0x80) return v;
    }
    return Fail();
  }
  int64_t Varint() { return UnZigZag(Uvarint()); }
  std::span<const uint8_t> Bytes(size_t n) {
    if (!Need(n)) return {};
    std::span<const uint8_t> s(p_, n);
    p_ += n;
    return s;
  }
  void Skip(size_t n) { Bytes(n); }

 private:
  bool Need(size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      p_ = end_;
      return false;
    }
    return true;
  }
  uint64_t Fail() {
    ok_ = false;
    p_ = end_;
    return 0;
  }

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

}  // namespace gpumon::tsdb::index
