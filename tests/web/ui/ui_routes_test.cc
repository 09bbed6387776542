// The UI's routes with a fake asset table, called through the router as the
// server calls them: content types, caching, ETag/304, gzip negotiation,
// the page paths, the no-UI page, and the security headers everywhere.
#include "web/ui/ui_routes.h"

#include <gtest/gtest.h>

#include <string>

#include "fake_assets.h"
#include "web/ui/http_caching.h"
#include "web/ui/security_headers.h"
#include "web/ui/static_asset_table.h"

namespace gpumon::web::ui {
namespace {

struct Exchange {
  http::Router::MatchKind kind;
  http::HttpResponse res;
};

Exchange Call(const http::Router& router, std::string method, std::string target,
              std::vector<std::pair<std::string, std::string>> headers = {}) {
  http::HttpRequest req;
  req.method = std::move(method);
  req.target = target;
  const size_t q = target.find('?');
  req.path = target.substr(0, q);
  req.query = q == std::string::npos ? "" : target.substr(q + 1);
  for (auto& [n, v] : headers) req.headers.Add(n, v);
  Exchange out;
  http::Router::Match m = router.Find(req.method, req.path);
  out.kind = m.kind;
  if (m.kind == http::Router::MatchKind::kFound) {
    req.captures = m.captures;
    m.route->handler(req, out.res);
  }
  return out;
}

void ExpectSecurityHeaders(const http::HttpResponse& res, const std::string& what) {
  EXPECT_EQ(res.headers.Get("Content-Security-Policy"), kContentSecurityPolicy) << what;
  EXPECT_EQ(res.headers.Get("X-Content-Type-Options"), "nosniff") << what;
  EXPECT_EQ(res.headers.Get("X-Frame-Options"), "DENY") << what;
  EXPECT_EQ(res.headers.Get("Referrer-Policy"), "same-origin") << what;
}

class UiRoutesTest : public ::testing::Test {
 protected:
  UiRoutesTest() { RegisterUiRoutes(router_, assets_.table()); }
  testing::FakeAssets assets_;
  http::Router router_;
};

TEST_F(UiRoutesTest, EveryPagePathAnswersIndexHtmlRevalidated) {
  for (std::string_view page : kPagePaths) {
    for (const char* method : {"GET", "HEAD"}) {
      Exchange e = Call(router_, method, std::string(page) + "?from=now-1h&var-node=a");
      ASSERT_EQ(e.kind, http::Router::MatchKind::kFound) << page << " " << method;
      EXPECT_EQ(e.res.status, 200) << page;
      EXPECT_EQ(e.res.body, assets_.index()) << page;
      EXPECT_EQ(e.res.headers.Get("Content-Type"), "text/html; charset=utf-8") << page;
      EXPECT_EQ(e.res.headers.Get("Cache-Control"), "no-cache") << page;
      EXPECT_EQ(e.res.headers.Get("ETag"), "\"index1\"") << page;
      EXPECT_FALSE(e.res.headers.Has("Content-Encoding")) << page;
      ExpectSecurityHeaders(e.res, std::string(page));
    }
  }
  // Only the app's own paths: no catch-all that would hide API typos.
  EXPECT_EQ(Call(router_, "GET", "/fleet/extra").kind, http::Router::MatchKind::kNotFound);
  EXPECT_EQ(Call(router_, "GET", "/nosuchpage").kind, http::Router::MatchKind::kNotFound);
}

TEST_F(UiRoutesTest, HashedAssetIsImmutableWithItsContentType) {
  Exchange js = Call(router_, "GET", "/assets/app-ABCD2345.js");
  EXPECT_EQ(js.res.status, 200);
  EXPECT_EQ(js.res.body, assets_.script());
  EXPECT_EQ(js.res.headers.Get("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.res.headers.Get("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(js.res.headers.Get("ETag"), "\"app1\"");
  EXPECT_EQ(js.res.headers.Get("Vary"), "Accept-Encoding");
  ExpectSecurityHeaders(js.res, "js");

  Exchange css = Call(router_, "GET", "/assets/app-QRST6789.css");
  EXPECT_EQ(css.res.body, assets_.style());
  EXPECT_EQ(css.res.headers.Get("Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(css.res.headers.Get("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_FALSE(css.res.headers.Has("Vary"));  // one representation only

  Exchange txt = Call(router_, "GET", "/assets/notes.txt");
  EXPECT_EQ(txt.res.headers.Get("Cache-Control"), "no-cache");  // no hash in the name
  EXPECT_EQ(txt.res.headers.Get("Content-Type"), "text/plain; charset=utf-8");
}

TEST_F(UiRoutesTest, GzipWhenAcceptedAndAvailable) {
  for (const char* accept : {"gzip", "gzip, deflate, br", "br;q=1, gzip;q=0.5", "*"}) {
    Exchange e = Call(router_, "GET", "/assets/app-ABCD2345.js", {{"Accept-Encoding", accept}});
    EXPECT_EQ(e.res.headers.Get("Content-Encoding"), "gzip") << accept;
    EXPECT_EQ(e.res.body, assets_.script_gz()) << accept;
    EXPECT_EQ(e.res.headers.Get("ETag"), "\"app1-gzip\"") << accept;
    EXPECT_EQ(e.res.headers.Get("Vary"), "Accept-Encoding") << accept;
    EXPECT_EQ(e.res.headers.Get("Content-Type"), "text/javascript; charset=utf-8") << accept;
  }
  for (const char* accept : {"identity", "gzip;q=0", "br", ""}) {
    Exchange e = Call(router_, "GET", "/assets/app-ABCD2345.js", {{"Accept-Encoding", accept}});
    EXPECT_FALSE(e.res.headers.Has("Content-Encoding")) << accept;
    EXPECT_EQ(e.res.body, assets_.script()) << accept;
    EXPECT_EQ(e.res.headers.Get("ETag"), "\"app1\"") << accept;
  }
  // Without a gzip variant, the identity bytes whatever the client accepts.
  Exchange css = Call(router_, "GET", "/assets/app-QRST6789.css", {{"Accept-Encoding", "gzip"}});
  EXPECT_FALSE(css.res.headers.Has("Content-Encoding"));
  EXPECT_EQ(css.res.body, assets_.style());
}

TEST_F(UiRoutesTest, IfNoneMatchAnswers304) {
  for (const char* inm : {"\"app1\"", "W/\"app1\"", "\"other\", \"app1\"", "*"}) {
    Exchange e = Call(router_, "GET", "/assets/app-ABCD2345.js", {{"If-None-Match", inm}});
    EXPECT_EQ(e.res.status, 304) << inm;
    EXPECT_TRUE(e.res.body.empty()) << inm;
    EXPECT_EQ(e.res.headers.Get("ETag"), "\"app1\"") << inm;
    EXPECT_EQ(e.res.headers.Get("Cache-Control"), "public, max-age=31536000, immutable");
    ExpectSecurityHeaders(e.res, inm);
  }
  // The gzip representation has its own tag.
  Exchange gz = Call(router_, "GET", "/assets/app-ABCD2345.js",
                     {{"If-None-Match", "\"app1\""}, {"Accept-Encoding", "gzip"}});
  EXPECT_EQ(gz.res.status, 200);
  EXPECT_EQ(gz.res.body, assets_.script_gz());
  Exchange gz304 = Call(router_, "GET", "/assets/app-ABCD2345.js",
                        {{"If-None-Match", "\"app1-gzip\""}, {"Accept-Encoding", "gzip"}});
  EXPECT_EQ(gz304.res.status, 304);
  for (const char* inm : {"\"app2\"", "app1", "\"app1", ""}) {
    Exchange e = Call(router_, "GET", "/assets/app-ABCD2345.js", {{"If-None-Match", inm}});
    EXPECT_EQ(e.res.status, 200) << inm;
    EXPECT_EQ(e.res.body, assets_.script()) << inm;
  }
  Exchange page = Call(router_, "GET", "/fleet", {{"If-None-Match", "\"index1\""}});
  EXPECT_EQ(page.res.status, 304);
  EXPECT_EQ(page.res.headers.Get("Cache-Control"), "no-cache");
}

TEST_F(UiRoutesTest, UnknownAssetIs404WithSecurityHeaders) {
  for (const char* path : {"/assets/app-ZZZZ9999.js", "/assets/../index.html", "/assets/x/y.js"}) {
    Exchange e = Call(router_, "GET", path);
    ASSERT_EQ(e.kind, http::Router::MatchKind::kFound) << path;
    EXPECT_EQ(e.res.status, 404) << path;
    EXPECT_EQ(e.res.body.find("<"), std::string::npos) << path;
    ExpectSecurityHeaders(e.res, path);
  }
}

TEST_F(UiRoutesTest, GraphRedirectsToExplore) {
  Exchange e = Call(router_, "GET", "/graph?g0.expr=up%7Bjob%3D%22a%22%7D&g0.tab=1");
  EXPECT_EQ(e.res.status, 302);
  EXPECT_EQ(e.res.headers.Get("Location"), "/explore?expr=up%7Bjob%3D%22a%22%7D&tab=table");
  ExpectSecurityHeaders(e.res, "/graph");
  EXPECT_EQ(Call(router_, "GET", "/graph").res.headers.Get("Location"), "/explore");
}

TEST_F(UiRoutesTest, FaviconFromTheBundleOrNoContent) {
  Exchange none = Call(router_, "GET", "/favicon.ico");
  EXPECT_EQ(none.res.status, 204);
  EXPECT_TRUE(none.res.body.empty());
  ExpectSecurityHeaders(none.res, "favicon");

  const std::string icon = "\x00\x00\x01\x00";
  const Asset with_icon[] = {{.path = "favicon.ico", .data = icon, .gzip = {}, .etag = "i"}};
  StaticAssetTable table(with_icon);
  http::Router router;
  RegisterUiRoutes(router, table);
  Exchange e = Call(router, "GET", "/favicon.ico");
  EXPECT_EQ(e.res.status, 200);
  EXPECT_EQ(e.res.body, icon);
  EXPECT_EQ(e.res.headers.Get("Content-Type"), "image/x-icon");
}

TEST_F(UiRoutesTest, ConfiguredHeadersAreNotOverridden) {
  http::Router router;
  RegisterUiRoutes(router, assets_.table(),
                   {.configured_headers = {"content-security-policy", "X-Frame-Options"}});
  for (const char* path : {"/", "/assets/app-ABCD2345.js", "/assets/missing.js", "/graph"}) {
    Exchange e = Call(router, "GET", path);
    EXPECT_FALSE(e.res.headers.Has("Content-Security-Policy")) << path;
    EXPECT_FALSE(e.res.headers.Has("X-Frame-Options")) << path;
    EXPECT_EQ(e.res.headers.Get("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(e.res.headers.Get("Referrer-Policy"), "same-origin") << path;
  }
}

TEST(UiRoutesWithoutUiTest, PagePathsExplainHowToBuildTheUi) {
  const StaticAssetTable empty{std::span<const Asset>{}};
  ASSERT_TRUE(empty.empty());
  http::Router router;
  RegisterUiRoutes(router, empty);
  for (std::string_view page : kPagePaths) {
    Exchange e = Call(router, "GET", std::string(page));
    EXPECT_EQ(e.res.status, 200) << page;
    EXPECT_EQ(e.res.headers.Get("Content-Type"), "text/plain; charset=utf-8") << page;
    EXPECT_EQ(e.res.body, NoUiPage()) << page;
    ExpectSecurityHeaders(e.res, std::string(page));
  }
  EXPECT_NE(NoUiPage().find("-DGPUMON_UI=OFF"), std::string_view::npos);
  EXPECT_NE(NoUiPage().find("scripts/install-deps.sh"), std::string_view::npos);
  EXPECT_EQ(Call(router, "GET", "/assets/app-ABCD2345.js").res.status, 404);
}

}  // namespace
}  // namespace gpumon::web::ui
