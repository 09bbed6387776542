// HuffmanTable (huffman_table.h): the multi-symbol table agrees with
// decoding one symbol at a time for every index, and the per-thread cache
// hands out one table per distinct code.
#include "tsdb/chunkenc/huffman_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gpumon::tsdb::chunkenc {
namespace {

struct Code {
  int min_w;
  int max_w;
  std::vector<uint8_t> lengths;  // for widths min_w..max_w
};

std::vector<uint8_t> Full(const Code& c) {
  std::vector<uint8_t> l(kHuffmanSymbols, 0);
  for (int s = c.min_w; s <= c.max_w; ++s) l[s] = c.lengths[s - c.min_w];
  return l;
}

// Decodes whole symbols from the top of a kMultiBits-bit index with the
// single-symbol lut, as the reader does; returns count, bits and sum.
void DecodeSlowly(const HuffmanTable& t, uint32_t index, int* count, int* bits, int32_t* sum) {
  constexpr int kBits = HuffmanTable::kMultiBits;
  *count = *bits = 0;
  *sum = 0;
  for (;;) {
    const int left = kBits - *bits;
    // The next lut_bits bits, zero-padded past the index's end.
    const uint64_t rest = (uint64_t{index} << *bits) & ((uint64_t{1} << kBits) - 1);
    const uint32_t entry = t.lut()[rest >> (kBits - t.lut_bits())];
    const int total = static_cast<int>(entry & 0xff);
    if (entry == HuffmanTable::kNoCode || total > left) return;
    const int width = static_cast<int>(entry >> 16);
    uint64_t z = static_cast<uint64_t>(width);
    if (width >= 2) {
      const uint64_t symbol = rest >> (kBits - total);
      z = (symbol & ((uint64_t{1} << (width - 1)) - 1)) | uint64_t{1} << (width - 1);
    }
    *sum += static_cast<int32_t>((z >> 1) ^ (0 - (z & 1)));
    *bits += total;
    ++*count;
  }
}

TEST(HuffmanTableTest, MultiSymbolTableMatchesSymbolBySymbol) {
  const std::vector<Code> codes = {
      {0, 5, {1, 3, 2, 4, 5, 5}},               // temperature deltas
      {0, 1, {1, 1}},                           // one bit per symbol: kMultiBits symbols per entry
      {3, 12, {2, 2, 3, 4, 5, 6, 7, 8, 8, 0}},  // long mantissas, an unused width
      {0, 4, {2, 2, 2, 3, 3}},
      {0, 2, {1, 2, 3}},  // incomplete code: some indexes start with no code
  };
  for (const Code& c : codes) {
    const auto lengths = Full(c);
    HuffmanTable t(c.min_w, c.max_w, lengths.data());
    ASSERT_TRUE(t.fast());
    const uint64_t* multi = t.MultiSymbol();
    for (uint32_t i = 0; i < (uint32_t{1} << HuffmanTable::kMultiBits); ++i) {
      int count, bits;
      int32_t sum;
      DecodeSlowly(t, i, &count, &bits, &sum);
      const uint64_t e = multi[i];
      ASSERT_EQ(static_cast<int>(e & 0xff), count)
          << "code " << c.min_w << ".." << c.max_w << " index " << i;
      if (count == 0) {
        ASSERT_EQ(e, HuffmanTable::kNoSymbols) << "index " << i;
        continue;
      }
      ASSERT_EQ(static_cast<int>((e >> 8) & 0xff), bits) << "index " << i;
      ASSERT_EQ(static_cast<int32_t>(e >> 32), sum) << "index " << i;
    }
    EXPECT_EQ(t.MultiSymbol(), multi);  // built once
  }
}

TEST(HuffmanTableTest, CacheSharesTablesOfEqualCodes) {
  const auto a = Full({0, 5, {1, 3, 2, 4, 5, 5}});
  const auto b = Full({0, 5, {1, 3, 2, 5, 4, 5}});
  auto ta = HuffmanTable::Get(0, 5, a.data());
  auto tb = HuffmanTable::Get(0, 5, b.data());
  EXPECT_NE(ta, tb);
  EXPECT_EQ(HuffmanTable::Get(0, 5, a.data()), ta);
  EXPECT_TRUE(ta->Matches(0, 5, a.data()));
  EXPECT_FALSE(ta->Matches(0, 5, b.data()));
  EXPECT_FALSE(ta->Matches(1, 5, a.data()));
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
