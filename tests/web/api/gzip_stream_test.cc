#include "web/api/gzip_stream.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "../gunzip.h"

namespace gpumon::web::api {
namespace {

using ::gpumon::web::testing::Gunzip;

TEST(GzipStreamTest, PiecesDecompressToTheConcatenation) {
  std::string compressed;
  int calls = 0;
  GzipStream gz([&](const char* d, size_t n) {
    ++calls;
    compressed.append(d, n);
    return true;
  });
  std::string plain;
  for (int i = 0; i < 20000; ++i) {
    std::string piece = "{\"metric\":{\"gpu\":\"" + std::to_string(i) + "\"}},";
    plain += piece;
    ASSERT_TRUE(gz.Write(piece));
  }
  ASSERT_TRUE(gz.Finish());
  EXPECT_LT(compressed.size(), plain.size() / 4);
  EXPECT_GT(calls, 1);  // output left in pieces, not all at the end
  EXPECT_EQ(Gunzip(compressed), plain);
  EXPECT_FALSE(gz.Write("more"));  // finished
}

TEST(GzipStreamTest, EmptyInputIsAValidMember) {
  std::string compressed;
  GzipStream gz([&](const char* d, size_t n) {
    compressed.append(d, n);
    return true;
  });
  ASSERT_TRUE(gz.Finish());
  EXPECT_EQ(Gunzip(compressed), "");
}

TEST(GzipStreamTest, SinkFailureStops) {
  GzipStream gz([](const char*, size_t) { return false; });
  std::string big(1 << 20, 'a');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + (i * 7919) % 26);
  bool ok = gz.Write(big);
  ok = ok && gz.Finish();
  EXPECT_FALSE(ok);
}

}  // namespace
}  // namespace gpumon::web::api
