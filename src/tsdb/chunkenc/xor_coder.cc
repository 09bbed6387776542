#include "tsdb/chunkenc/xor_coder.h"

#include <bit>

namespace gpumon::tsdb::chunkenc {

bool GetXorValue(BitReader& r, uint64_t* prev, XorWindow* window) {
  bool bit;
  if (!r.ReadBit(&bit)) return false;
  if (!bit) return true;  // same value
  if (!r.ReadBit(&bit)) return false;
  if (bit) {
    uint64_t leading, sig;
    if (!r.ReadBits(5, &leading) || !r.ReadBits(6, &sig)) return false;
    if (sig == 0) sig = 64;
    if (leading + sig > 64) return false;
    window->leading = static_cast<uint8_t>(leading);
    window->trailing = static_cast<uint8_t>(64 - leading - sig);
  } else if (window->leading == XorWindow::kNoWindow) {
    return false;  // reuses a window that was never set
  }
  const int sig = 64 - window->leading - window->trailing;
  uint64_t x;
  if (!r.ReadBits(sig, &x)) return false;
  *prev ^= x << window->trailing;
  return true;
}

namespace {

int64_t SignExtend(uint64_t v, int bits) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

}  // namespace

bool GetDod(BitReader& r, int64_t* dod) {
  int ones = 0;
  for (; ones < 4; ++ones) {
    bool bit;
    if (!r.ReadBit(&bit)) return false;
    if (!bit) break;
  }
  static constexpr int kBits[] = {0, 14, 17, 20, 64};
  const int bits = kBits[ones];
  if (bits == 0) {
    *dod = 0;
    return true;
  }
  uint64_t v;
  if (!r.ReadBits(bits, &v)) return false;
  *dod = bits == 64 ? static_cast<int64_t>(v) : SignExtend(v, bits);
  return true;
}

bool GetBitsUvarint(BitReader& r, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b;
    if (!r.ReadByte(&b)) return false;
    if (shift == 63 && b > 1) return false;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *v = result;
      return true;
    }
  }
  return false;
}

}  // namespace gpumon::tsdb::chunkenc
