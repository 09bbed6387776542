// Seeded, time-bounded fuzzing of the encoders: random series of every
// shape through EncodeBest, EncodeXor and randomly forced packed codings
// must decode bit for bit. The seed is printed so a failure reproduces.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "chunk_test_util.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/chunkenc/int_stream.h"
#include "tsdb/chunkenc/packed.h"

namespace gpumon::tsdb::chunkenc {
namespace {

using chunktest::RoundTrips;

TEST(RandomRoundTripTest, ManySeriesRoundTrip) {
  const uint64_t seed = 20240601;
  std::mt19937_64 rng(seed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  int iterations = 0;
  for (; iterations < 20000 && std::chrono::steady_clock::now() < deadline; ++iterations) {
    const int n = 1 + static_cast<int>(rng() % (rng() % 20 == 0 ? 3000 : 200));
    const auto samples = chunktest::RandomSeries(rng, n);
    SCOPED_TRACE("seed " + std::to_string(seed) + " iteration " + std::to_string(iterations));
    auto best = EncodeBest(samples);
    ASSERT_TRUE(RoundTrips(best, samples));
    ASSERT_TRUE(RoundTrips(EncodeXor(samples), samples));
    PackedOptions o;
    o.ts_order = static_cast<int>(rng() % 5) - 1;
    o.ts_kind = static_cast<int>(rng() % 3) - 1;
    o.value_mode = rng() % 2 == 0 ? kValueDecimal : kValueXor;
    o.value_order = static_cast<int>(rng() % 5) - 1;
    o.value_kind = static_cast<int>(rng() % 3) - 1;
    o.scale = static_cast<int>(rng() % (kMaxScale + 2)) - 1;
    auto forced = EncodePacked(samples, o);
    ASSERT_TRUE(forced.ok());
    ASSERT_TRUE(RoundTrips(*forced, samples));
  }
  EXPECT_GT(iterations, 100);
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
