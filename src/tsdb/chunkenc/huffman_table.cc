#include "tsdb/chunkenc/huffman_table.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <vector>

namespace gpumon::tsdb::chunkenc {

void CanonicalCodes(const uint8_t* lengths, uint32_t* codes, int lo, int hi) {
  int count[kMaxCodeLength + 1] = {};
  for (int s = lo; s <= hi; ++s) ++count[lengths[s]];
  count[0] = 0;
  uint32_t next[kMaxCodeLength + 1] = {};
  uint32_t code = 0;
  for (int l = 1; l <= kMaxCodeLength; ++l) {
    code = (code + static_cast<uint32_t>(count[l - 1])) << 1;
    next[l] = code;
  }
  for (int s = lo; s <= hi; ++s) {
    if (lengths[s] > 0) codes[s] = next[lengths[s]]++;
  }
}

namespace {

int MantissaBits(int width) { return width >= 2 ? width - 1 : 0; }

// The recently used tables, shared by all threads (a query's series are
// read on whichever thread serves it) and replaced round-robin: few enough
// to search linearly on every chunk, enough for the codes of the series a
// query reads together.
struct Cache {
  static constexpr int kSize = 16;
  std::mutex mu;
  std::array<std::shared_ptr<const HuffmanTable>, kSize> tables;
  int next = 0;
};

Cache& TheCache() {
  static Cache* cache = new Cache;  // never destroyed: used until exit
  return *cache;
}

}  // namespace

std::shared_ptr<const HuffmanTable> HuffmanTable::Get(int min_w, int max_w,
                                                      const uint8_t* lengths) {
  Cache& cache = TheCache();
  {
    std::lock_guard lock(cache.mu);
    for (const auto& t : cache.tables) {
      if (t != nullptr && t->Matches(min_w, max_w, lengths)) return t;
    }
  }
  // Built outside the lock; two threads may build the same code, and the
  // cache then keeps both for a while, which is harmless.
  auto t = std::make_shared<const HuffmanTable>(min_w, max_w, lengths);
  std::lock_guard lock(cache.mu);
  cache.tables[static_cast<size_t>(cache.next)] = t;
  cache.next = (cache.next + 1) % Cache::kSize;
  return t;
}

HuffmanTable::HuffmanTable(int min_w, int max_w, const uint8_t* lengths)
    : min_w_(min_w), max_w_(max_w) {
  std::memcpy(lengths_ + min_w, lengths + min_w, static_cast<size_t>(max_w - min_w + 1));
  for (int s = min_w; s <= max_w; ++s) lut_bits_ = std::max(lut_bits_, int{lengths_[s]});
  CanonicalCodes(lengths_, codes_, min_w, max_w);
  std::fill(lut_, lut_ + (1 << lut_bits_), kNoCode);
  longest_ = lut_bits_;  // Peek reads lut_bits_ bits, so they must be buffered
  for (int s = min_w; s <= max_w; ++s) {
    const int l = lengths_[s];
    if (l == 0) continue;
    const int total = l + MantissaBits(s);
    longest_ = std::max(longest_, total);
    const uint32_t entry = static_cast<uint32_t>(s << 16 | l << 8 | total);
    std::fill(lut_ + (codes_[s] << (lut_bits_ - l)), lut_ + ((codes_[s] + 1) << (lut_bits_ - l)),
              entry);
  }
}

HuffmanTable::~HuffmanTable() { delete[] multi_.load(std::memory_order_acquire); }

bool HuffmanTable::Matches(int min_w, int max_w, const uint8_t* lengths) const {
  return min_w == min_w_ && max_w == max_w_ &&
         std::memcmp(lengths + min_w, lengths_ + min_w, static_cast<size_t>(max_w - min_w + 1)) ==
             0;
}

const uint64_t* HuffmanTable::BuildMultiSymbol() const {
  constexpr int kBits = kMultiBits;
  auto* table = new uint64_t[size_t{1} << kBits];
  std::fill(table, table + (size_t{1} << kBits), kNoSymbols);
  // Depth-first over the sequences of whole symbols that fit in kBits: a
  // sequence's entry covers every index starting with its bits, and the
  // longer sequences, visited after it, overwrite their share.
  struct Node {
    uint32_t prefix;
    int bits;
    int count;
    int32_t sum;
  };
  // Every symbol (a code with one of its mantissas) that fits, shortest
  // first, so that the search stops at the first one too long.
  struct Symbol {
    uint32_t bits;
    int length;
    int32_t value;
  };
  std::vector<Symbol> symbols;
  for (int s = min_w_; s <= max_w_; ++s) {
    const int l = lengths_[s];
    const int m = MantissaBits(s);
    if (l == 0 || l + m > kBits) continue;
    for (uint32_t mantissa = 0; mantissa < (uint32_t{1} << m); ++mantissa) {
      const uint32_t z = s >= 2 ? (uint32_t{1} << m | mantissa) : static_cast<uint32_t>(s);
      symbols.push_back(
          {codes_[s] << m | mantissa, l + m, static_cast<int32_t>((z >> 1) ^ (0u - (z & 1)))});
    }
  }
  std::stable_sort(symbols.begin(), symbols.end(),
                   [](const Symbol& a, const Symbol& b) { return a.length < b.length; });
  std::vector<Node> stack = {{0, 0, 0, 0}};
  stack.reserve(64);
  while (!stack.empty()) {
    const Node n = stack.back();
    stack.pop_back();
    if (n.count > 0) {
      const uint64_t entry = static_cast<uint64_t>(static_cast<uint32_t>(n.sum)) << 32 |
                             static_cast<uint64_t>(n.bits) << 8 | static_cast<uint64_t>(n.count);
      const int free_bits = kBits - n.bits;
      std::fill(table + (size_t{n.prefix} << free_bits),
                table + (size_t{n.prefix + 1} << free_bits), entry);
    }
    for (const Symbol& s : symbols) {
      if (n.bits + s.length > kBits) break;
      stack.push_back(
          {n.prefix << s.length | s.bits, n.bits + s.length, n.count + 1, n.sum + s.value});
    }
  }
  const uint64_t* expected = nullptr;
  if (!multi_.compare_exchange_strong(expected, table, std::memory_order_acq_rel)) {
    delete[] table;  // another thread published first
    return expected;
  }
  return table;
}

}  // namespace gpumon::tsdb::chunkenc
