#include "tsdb/index/crc.h"

#include <gtest/gtest.h>

#include <random>
#include <string_view>
#include <vector>

namespace gpumon::tsdb::index {
namespace {

std::span<const uint8_t> Bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Crc32cTest, KnownVectors) {
  // The standard check value of CRC-32C, and RFC 3720 test patterns.
  EXPECT_EQ(Crc32c(Bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(Crc32cPortable(Bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(Crc32c({}), 0u);
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF);
  EXPECT_EQ(Crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones), 0x62A8AB43u);
}

TEST(Crc32cTest, HardwareAndPortableAgreeAndChain) {
  std::mt19937_64 rng(9);
  for (size_t n : {0, 1, 7, 8, 9, 63, 64, 1000, 4099}) {
    std::vector<uint8_t> b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    EXPECT_EQ(Crc32c(b), Crc32cPortable(b)) << n;
    for (size_t cut : {size_t{0}, n / 3, n}) {
      std::span<const uint8_t> s(b);
      EXPECT_EQ(Crc32c(s.subspan(cut), Crc32c(s.first(cut))), Crc32c(b));
      EXPECT_EQ(Crc32cPortable(s.subspan(cut), Crc32cPortable(s.first(cut))), Crc32c(b));
    }
  }
}

}  // namespace
}  // namespace gpumon::tsdb::index
