#include "web/ui/http_caching.h"

#include <gtest/gtest.h>

#include "web/ui/content_type.h"
#include "web/ui/graph_redirect.h"

namespace gpumon::web::ui {
namespace {

TEST(HttpCachingTest, StrongEtagPerEncoding) {
  EXPECT_EQ(StrongEtag("abc", false), "\"abc\"");
  EXPECT_EQ(StrongEtag("abc", true), "\"abc-gzip\"");
}

TEST(HttpCachingTest, IfNoneMatchUsesWeakComparison) {
  EXPECT_TRUE(IfNoneMatchHits("\"abc\"", "\"abc\""));
  EXPECT_TRUE(IfNoneMatchHits("W/\"abc\"", "\"abc\""));
  EXPECT_TRUE(IfNoneMatchHits(" \"x\" ,\t\"abc\" ", "\"abc\""));
  EXPECT_TRUE(IfNoneMatchHits("*", "\"abc\""));
  EXPECT_FALSE(IfNoneMatchHits("\"abcd\"", "\"abc\""));
  EXPECT_FALSE(IfNoneMatchHits("abc", "\"abc\""));  // unquoted: not an entity tag
  EXPECT_FALSE(IfNoneMatchHits("", "\"abc\""));
  EXPECT_FALSE(IfNoneMatchHits("\"abc-gzip\"", "\"abc\""));
}

TEST(HttpCachingTest, ContentHashedNames) {
  // esbuild's [name]-[hash] and ui/build.mjs's 12-digit hashes.
  EXPECT_TRUE(IsContentHashedName("assets/app-2J2254AE.js"));
  EXPECT_TRUE(IsContentHashedName("assets/favicon-5C257A4D83DD.svg"));
  EXPECT_TRUE(IsContentHashedName("assets/chunk-ABCDEFGH.js.map"));
  EXPECT_TRUE(IsContentHashedName("assets/my-page.worker-ABCDEFGH.js"));
  EXPECT_FALSE(IsContentHashedName("index.html"));
  EXPECT_FALSE(IsContentHashedName("assets/app.js"));
  EXPECT_FALSE(IsContentHashedName("assets/my-page.js"));         // lower case: a word
  EXPECT_FALSE(IsContentHashedName("assets/app-ABC123.js"));      // too short for a hash
  EXPECT_FALSE(IsContentHashedName("assets/app-ABCDEFGH"));       // no extension
  EXPECT_FALSE(IsContentHashedName("assets-ABCDEFGH.d/app.js"));  // hash in a folder name
}

TEST(ContentTypeTest, ByExtension) {
  EXPECT_EQ(ContentTypeFor("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("assets/app-X.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("assets/APP-X.JS"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("assets/app-X.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("assets/app-X.js.map"), "application/json");
  EXPECT_EQ(ContentTypeFor("assets/f-X.svg"), "image/svg+xml");
  EXPECT_EQ(ContentTypeFor("assets/f-X.woff2"), "font/woff2");
  EXPECT_EQ(ContentTypeFor("assets/f-X.png"), "image/png");
  EXPECT_EQ(ContentTypeFor("assets/blob"), "application/octet-stream");
  EXPECT_EQ(ContentTypeFor("assets.d/blob"), "application/octet-stream");
  EXPECT_EQ(ContentTypeFor("assets/x.exe"), "application/octet-stream");
}

TEST(GraphRedirectTest, TranslatesPrometheusParameters) {
  EXPECT_EQ(ExploreTargetForGraphQuery(""), "/explore");
  EXPECT_EQ(ExploreTargetForGraphQuery("g0.expr=rate(x%5B5m%5D)&g0.tab=0"),
            "/explore?expr=rate(x%5B5m%5D)&tab=graph");
  EXPECT_EQ(ExploreTargetForGraphQuery("g0.expr=up&g0.tab=1&g0.range_input=6h&g0.stacked=0"),
            "/explore?expr=up&tab=table&from=now-6h");
  EXPECT_EQ(ExploreTargetForGraphQuery("expr=up&refresh=5s&&g1.expr=x"),
            "/explore?expr=up&refresh=5s&g1.expr=x");
}

}  // namespace
}  // namespace gpumon::web::ui
