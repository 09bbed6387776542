// Decimal detection (decimal.h): exact by construction, never by luck.
#include "tsdb/chunkenc/decimal.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "chunk_test_util.h"

namespace gpumon::tsdb::chunkenc {
namespace {

using chunktest::AdversarialValues;
using chunktest::Bits;

TEST(DecimalTest, FindsTheSmallestScale) {
  struct Case {
    double v;
    int k;
    int64_t m;
  };
  const Case cases[] = {
      {0.0, 0, 0},
      {1.0, 0, 1},
      {-42.0, 0, -42},
      {312.5, 1, 3125},
      {87 / 100.0, 2, 87},
      {0.1, 1, 1},
      {312456 / 1000.0, 3, 312456},
      {1980e6, 0, 1980000000},
      {123456789012 / 1e9, 9, 123456789012},
      {-0.001, 3, -1},
      {1e18, 0, 1000000000000000000},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MinDecimalScale(c.v), c.k) << c.v;
    int64_t m = 0;
    ASSERT_TRUE(DecimalAt(c.v, c.k, &m)) << c.v;
    EXPECT_EQ(m, c.m) << c.v;
    EXPECT_EQ(Bits(DecimalValue(m, c.k)), Bits(c.v)) << c.v;
  }
}

TEST(DecimalTest, RejectsWhatDivisionCannotReproduce) {
  using L = std::numeric_limits<double>;
  for (double v : {L::quiet_NaN(), StaleNaN(), L::infinity(), -L::infinity(), -0.0, L::denorm_min(),
                   L::max(), 1e300, 1e19, -1e19, L::min()}) {
    EXPECT_EQ(MinDecimalScale(v), -1) << v;
  }
  // Shortest forms need more than kMaxScale decimals.
  EXPECT_EQ(MinDecimalScale(1e-4 / 3.0), -1);
  EXPECT_EQ(MinDecimalScale(1e-19), -1);
  // 1/3 prints as 0.3333333333333333, which 16 decimals reproduce.
  EXPECT_EQ(MinDecimalScale(1.0 / 3.0), 16);
}

TEST(DecimalTest, EveryAcceptedScaleReproducesTheBits) {
  // Whatever DecimalAt accepts must decode to the identical double; check
  // it over random bit patterns, adversarial values and short decimals.
  std::mt19937_64 rng(99);
  std::vector<double> values = AdversarialValues();
  for (int i = 0; i < 20000; ++i) values.push_back(std::bit_cast<double>(rng()));
  for (int i = 0; i < 20000; ++i) {
    const int k = static_cast<int>(rng() % 10);
    values.push_back(static_cast<double>(static_cast<int64_t>(rng() % 2000000000) - 1000000000) /
                     Pow10(k));
  }
  for (double v : values) {
    for (int k = 0; k <= kMaxScale; ++k) {
      int64_t m;
      if (DecimalAt(v, k, &m)) {
        ASSERT_EQ(Bits(DecimalValue(m, k)), Bits(v)) << v << " k=" << k;
      }
    }
    const int k = MinDecimalScale(v);
    if (k >= 0) {
      int64_t m;
      ASSERT_TRUE(DecimalAt(v, k, &m));
      for (int smaller = 0; smaller < k; ++smaller) {
        ASSERT_FALSE(DecimalAt(v, smaller, &m)) << v;
      }
    }
  }
}

TEST(DecimalTest, ParsedDecimalTextMatchesDivision) {
  // A scraper that parses "0.87" gets the same double as 87 / 100.0, so
  // values that went through text are found too.
  EXPECT_EQ(MinDecimalScale(std::strtod("0.87", nullptr)), 2);
  EXPECT_EQ(MinDecimalScale(std::strtod("312.456", nullptr)), 3);
  EXPECT_EQ(MinDecimalScale(std::strtod("1234567.891", nullptr)), 3);
  EXPECT_EQ(MinDecimalScale(std::strtod("0.000001", nullptr)), 6);
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
