#include "http/request.h"

#include <gtest/gtest.h>

#include "http/headers.h"
#include "http/response.h"

namespace gpumon::http {
namespace {

TEST(HeadersTest, CaseInsensitiveAndOrdered) {
  Headers h;
  h.Add("Accept", "a");
  h.Add("X-Two", "1");
  h.Add("accept", "b");
  EXPECT_EQ(h.Get("ACCEPT"), "a");
  EXPECT_EQ(h.Count("Accept"), 2u);
  EXPECT_TRUE(h.Has("x-two"));
  EXPECT_EQ(h.Get("missing"), "");
  h.Set("ACCEPT", "c");
  EXPECT_EQ(h.Count("accept"), 1u);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h.fields()[0].first, "ACCEPT");
  EXPECT_EQ(h.fields()[0].second, "c");
  EXPECT_EQ(h.fields()[1].first, "X-Two");
  h.Remove("x-TWO");
  EXPECT_FALSE(h.Has("X-Two"));
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-length"));
  EXPECT_FALSE(EqualsIgnoreCase("Content-Length", "content-lengt"));
}

TEST(PercentDecodeTest, Decodes) {
  std::string out;
  ASSERT_TRUE(PercentDecode("a%20b+c%2Bd%7e", true, &out));
  EXPECT_EQ(out, "a b c+d~");
  ASSERT_TRUE(PercentDecode("a+b", false, &out));
  EXPECT_EQ(out, "a+b");
  ASSERT_TRUE(PercentDecode("%00", false, &out));
  EXPECT_EQ(out, std::string(1, '\0'));
  EXPECT_FALSE(PercentDecode("%", true, &out));
  EXPECT_FALSE(PercentDecode("%4", true, &out));
  EXPECT_FALSE(PercentDecode("%zz", true, &out));
  EXPECT_FALSE(PercentDecode("ab%g1", true, &out));
}

TEST(ParseFormPairsTest, SplitsAndSkipsMalformed) {
  std::vector<std::pair<std::string, std::string>> pairs;
  EXPECT_TRUE(ParseFormPairs("a=1&b=&c&&d=x%3Dy", &pairs));
  ASSERT_EQ(pairs.size(), 4u);
  EXPECT_EQ(pairs[0], (std::pair<std::string, std::string>{"a", "1"}));
  EXPECT_EQ(pairs[1], (std::pair<std::string, std::string>{"b", ""}));
  EXPECT_EQ(pairs[2], (std::pair<std::string, std::string>{"c", ""}));
  EXPECT_EQ(pairs[3], (std::pair<std::string, std::string>{"d", "x=y"}));
  pairs.clear();
  EXPECT_FALSE(ParseFormPairs("a=%zz&b=2&c=1;d=2", &pairs));
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].first, "b");
}

HttpRequest FormRequest(std::string query, std::string body) {
  HttpRequest req;
  req.method = "POST";
  req.query = std::move(query);
  req.body = std::move(body);
  req.headers.Add("Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
  return req;
}

TEST(HttpRequestTest, ParamsFromQueryAndForm) {
  HttpRequest req =
      FormRequest("match%5B%5D=up&query=q1&time=5", "query=sum(x)+by+(job)&match[]=a");
  EXPECT_EQ(req.Param("query"), "sum(x) by (job)");  // form first
  EXPECT_EQ(req.Param("time"), "5");
  EXPECT_TRUE(req.HasParam("time"));
  EXPECT_FALSE(req.HasParam("timeout"));
  EXPECT_EQ(req.Param("timeout"), "");
  EXPECT_EQ(req.ParamValues("match[]"), (std::vector<std::string>{"a", "up"}));
  EXPECT_EQ(req.ParamValues("query"), (std::vector<std::string>{"sum(x) by (job)", "q1"}));
}

TEST(HttpRequestTest, BodyIgnoredWithoutFormContentType) {
  HttpRequest req = FormRequest("a=1", "a=2");
  req.headers.Set("Content-Type", "application/json");
  EXPECT_EQ(req.ParamValues("a"), (std::vector<std::string>{"1"}));
  HttpRequest get = FormRequest("", "a=2");
  get.method = "GET";
  EXPECT_FALSE(get.HasParam("a"));
}

TEST(HttpRequestTest, EmptyValueIsPresent) {
  HttpRequest req;
  req.query = "a=&b";
  EXPECT_TRUE(req.HasParam("a"));
  EXPECT_TRUE(req.HasParam("b"));
  EXPECT_EQ(req.Param("a"), "");
  ASSERT_NE(req.cancel, nullptr);
  EXPECT_FALSE(req.cancel->cancelled());
}

TEST(ResponseTest, ReasonPhrases) {
  EXPECT_EQ(ReasonPhrase(200), "OK");
  EXPECT_EQ(ReasonPhrase(431), "Request Header Fields Too Large");
  EXPECT_EQ(ReasonPhrase(503), "Service Unavailable");
  EXPECT_EQ(ReasonPhrase(299), "");
}

TEST(ResponseTest, JsonErrorEscapes) {
  HttpResponse res;
  res.Stream("text/plain", [](const BodyWriter&) { return true; });
  SetJsonError(res, 400, "bad_data", std::string("a\"b\\c\nd\x01\x7f\xff") + "\xc3\xa9");
  EXPECT_EQ(res.status, 400);
  EXPECT_FALSE(res.stream);
  EXPECT_EQ(res.headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(res.body,
            "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":"
            "\"a\\\"b\\\\c\\nd\\u0001\\u007f\\ufffd\xc3\xa9\"}");
}

TEST(ResponseTest, JsonErrorRejectsBadUtf8Sequences) {
  HttpResponse res;
  // Overlong '/', a surrogate, a truncated sequence.
  SetJsonError(res, 500, "internal", "\xc0\xaf|\xed\xa0\x80|\xe2\x82");
  EXPECT_EQ(res.body,
            "{\"status\":\"error\",\"errorType\":\"internal\",\"error\":"
            "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"}");
}

}  // namespace
}  // namespace gpumon::http
