#include "http/request_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpumon::http {
namespace {

using Stage = RequestDecoder::Stage;

struct Outcome {
  std::vector<HttpRequest> requests;
  int error_status = 0;  // 0: no error
  std::string error_message;
  std::string leftover;  // bytes buffered and not consumed at the end
  int heads = 0;
};

// Plays a connection: appends `input` to a buffer `piece` bytes at a time
// and drives the decoder the way the server does.
Outcome Decode(const std::string& input, size_t piece = 1 << 30, size_t body_limit = 1 << 20,
               DecoderLimits limits = {}) {
  Outcome out;
  RequestDecoder d(limits);
  std::string buf;
  for (size_t pos = 0; pos < input.size() || pos == 0; pos += piece) {
    buf.append(input, pos, piece);
    while (true) {
      size_t used = 0;
      Stage st = d.Feed(buf.data(), buf.size(), &used);
      buf.erase(0, used);
      if (st == Stage::kHeadReady) {
        ++out.heads;
        st = d.BeginBody(body_limit);
        if (st == Stage::kNeedMore) continue;  // the body may be buffered already
      }
      if (st == Stage::kError) {
        out.error_status = d.error_status();
        out.error_message = d.error_message();
        out.leftover = buf;
        return out;
      }
      if (st == Stage::kComplete) {
        out.requests.push_back(std::move(d.request()));
        d.Reset();
        continue;
      }
      if (st == Stage::kNeedMore) break;
    }
    if (input.empty()) break;
  }
  out.leftover = buf;
  return out;
}

int Status(const std::string& input, size_t body_limit = 1 << 20, DecoderLimits limits = {}) {
  return Decode(input, 1 << 30, body_limit, limits).error_status;
}

TEST(RequestDecoderTest, SimpleGet) {
  const std::string in =
      "GET /api/v1/query?query=up&time=1 HTTP/1.1\r\nHost: x\r\nX-A:  v  \r\n\r\n";
  for (size_t piece : {size_t{1}, size_t{3}, size_t{7}, in.size()}) {
    Outcome o = Decode(in, piece);
    ASSERT_EQ(o.error_status, 0) << piece << " " << o.error_message;
    ASSERT_EQ(o.requests.size(), 1u) << piece;
    const HttpRequest& r = o.requests[0];
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.target, "/api/v1/query?query=up&time=1");
    EXPECT_EQ(r.path, "/api/v1/query");
    EXPECT_EQ(r.query, "query=up&time=1");
    EXPECT_EQ(r.version_major, 1);
    EXPECT_EQ(r.version_minor, 1);
    EXPECT_EQ(r.Header("x-a"), "v");
    EXPECT_EQ(r.Header("Host"), "x");
    EXPECT_TRUE(r.body.empty());
    EXPECT_TRUE(o.leftover.empty());
  }
}

TEST(RequestDecoderTest, ContentLengthBodyAndPipelining) {
  const std::string one = "POST /w HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
  const std::string two = "GET /b HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string three =
      "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  const std::string partial = "GET /d HTT";
  for (size_t piece : {size_t{1}, size_t{2}, size_t{5}, size_t{1000}}) {
    Outcome o = Decode(one + two + three + partial, piece);
    ASSERT_EQ(o.error_status, 0) << o.error_message;
    ASSERT_EQ(o.requests.size(), 3u);
    EXPECT_EQ(o.requests[0].body, "hello");
    EXPECT_EQ(o.requests[1].path, "/b");
    EXPECT_EQ(o.requests[2].body, "abc");
    EXPECT_EQ(o.leftover, partial);
  }
}

TEST(RequestDecoderTest, ChunkedWithExtensionsAndTrailers) {
  const std::string in =
      "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4;ext=1\r\nwiki\r\n5\r\npedia\r\n0\r\nX-Trailer: t\r\n\r\n";
  for (size_t piece : {size_t{1}, size_t{4}, in.size()}) {
    Outcome o = Decode(in, piece);
    ASSERT_EQ(o.error_status, 0) << o.error_message;
    ASSERT_EQ(o.requests.size(), 1u);
    EXPECT_EQ(o.requests[0].body, "wikipedia");
    EXPECT_FALSE(o.requests[0].HasHeader("X-Trailer"));
  }
}

TEST(RequestDecoderTest, LeadingEmptyLinesIgnored) {
  Outcome o = Decode("\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", 1);
  ASSERT_EQ(o.error_status, 0) << o.error_message;
  ASSERT_EQ(o.requests.size(), 1u);
}

TEST(RequestDecoderTest, HeadReadyBeforeBody) {
  RequestDecoder d({});
  const std::string head =
      "PUT /u HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n";
  size_t used = 0;
  ASSERT_EQ(d.Feed(head.data(), head.size(), &used), Stage::kHeadReady);
  EXPECT_EQ(used, head.size());
  EXPECT_TRUE(d.expects_continue());
  EXPECT_TRUE(d.has_body());
  EXPECT_EQ(d.content_length(), 4u);
  // Nothing more is taken until BeginBody().
  ASSERT_EQ(d.Feed("abcd", 4, &used), Stage::kHeadReady);
  EXPECT_EQ(used, 0u);
  ASSERT_EQ(d.BeginBody(100), Stage::kNeedMore);
  ASSERT_EQ(d.Feed("ab", 2, &used), Stage::kNeedMore);
  EXPECT_EQ(used, 2u);
  ASSERT_EQ(d.Feed("cdGET", 5, &used), Stage::kComplete);
  EXPECT_EQ(used, 2u);
  EXPECT_EQ(d.request().body, "abcd");
}

TEST(RequestDecoderTest, ContentLengthOverRouteLimitIs413BeforeBody) {
  RequestDecoder d({});
  const std::string head = "POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n";
  size_t used = 0;
  ASSERT_EQ(d.Feed(head.data(), head.size(), &used), Stage::kHeadReady);
  EXPECT_EQ(d.BeginBody(100), Stage::kError);
  EXPECT_EQ(d.error_status(), 413);
}

TEST(RequestDecoderTest, ChunkedOverLimitIs413) {
  const std::string in =
      "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n";
  EXPECT_EQ(Status(in, 12), 0);
  EXPECT_EQ(Status(in, 11), 413);
  EXPECT_EQ(Decode(in, 1, 11).error_status, 413);
  // A single huge chunk is refused on its size line, before its data.
  EXPECT_EQ(Status("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "ffffffffffff\r\n",
                   1000),
            413);
}

TEST(RequestDecoderTest, EmptyBodies) {
  Outcome o = Decode(
      "POST /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\n"
      "Content-Length: 0\r\n\r\n");
  ASSERT_EQ(o.error_status, 0) << o.error_message;
  ASSERT_EQ(o.requests.size(), 2u);
  EXPECT_TRUE(o.requests[0].body.empty());
}

TEST(RequestDecoderTest, KeepAlivePerVersion) {
  auto keep = [](const std::string& in) {
    RequestDecoder d({});
    size_t used = 0;
    EXPECT_EQ(d.Feed(in.data(), in.size(), &used), Stage::kHeadReady) << in;
    return d.keep_alive();
  };
  EXPECT_TRUE(keep("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.1\r\nHost: x\r\nConnection: foo, Close\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.0\r\n\r\n"));
  EXPECT_TRUE(keep("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
}

TEST(RequestDecoderTest, Limits) {
  DecoderLimits l;
  l.max_request_line_bytes = 100;
  l.max_header_bytes = 1000;
  l.max_header_fields = 5;
  const std::string long_target = "GET /" + std::string(200, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(Status(long_target, 100, l), 414);
  EXPECT_EQ(Decode(long_target, 1, 100, l).error_status, 414);
  // No CRLF in sight yet: still 414 once the line is too long.
  EXPECT_EQ(Status("GET /" + std::string(200, 'a'), 100, l), 414);

  std::string fields = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 5; ++i) fields += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(Status(fields + "\r\n", 100, l), 431);
  EXPECT_EQ(Decode(fields + "\r\n", 3, 100, l).error_status, 431);

  const std::string big =
      "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1000, 'b') + "\r\n\r\n";
  EXPECT_EQ(Status(big, 100, l), 431);
  EXPECT_EQ(Decode(big, 7, 100, l).error_status, 431);
  // Unterminated and already too large.
  EXPECT_EQ(Status(big.substr(0, 1005), 100, l), 431);

  const std::string ok =
      "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(900, 'b') + "\r\n\r\n";
  EXPECT_EQ(Status(ok, 100, l), 0);
}

TEST(RequestDecoderTest, FramingRules) {
  const std::string h = "POST / HTTP/1.1\r\nHost: x\r\n";
  EXPECT_EQ(Status(h + "Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc"), 400);
  EXPECT_EQ(Status(h + "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabc"), 400);
  EXPECT_EQ(Status(h + "Content-Length: 3, 3\r\n\r\nabc"), 400);
  EXPECT_EQ(Status(h + "Content-Length: +3\r\n\r\nabc"), 400);
  EXPECT_EQ(Status(h + "Content-Length: 0x3\r\n\r\nabc"), 400);
  EXPECT_EQ(Status(h + "Content-Length: 99999999999999999999999\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "Transfer-Encoding: gzip\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "Transfer-Encoding: chunked, gzip\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"), 400);
  const int gzip_chunked = Status(h + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
  EXPECT_TRUE(gzip_chunked == 400 || gzip_chunked == 501) << gzip_chunked;
  EXPECT_EQ(Status("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "Transfer-Encoding: Chunked\r\n\r\n0\r\n\r\n"), 0);
  // obs-fold
  EXPECT_EQ(Status(h + "X-A: one\r\n two\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "X-A: one\r\n\ttwo\r\n\r\n"), 400);
  // Host
  EXPECT_EQ(Status("GET / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(Status("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
  EXPECT_EQ(Status("GET / HTTP/1.0\r\n\r\n"), 0);
  // Method and target
  EXPECT_EQ(Status("G(T / HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(Status("GET  / HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(Status("GET foo HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(Status("GET * HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(Status("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
  EXPECT_EQ(Status("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(Status("GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  // Version
  EXPECT_EQ(Status("GET / HTTP/2.0\r\nHost: x\r\n\r\n"), 505);
  EXPECT_EQ(Status("GET / HTTX/1.1\r\nHost: x\r\n\r\n"), 400);
  // Line endings and field syntax
  EXPECT_EQ(Status("GET / HTTP/1.1\nHost: x\n\n"), 400);
  EXPECT_EQ(Status("GET / HTTP/1.1\r\nHost: x\rY\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "Bad Name: v\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "X-A : v\r\n\r\n"), 400);
  EXPECT_EQ(Status(h + "X-A: a\x01"
                       "b\r\n\r\n"),
            400);
  // Expectations
  EXPECT_EQ(Status(h + "Expect: something\r\n\r\n"), 417);
  // Bad chunk framing
  EXPECT_EQ(Status(h + "Transfer-Encoding: chunked\r\n\r\nzz\r\n"), 400);
  EXPECT_EQ(Status(h + "Transfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n"), 400);
}

TEST(RequestDecoderTest, AbsoluteFormTarget) {
  Outcome o =
      Decode("GET http://example.com:9090/api/v1/query?query=up HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(o.error_status, 0) << o.error_message;
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0].path, "/api/v1/query");
  EXPECT_EQ(o.requests[0].query, "query=up");
  o = Decode("GET http://example.com HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0].path, "/");
}

TEST(RequestDecoderTest, ChunkLineTooLong) {
  DecoderLimits l;
  l.max_header_bytes = 1000;
  std::string in = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;";
  in += std::string(5000, 'e');
  EXPECT_EQ(Decode(in, 100, 1 << 20, l).error_status, 400);
}

TEST(RequestDecoderTest, ErrorIsSticky) {
  RequestDecoder d({});
  const std::string bad = "GET / HTTP/1.1\r\n\r\n";
  size_t used = 0;
  ASSERT_EQ(d.Feed(bad.data(), bad.size(), &used), Stage::kError);
  EXPECT_EQ(d.Feed("GET", 3, &used), Stage::kError);
  EXPECT_EQ(used, 0u);
  d.Reset();
  const std::string good = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
  EXPECT_EQ(d.Feed(good.data(), good.size(), &used), Stage::kHeadReady);
}

}  // namespace
}  // namespace gpumon::http
