#include "web/api/gzip_stream.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace gpumon::web::api {
namespace {

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[4096];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc == Z_OK);
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

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
