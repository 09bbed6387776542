// Corrupt and truncated chunks: decoding must stop with an error (never
// crash, hang or read out of bounds; run under the sanitizer build too),
// and whatever it does yield keeps the iterator contract.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "chunk_test_util.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/chunkenc/packed.h"

namespace gpumon::tsdb::chunkenc {
namespace {

using chunktest::DecodeAll;

// Valid chunks of every encoding and column coding.
std::vector<std::vector<uint8_t>> ValidChunks() {
  std::mt19937_64 rng(8);
  std::vector<std::vector<uint8_t>> out;
  for (int i = 0; i < 12; ++i) {
    auto samples = chunktest::RandomSeries(rng, 1 + static_cast<int>(rng() % 150));
    out.push_back(EncodeXor(samples));
    out.push_back(EncodeBest(samples));
    for (int mode : {kValueXor, kValueDecimal}) {
      for (int kind = 0; kind <= 1; ++kind) {
        PackedOptions o;
        o.value_mode = mode;
        o.value_kind = kind;
        o.ts_kind = kind;
        out.push_back(EncodePacked(samples, o).value());
      }
    }
  }
  return out;
}

// The properties every decode must have, corrupt input or not.
void CheckDecode(std::span<const uint8_t> chunk) {
  auto d = DecodeAll(chunk);
  ASSERT_LE(d.samples.size(), static_cast<size_t>(kMaxSamples));
  for (size_t i = 1; i < d.samples.size(); ++i) {
    ASSERT_LT(d.samples[i - 1].t, d.samples[i].t) << "timestamps must increase";
  }
  if (d.status.ok()) {
    // A clean decode yields exactly the count the header promises.
    Result<int> count = CountSamples(chunk);
    ASSERT_TRUE(count.ok());
    ASSERT_EQ(static_cast<size_t>(*count), d.samples.size());
  } else {
    EXPECT_NE(d.status.message().find("corrupt chunk"), std::string::npos) << d.status.message();
  }
  // Seek on the same bytes must stop too.
  auto it = NewIterator(chunk);
  while (it->Seek(std::numeric_limits<int64_t>::max())) {
    if (!it->Next()) break;
  }
}

TEST(CorruptionTest, EveryTruncationFails) {
  for (const auto& chunk : ValidChunks()) {
    const auto full = DecodeAll(chunk);
    ASSERT_TRUE(full.status.ok());
    for (size_t len = 0; len < chunk.size(); ++len) {
      // A copy of exactly len bytes, so the sanitizer sees reads past it.
      std::vector<uint8_t> cut(chunk.begin(), chunk.begin() + static_cast<long>(len));
      CheckDecode(cut);
      auto d = DecodeAll(cut);
      // Losing bytes loses data: the decode must not claim success.
      EXPECT_FALSE(d.status.ok()) << "encoding " << int(chunk[0]) << " cut to " << len << " of "
                                  << chunk.size();
    }
  }
}

TEST(CorruptionTest, RandomByteFlipsNeverCrash) {
  std::mt19937_64 rng(12);
  for (const auto& chunk : ValidChunks()) {
    for (int iter = 0; iter < 150; ++iter) {
      std::vector<uint8_t> bad = chunk;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        const size_t at = rng() % bad.size();
        if (at == 0 && rng() % 4 != 0) continue;  // keep the encoding byte most of the time
        bad[at] ^= static_cast<uint8_t>(1 + rng() % 255);
      }
      CheckDecode(bad);
    }
  }
}

TEST(CorruptionTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(13);
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> bytes(rng() % 64);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    if (!bytes.empty()) bytes[0] = static_cast<uint8_t>(1 + rng() % 2);
    CheckDecode(bytes);
  }
}

TEST(CorruptionTest, CountSamplesRejectsBadHeaders) {
  EXPECT_FALSE(CountSamples(std::vector<uint8_t>{1, 0}).ok());     // xor, short count
  EXPECT_FALSE(CountSamples(std::vector<uint8_t>{2}).ok());        // packed, no count
  EXPECT_FALSE(CountSamples(std::vector<uint8_t>{2, 0}).ok());     // packed, zero samples
  EXPECT_FALSE(CountSamples(std::vector<uint8_t>{2, 0x80}).ok());  // truncated varint
  EXPECT_FALSE(CountSamples(std::vector<uint8_t>{2, 0x80, 0x80, 0x04}).ok());  // > kMaxSamples
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
