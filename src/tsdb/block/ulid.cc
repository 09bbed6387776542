#include "tsdb/block/ulid.h"

#include <chrono>
#include <mutex>
#include <random>

namespace gpumon::tsdb::block {
namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

}  // namespace

std::string NewUlid() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return NewUlid(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
}

std::string NewUlid(uint64_t unix_ms) {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi, lo;
  {
    std::lock_guard<std::mutex> lock(mu);
    hi = rng();
    lo = rng();
  }
  // 128 bits: 48 time bits, then 80 random bits; 26 chars encode 130 bits,
  // the top two are zero.
  unsigned __int128 v = static_cast<unsigned __int128>(unix_ms & 0xFFFFFFFFFFFFULL) << 80;
  v |= (static_cast<unsigned __int128>(hi & 0xFFFF) << 64) | lo;
  std::string out(26, '0');
  for (int i = 25; i >= 0; --i) {
    out[i] = kAlphabet[static_cast<unsigned>(v & 31)];
    v >>= 5;
  }
  return out;
}

bool IsUlid(std::string_view s) {
  if (s.size() != 26 || s[0] > '7') return false;
  for (char c : s) {
    bool ok = false;
    for (const char* a = kAlphabet; *a != 0; ++a) ok |= (*a == c);
    if (!ok) return false;
  }
  return true;
}

}  // namespace gpumon::tsdb::block
