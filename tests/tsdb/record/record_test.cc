// Round trips and malformed-input handling of the WAL record codecs.
#include "tsdb/record/record.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tsdb/record/varint.h"
#include "tsdb/sample.h"

namespace gpumon::tsdb::record {
namespace {

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

std::vector<double> AdversarialFloats() {
  return {0.0,
          -0.0,
          1.0,
          -1.5,
          0.1,
          std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN(),
          StaleNaN(),
          std::bit_cast<double>(0xfff8000000000001ULL),  // negative NaN with payload
          std::bit_cast<double>(0x7ff0000000000001ULL),  // signalling NaN
          std::numeric_limits<double>::denorm_min(),
          -std::numeric_limits<double>::denorm_min(),
          std::numeric_limits<double>::min(),
          std::numeric_limits<double>::max(),
          std::numeric_limits<double>::lowest(),
          1e308,
          123456789.123456789};
}

void ExpectSamplesEqual(const std::vector<RefSample>& want, const std::vector<RefSample>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].ref, got[i].ref) << i;
    EXPECT_EQ(want[i].t, got[i].t) << i;
    EXPECT_EQ(std::bit_cast<uint64_t>(want[i].v), std::bit_cast<uint64_t>(got[i].v)) << i;
  }
}

TEST(RecordTest, SeriesRoundTrip) {
  std::vector<RefSeries> series = {
      {0, Labels{}},
      {1, Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}, {"uuid", "GPU-abc"}}},
      {kU64Max, Labels{{"a", ""}, {"b", ""}}},  // empty values
      {7, Labels{{"", "empty name sorts first"}, {"x", std::string("nul\0byte", 8)}}},
      {kU64Max - 1, Labels{{"utf8", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac"}}},
      {1ULL << 63, Labels{{"long", std::string(100000, 'v')}}},
  };
  std::vector<uint8_t> bytes = EncodeSeries(series);
  EXPECT_EQ(PeekType(bytes), RecordType::kSeries);
  std::vector<RefSeries> got;
  ASSERT_TRUE(DecodeSeries(bytes, &got).ok());
  EXPECT_EQ(got, series);
}

TEST(RecordTest, SamplesRoundTripAdversarial) {
  std::vector<RefSample> samples;
  std::vector<uint64_t> refs = {0, 1, kU64Max, 2, 1ULL << 63, 5, 5, 0};
  std::vector<int64_t> times = {0, -1, kI64Min, kI64Max, kI64Min, 1700000000000, -1700000000000, 0};
  auto floats = AdversarialFloats();
  for (size_t i = 0; i < floats.size() * refs.size(); ++i) {
    samples.push_back(
        {refs[i % refs.size()], times[(i / 3) % times.size()], floats[i % floats.size()]});
  }
  std::vector<uint8_t> bytes = EncodeSamples(samples);
  EXPECT_EQ(PeekType(bytes), RecordType::kSamples);
  std::vector<RefSample> got;
  ASSERT_TRUE(DecodeSamples(bytes, &got).ok());
  ExpectSamplesEqual(samples, got);
}

TEST(RecordTest, SamplesRoundTripRandom) {
  std::mt19937_64 rng(42);
  std::vector<uint8_t> bytes;
  std::vector<RefSample> got;
  for (int round = 0; round < 200; ++round) {
    std::vector<RefSample> samples(rng() % 300);
    for (auto& s : samples) {
      s.ref = rng() >> (rng() % 64);
      s.t = static_cast<int64_t>(rng() >> (rng() % 64)) * ((rng() & 1) ? -1 : 1);
      s.v = std::bit_cast<double>(rng());
    }
    EncodeSamples(samples, &bytes);
    ASSERT_TRUE(DecodeSamples(bytes, &got).ok());
    ExpectSamplesEqual(samples, got);
  }
}

TEST(RecordTest, SamplesOfOneScrapeAreCompact) {
  // One commit of a scrape: consecutive refs, one timestamp. Deltas keep
  // each sample at 1 + 1 + 8 bytes.
  std::vector<RefSample> samples;
  for (uint64_t ref = 1000; ref < 11000; ++ref) samples.push_back({ref, 1700000000000, 42.5});
  std::vector<uint8_t> bytes = EncodeSamples(samples);
  EXPECT_LE(bytes.size(), samples.size() * 10 + 20);
}

TEST(RecordTest, TombstonesRoundTrip) {
  std::vector<RefTombstone> stones = {{0, 0, 0},
                                      {kU64Max, kI64Min, kI64Max},
                                      {3, kI64Max, kI64Min},  // inverted range still round-trips
                                      {2, -5, 10},
                                      {1ULL << 40, 1700000000000, 1700000360000}};
  std::vector<uint8_t> bytes = EncodeTombstones(stones);
  EXPECT_EQ(PeekType(bytes), RecordType::kTombstones);
  std::vector<RefTombstone> got;
  ASSERT_TRUE(DecodeTombstones(bytes, &got).ok());
  EXPECT_EQ(got, stones);
}

TEST(RecordTest, EmptyListsRoundTrip) {
  std::vector<RefSeries> series;
  std::vector<RefSample> samples;
  std::vector<RefTombstone> stones;
  ASSERT_TRUE(DecodeSeries(EncodeSeries({}), &series).ok());
  ASSERT_TRUE(DecodeSamples(EncodeSamples({}), &samples).ok());
  ASSERT_TRUE(DecodeTombstones(EncodeTombstones({}), &stones).ok());
  EXPECT_TRUE(series.empty());
  EXPECT_TRUE(samples.empty());
  EXPECT_TRUE(stones.empty());
}

TEST(RecordTest, EncodeReplacesBufferContents) {
  std::vector<uint8_t> buf(1000, 0xee);
  std::vector<RefSample> one = {{1, 2, 3.0}};
  EncodeSamples(one, &buf);
  EXPECT_EQ(buf, EncodeSamples(one));
  std::vector<RefSample> got = {{9, 9, 9}, {8, 8, 8}};
  ASSERT_TRUE(DecodeSamples(buf, &got).ok());
  ExpectSamplesEqual(one, got);
}

TEST(RecordTest, PeekTypeRejectsUnknown) {
  EXPECT_EQ(PeekType({}), RecordType::kInvalid);
  std::vector<uint8_t> zero = {0}, unknown = {77, 0};
  EXPECT_EQ(PeekType(zero), RecordType::kInvalid);
  EXPECT_EQ(PeekType(unknown), RecordType::kInvalid);
}

TEST(RecordTest, WrongTypeIsAnError) {
  std::vector<RefSample> samples;
  std::vector<RefSeries> series;
  Status s = DecodeSamples(EncodeTombstones({}), &samples);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("type byte is 3"), std::string::npos) << s.message();
  EXPECT_FALSE(DecodeSeries(EncodeSamples({}), &series).ok());
  EXPECT_FALSE(DecodeSeries({}, &series).ok());
}

TEST(RecordTest, EveryTruncationIsAnError) {
  std::vector<RefSeries> series = {{5, Labels{{"__name__", "m"}, {"a", "b"}}},
                                   {6, Labels{{"__name__", "m"}, {"a", "c"}}}};
  std::vector<RefSample> samples = {{1, 100, 1.0}, {2, 100, StaleNaN()}, {300, -5, -0.0}};
  std::vector<RefTombstone> stones = {{1, 2, 3}, {kU64Max, kI64Min, kI64Max}};
  auto full_series = EncodeSeries(series);
  auto full_samples = EncodeSamples(samples);
  auto full_stones = EncodeTombstones(stones);
  std::vector<RefSeries> s1;
  std::vector<RefSample> s2;
  std::vector<RefTombstone> s3;
  for (size_t n = 0; n < full_series.size(); ++n) {
    EXPECT_FALSE(DecodeSeries(std::span(full_series).first(n), &s1).ok()) << n;
  }
  for (size_t n = 0; n < full_samples.size(); ++n) {
    EXPECT_FALSE(DecodeSamples(std::span(full_samples).first(n), &s2).ok()) << n;
  }
  for (size_t n = 0; n < full_stones.size(); ++n) {
    EXPECT_FALSE(DecodeTombstones(std::span(full_stones).first(n), &s3).ok()) << n;
  }
}

TEST(RecordTest, TrailingBytesAreAnError) {
  auto bytes = EncodeSamples(std::vector<RefSample>{{1, 2, 3}});
  bytes.push_back(0);
  std::vector<RefSample> got;
  Status s = DecodeSamples(bytes, &got);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("trailing"), std::string::npos) << s.message();
}

TEST(RecordTest, HugeCountIsRejectedBeforeAllocating) {
  for (uint8_t type : {1, 2, 3}) {
    std::vector<uint8_t> bytes = {type};
    PutUvarint(&bytes, 1ULL << 60);
    bytes.insert(bytes.end(), 64, 0);
    std::vector<RefSeries> a;
    std::vector<RefSample> b;
    std::vector<RefTombstone> c;
    Status s = type == 1   ? DecodeSeries(bytes, &a)
               : type == 2 ? DecodeSamples(bytes, &b)
                           : DecodeTombstones(bytes, &c);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("cannot fit"), std::string::npos) << s.message();
  }
  // A label count beyond the bytes left.
  std::vector<uint8_t> bytes = {1, 1, 0};
  PutUvarint(&bytes, 1ULL << 40);
  std::vector<RefSeries> series;
  EXPECT_FALSE(DecodeSeries(bytes, &series).ok());
}

TEST(RecordTest, OverlongVarintIsAnError) {
  std::vector<uint8_t> bytes = {2};
  bytes.insert(bytes.end(), 11, 0x80);  // never terminates within 10 bytes
  bytes.push_back(0);
  std::vector<RefSample> got;
  EXPECT_FALSE(DecodeSamples(bytes, &got).ok());
  // Ten bytes whose last carries more than the 64th bit.
  std::vector<uint8_t> overflow = {2};
  overflow.insert(overflow.end(), 9, 0xff);
  overflow.push_back(0x02);
  EXPECT_FALSE(DecodeSamples(overflow, &got).ok());
}

TEST(RecordTest, UnsortedLabelsAreAnError) {
  std::vector<uint8_t> bytes = {1, 1, 0, 2};
  PutString(&bytes, "b");
  PutString(&bytes, "1");
  PutString(&bytes, "a");
  PutString(&bytes, "2");
  std::vector<RefSeries> got;
  Status s = DecodeSeries(bytes, &got);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("sorted"), std::string::npos) << s.message();
  // Duplicate names are not strictly sorted either.
  std::vector<uint8_t> dup = {1, 1, 0, 2};
  PutString(&dup, "a");
  PutString(&dup, "1");
  PutString(&dup, "a");
  PutString(&dup, "2");
  EXPECT_FALSE(DecodeSeries(dup, &got).ok());
}

TEST(RecordTest, RandomBytesNeverCrash) {
  // Mutations of valid records: every outcome is fine except a crash, which
  // the sanitizer build would catch.
  std::mt19937_64 rng(7);
  std::vector<RefSeries> series = {{5, Labels{{"__name__", "m"}, {"a", "b"}}}};
  std::vector<RefSample> samples = {{1, 100, 1.0}, {2, 100, 2.0}};
  std::vector<std::vector<uint8_t>> seeds = {
      EncodeSeries(series), EncodeSamples(samples),
      EncodeTombstones(std::vector<RefTombstone>{{1, 2, 3}})};
  std::vector<RefSeries> a;
  std::vector<RefSample> b;
  std::vector<RefTombstone> c;
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes = seeds[i % seeds.size()];
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f)
      bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    ok += DecodeSeries(bytes, &a).ok() + DecodeSamples(bytes, &b).ok() +
          DecodeTombstones(bytes, &c).ok();
  }
  EXPECT_GT(ok, 0);  // values flipped inside samples still decode
}

}  // namespace
}  // namespace gpumon::tsdb::record
