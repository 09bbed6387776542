#include "ingest/pushgateway_path.h"

#include <gtest/gtest.h>

namespace gpumon::ingest {
namespace {

TEST(PushgatewayPathTest, JobAndLabels) {
  auto g = ParseGroupingPath("/metrics/job/train/node/n1/rank/3");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(*g, (Labels{{"job", "train"}, {"node", "n1"}, {"rank", "3"}}));
}

TEST(PushgatewayPathTest, Base64ValuesAsInPushgatewayReadme) {
  auto g = ParseGroupingPath("/metrics/job/directory_cleaner/path@base64/L3Zhci90bXA");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->Get("path"), "/var/tmp");
  // Padding is optional; a lone "=" is the empty value.
  auto padded = ParseGroupingPath("/metrics/job/example/first_label@base64/=/second_label/foobar");
  ASSERT_TRUE(padded.ok()) << padded.status().message();
  EXPECT_TRUE(padded->Has("first_label"));
  EXPECT_EQ(padded->Get("first_label"), "");
  EXPECT_EQ(padded->Get("second_label"), "foobar");
  auto utf8 = ParseGroupingPath("/metrics/job/titan/name@base64/zqDPgc6_zrzOt864zrXPjc-C");
  ASSERT_TRUE(utf8.ok()) << utf8.status().message();
  EXPECT_EQ(utf8->Get("name"), "Προμηθεύς");
  auto pct = ParseGroupingPath(
      "/metrics/job/titan/name/%CE%A0%CF%81%CE%BF%CE%BC%CE%B7%CE%B8%CE%B5%CF%8D%CF%82");
  ASSERT_TRUE(pct.ok()) << pct.status().message();
  EXPECT_EQ(pct->Get("name"), "Προμηθεύς");
  auto job64 = ParseGroupingPath("/metrics/job@base64/YS9i");
  ASSERT_TRUE(job64.ok()) << job64.status().message();
  EXPECT_EQ(job64->Get("job"), "a/b");
  auto with_padding = ParseGroupingPath("/metrics/job/j/v@base64/YQ==");
  ASSERT_TRUE(with_padding.ok());
  EXPECT_EQ(with_padding->Get("v"), "a");
}

TEST(PushgatewayPathTest, ErrorsSayWhatIsWrong) {
  struct Case {
    const char* path;
    const char* mentions;
  };
  const Case cases[] = {
      {"/metrics/jobs/x", "/metrics/job/<job>"},
      {"/metrics/job", "no value"},
      {"/metrics/job/", "must not end in"},
      {"/metrics/job@base64/=", "must not be empty"},
      {"/metrics/job/x/rank", "label rank"},
      {"/metrics/job/x/rank/1/", "must not end in"},
      {"/metrics/job/x//1", "empty segment"},
      {"/metrics/job/x/1rank/1", "invalid label name \"1rank\""},
      {"/metrics/job/x/__name__/1", "invalid label name"},
      {"/metrics/job/x/ra-nk/1", "invalid label name"},
      {"/metrics/job/x/rank/1/rank/2", "appears twice"},
      {"/metrics/job/x/job/y", "appears twice"},
      {"/metrics/job/x/v@base64/a!b", "invalid base64"},
      {"/metrics/job/x/v@base64/Y", "invalid base64"},
      {"/metrics/job/x/v/%zz", "percent"},
      {"/metrics/job/x/v/a%00b", "NUL"},
      {"/metrics/job/x/v@base64/AA", "NUL"},
      {"/metrics/job/x/v/%ff", "UTF-8"},
  };
  for (const auto& c : cases) {
    auto g = ParseGroupingPath(c.path);
    ASSERT_FALSE(g.ok()) << c.path;
    EXPECT_NE(g.status().message().find(c.mentions), std::string::npos)
        << c.path << ": " << g.status().message();
  }
}

TEST(PushgatewayPathTest, GroupingPathRoundTrips) {
  const Labels groupings[] = {
      {{"job", "train"}, {"rank", "0"}},
      {{"job", "a/b"}, {"empty", ""}, {"name", "Προμηθεύς"}},
      {{"job", "x y"}, {"node", "n.1-2_3"}},
  };
  for (const auto& g : groupings) {
    std::string path = GroupingPath(g);
    auto parsed = ParseGroupingPath(path);
    ASSERT_TRUE(parsed.ok()) << path << ": " << parsed.status().message();
    EXPECT_EQ(*parsed, g) << path;
  }
}

TEST(PushgatewayPathTest, Base64Decoder) {
  std::string out;
  ASSERT_TRUE(DecodeBase64Url("", &out));
  EXPECT_EQ(out, "");
  ASSERT_TRUE(DecodeBase64Url("_-8", &out));  // URL-safe alphabet
  EXPECT_EQ(out, "\xff\xef");
  ASSERT_TRUE(DecodeBase64Url("/+8=", &out));  // standard alphabet too
  EXPECT_EQ(out, "\xff\xef");
  EXPECT_FALSE(DecodeBase64Url("abcde", &out));
  EXPECT_FALSE(DecodeBase64Url("ab.c", &out));
}

}  // namespace
}  // namespace gpumon::ingest
