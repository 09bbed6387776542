// The kPacked chunk (packed.h): every column coding round-trips, and the
// encoder picks the expected one for typical series.
#include "tsdb/chunkenc/packed.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "chunk_test_util.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/chunkenc/int_stream.h"

namespace gpumon::tsdb::chunkenc {
namespace {

using chunktest::RoundTrips;

std::vector<Sample> Scraped(int n, double (*f)(int)) {
  std::vector<Sample> out;
  for (int i = 0; i < n; ++i) out.push_back({1700000000000 + i * int64_t{15000}, f(i)});
  return out;
}

// Every forced combination of timestamp and value coding that can hold
// the samples.
void ExpectAllCodingsRoundTrip(const std::vector<Sample>& samples, const std::string& what) {
  for (int ts_order = 0; ts_order <= kLinear; ++ts_order) {
    for (int ts_kind = 0; ts_kind <= 1; ++ts_kind) {
      PackedOptions o;
      o.ts_order = ts_order;
      o.ts_kind = ts_kind;
      o.value_mode = kValueXor;
      auto chunk = EncodePacked(samples, o);
      ASSERT_TRUE(chunk.ok());
      ASSERT_TRUE(RoundTrips(*chunk, samples)) << what << " ts " << ts_order << "/" << ts_kind;
      auto layout = DescribePacked(*chunk);
      ASSERT_TRUE(layout.ok());
      EXPECT_TRUE(layout->ts_kind == ts_kind ||
                  layout->ts_kind == static_cast<int>(IntKind::kEqual));
      if (samples.size() > static_cast<size_t>(ts_order) && samples.size() > 1) {
        EXPECT_EQ(layout->ts_order, ts_order);
      }
    }
  }
  for (int order = 0; order <= kLinear; ++order) {
    for (int kind = 0; kind <= 1; ++kind) {
      for (int scale : {-1, 0, 3, kMaxScale}) {
        PackedOptions o;
        o.value_mode = kValueDecimal;
        o.value_order = order;
        o.value_kind = kind;
        o.scale = scale;
        auto chunk = EncodePacked(samples, o);
        ASSERT_TRUE(chunk.ok());
        ASSERT_TRUE(RoundTrips(*chunk, samples))
            << what << " decimal order " << order << " kind " << kind << " scale " << scale;
        EXPECT_EQ(DescribePacked(*chunk)->value_mode, kValueDecimal);
      }
    }
  }
  PackedOptions constant;
  constant.value_mode = kValueConst;
  auto chunk = EncodePacked(samples, constant);
  bool all_same = true;
  for (const Sample& s : samples) all_same &= chunktest::Bits(s.v) == chunktest::Bits(samples[0].v);
  ASSERT_EQ(chunk.ok(), all_same) << what;
  if (all_same) {
    EXPECT_TRUE(RoundTrips(*chunk, samples)) << what;
  }
}

TEST(PackedTest, EveryCodingRoundTripsRandomSeries) {
  std::mt19937_64 rng(21);
  for (int iter = 0; iter < 60; ++iter) {
    const int n = 1 + static_cast<int>(rng() % (iter % 10 == 0 ? 2000 : 150));
    ExpectAllCodingsRoundTrip(chunktest::RandomSeries(rng, n), "iteration " + std::to_string(iter));
  }
}

TEST(PackedTest, EveryCodingRoundTripsAdversarialValues) {
  const auto values = chunktest::AdversarialValues();
  std::vector<Sample> samples;
  for (size_t i = 0; i < values.size(); ++i) samples.push_back({int64_t(i) - 3, values[i]});
  ExpectAllCodingsRoundTrip(samples, "adversarial");
  for (double v : values) {
    ExpectAllCodingsRoundTrip({{-1, v}}, "single");
    ExpectAllCodingsRoundTrip({{-1, v}, {0, v}, {1, v}}, "constant");
  }
}

TEST(PackedTest, RegularScrapesAndConstantsAreTiny) {
  auto samples = Scraped(120, [](int) { return 1.0; });
  auto chunk = EncodePacked(samples);
  ASSERT_TRUE(chunk.ok());
  // Encoding, count, modes, timestamps (first, step) and the value.
  EXPECT_LE(chunk->size(), 14u);
  auto layout = DescribePacked(*chunk);
  EXPECT_EQ(layout->ts_order, 1);
  EXPECT_EQ(layout->ts_kind, static_cast<int>(IntKind::kEqual));
  EXPECT_TRUE(RoundTrips(*chunk, samples));
}

TEST(PackedTest, PicksDecimalScaleOfTheData) {
  auto power = Scraped(120, [](int i) { return (300000 + (i * 7919) % 50000) / 1000.0; });
  auto layout = DescribePacked(EncodePacked(power).value());
  EXPECT_EQ(layout->value_mode, kValueDecimal);
  EXPECT_EQ(layout->scale, 3);
  EXPECT_EQ(layout->exceptions, 0);

  auto util = Scraped(120, [](int i) { return ((i * 37) % 101) / 100.0; });
  layout = DescribePacked(EncodePacked(util).value());
  EXPECT_EQ(layout->value_mode, kValueDecimal);
  EXPECT_EQ(layout->scale, 2);

  auto random = Scraped(120, [](int i) { return 1.0 / (3.0 + i); });
  layout = DescribePacked(EncodePacked(random).value());
  EXPECT_EQ(layout->value_mode, kValueXor);
}

TEST(PackedTest, OddValuesBecomeExceptions) {
  // A decimal series that goes stale and has a -0.0 and a NaN inside.
  auto samples = Scraped(120, [](int i) { return (250000 + i * 13) / 1000.0; });
  samples[0].v = -0.0;
  samples[60].v = std::bit_cast<double>(uint64_t{0x7ff8dead0000beef});
  samples.back().v = StaleNaN();
  auto chunk = EncodePacked(samples);
  ASSERT_TRUE(chunk.ok());
  auto layout = DescribePacked(*chunk);
  EXPECT_EQ(layout->value_mode, kValueDecimal);
  EXPECT_EQ(layout->exceptions, 3);
  EXPECT_TRUE(RoundTrips(*chunk, samples));
  // Far fewer bytes than XOR floats, despite the exceptions.
  EXPECT_LT(chunk->size() * 2, EncodeXor(samples).size());
}

TEST(PackedTest, RejectsBadSampleCounts) {
  EXPECT_FALSE(EncodePacked({}).ok());
  std::vector<Sample> too_many(kMaxSamples + 1);
  for (size_t i = 0; i < too_many.size(); ++i) too_many[i].t = static_cast<int64_t>(i);
  EXPECT_FALSE(EncodePacked(too_many).ok());
}

TEST(PackedTest, DescribeRejectsOtherChunks) {
  auto xor_chunk = EncodeXor(Scraped(3, [](int i) { return double(i); }));
  EXPECT_FALSE(DescribePacked(xor_chunk).ok());
  EXPECT_FALSE(DescribePacked({}).ok());
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
