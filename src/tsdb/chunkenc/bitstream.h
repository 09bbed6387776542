// MSB-first bit streams for the XOR (Gorilla) coders.
//
// Contract: BitWriter appends bits to a byte vector whose last byte may be
// partly used (bit_pos bits, 0 meaning "full or none"); the vector is a
// complete, zero-padded byte string after every call, which is what lets
// the open head chunk be read while it is being appended to. BitReader
// reads from [begin, end) and never past end: a read that would need more
// bits returns false.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gpumon::tsdb::chunkenc {

class BitWriter {
 public:
  BitWriter(std::vector<uint8_t>& out, uint8_t& bit_pos) : out_(out), bit_pos_(bit_pos) {}

  // Writes the low n bits of v (0 <= n <= 64), most significant first.
  void WriteBits(uint64_t v, int n) {
    if (n > 56) {
      WriteBits(v >> 32, n - 32);
      n = 32;
    }
    if (n == 0) return;
    uint64_t word = v << (64 - n);  // the n bits, left-aligned
    if (bit_pos_ != 0) {
      out_.back() |= static_cast<uint8_t>(word >> (56 + bit_pos_));
      const int room = 8 - bit_pos_;
      if (n < room) {
        bit_pos_ = static_cast<uint8_t>(bit_pos_ + n);
        return;
      }
      word <<= room;
      n -= room;
    }
    bit_pos_ = static_cast<uint8_t>(n & 7);
    for (; n > 0; n -= 8) {
      out_.push_back(static_cast<uint8_t>(word >> 56));
      word <<= 8;
    }
  }
  void WriteBit(bool bit) { WriteBits(bit ? 1 : 0, 1); }
  void WriteByte(uint8_t b) { WriteBits(b, 8); }

 private:
  std::vector<uint8_t>& out_;
  uint8_t& bit_pos_;
};

class BitReader {
 public:
  BitReader() = default;
  BitReader(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {}

  // Reads n bits (0 <= n <= 64), most significant first.
  bool ReadBits(int n, uint64_t* out) {
    if (n > 56) {
      uint64_t hi, lo;
      if (!ReadBits(n - 32, &hi) || !ReadBits(32, &lo)) return false;
      *out = (hi << 32) | lo;
      return true;
    }
    if (n == 0) {
      *out = 0;
      return true;
    }
    if (!Fill(n)) return false;
    *out = Peek(n);
    Consume(n);
    return true;
  }
  bool ReadBit(bool* bit) {
    uint64_t v;
    if (!ReadBits(1, &v)) return false;
    *bit = v != 0;
    return true;
  }
  bool ReadByte(uint8_t* b) {
    uint64_t v;
    if (!ReadBits(8, &v)) return false;
    *b = static_cast<uint8_t>(v);
    return true;
  }

  // Makes at least n bits (n <= 56) available; false when the input ends
  // first (Peek then still works, reading zeros past the end).
  bool Fill(int n) {
    if (avail_ < n) Refill();
    return avail_ >= n;
  }
  // The next n bits (1 <= n <= avail), without consuming them.
  uint64_t Peek(int n) const { return buf_ >> (64 - n); }
  void Consume(int n) {
    buf_ = n == 64 ? 0 : buf_ << n;
    avail_ -= n;
  }
  // Consume for n < 64 (no special case for a full word).
  void Skip(int n) {
    buf_ <<= n;
    avail_ -= n;
  }
  int available() const { return avail_; }

 private:
  // Tops up the buffer to at least 57 bits (or what is left of the input).
  void Refill() {
    if (end_ - p_ >= 8) {
      // Loads 8 bytes at once. Bits past avail_ may already hold the next
      // byte's leading bits from an earlier load; OR-ing the same bits in
      // again at the same place keeps them intact.
      uint64_t word;
      std::memcpy(&word, p_, 8);
      if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap64(word);
      buf_ |= word >> avail_;
      const int bytes = (63 - avail_) >> 3;
      p_ += bytes;
      avail_ += bytes * 8;
      return;
    }
    while (avail_ <= 56 && p_ != end_) {
      buf_ |= static_cast<uint64_t>(*p_++) << (56 - avail_);
      avail_ += 8;
    }
  }

  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint64_t buf_ = 0;  // next bits, left-aligned
  int avail_ = 0;     // valid bits in buf_
};

}  // namespace gpumon::tsdb::chunkenc
