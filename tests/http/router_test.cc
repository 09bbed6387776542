#include "http/router.h"

#include <gtest/gtest.h>

namespace gpumon::http {
namespace {

Handler Tag(std::string tag) {
  return [tag](const HttpRequest&, HttpResponse& res) { res.body = tag; };
}

std::string Body(const Router::Match& m) {
  HttpRequest req;
  HttpResponse res;
  m.route->handler(req, res);
  return res.body;
}

TEST(RouterTest, ExactBeforeRegex) {
  Router r;
  r.Get("/api/v1/label/(.+)/values", Tag("regex"));
  r.Get("/api/v1/label/__name__/values", Tag("exact"));
  auto m = r.Find("GET", "/api/v1/label/__name__/values");
  ASSERT_EQ(m.kind, Router::MatchKind::kFound);
  EXPECT_EQ(Body(m), "exact");
  EXPECT_TRUE(m.captures.empty());

  m = r.Find("GET", "/api/v1/label/job/values");
  ASSERT_EQ(m.kind, Router::MatchKind::kFound);
  EXPECT_EQ(Body(m), "regex");
  ASSERT_EQ(m.captures.size(), 1u);
  EXPECT_EQ(m.captures[0], "job");
}

TEST(RouterTest, RegexMustMatchWholePath) {
  Router r;
  r.Get("/a/[0-9]+", Tag("num"));
  EXPECT_EQ(r.Find("GET", "/a/12").kind, Router::MatchKind::kFound);
  EXPECT_EQ(r.Find("GET", "/a/12x").kind, Router::MatchKind::kNotFound);
  EXPECT_EQ(r.Find("GET", "/x/a/12").kind, Router::MatchKind::kNotFound);
}

TEST(RouterTest, RegexesInRegistrationOrder) {
  Router r;
  r.Get("/f/(.*)", Tag("first"));
  r.Get("/f/(a)", Tag("second"));
  EXPECT_EQ(Body(r.Find("GET", "/f/a")), "first");
}

TEST(RouterTest, MultipleCaptures) {
  Router r;
  r.Put("/v/([^/]+)/([^/]+)", Tag("x"));
  auto m = r.Find("PUT", "/v/one/two");
  ASSERT_EQ(m.kind, Router::MatchKind::kFound);
  EXPECT_EQ(m.captures, (std::vector<std::string>{"one", "two"}));
}

TEST(RouterTest, MethodNotAllowedListsMethods) {
  Router r;
  r.Get("/q", Tag("get"));
  r.Post("/q", Tag("post"));
  r.Delete("/d/(.*)", Tag("del"));
  auto m = r.Find("PUT", "/q");
  EXPECT_EQ(m.kind, Router::MatchKind::kMethodNotAllowed);
  EXPECT_EQ(m.allow, "GET, HEAD, POST");
  m = r.Find("GET", "/d/x");
  EXPECT_EQ(m.kind, Router::MatchKind::kMethodNotAllowed);
  EXPECT_EQ(m.allow, "DELETE");
  EXPECT_EQ(r.Find("GET", "/nope").kind, Router::MatchKind::kNotFound);
}

// The API's CORS catch-all (OPTIONS /api/v1/.*) must not turn every unknown
// API path into a 405: Prometheus answers 404 there.
TEST(RouterTest, OptionsCatchAllDoesNotMakePathsExist) {
  Router r;
  r.Options("/api/v1/.*", Tag("cors"));
  r.Get("/api/v1/query", Tag("query"));
  EXPECT_EQ(r.Find("GET", "/api/v1/nope").kind, Router::MatchKind::kNotFound);
  EXPECT_EQ(r.Find("POST", "/api/v1/nope").kind, Router::MatchKind::kNotFound);
  EXPECT_EQ(r.Find("OPTIONS", "/api/v1/nope").kind, Router::MatchKind::kFound);
  auto m = r.Find("DELETE", "/api/v1/query");
  ASSERT_EQ(m.kind, Router::MatchKind::kMethodNotAllowed);
  EXPECT_EQ(m.allow, "GET, HEAD, OPTIONS");
}

TEST(RouterTest, HeadUsesGet) {
  Router r;
  r.Get("/m", Tag("get"));
  auto m = r.Find("HEAD", "/m");
  ASSERT_EQ(m.kind, Router::MatchKind::kFound);
  EXPECT_EQ(Body(m), "get");
  r.Handle("HEAD", "/m", Tag("head"));
  EXPECT_EQ(Body(r.Find("HEAD", "/m")), "head");
  EXPECT_EQ(r.Find("POST", "/m").kind, Router::MatchKind::kMethodNotAllowed);
}

TEST(RouterTest, ReRegisteringReplaces) {
  Router r;
  r.Get("/x", Tag("one"));
  r.Get("/x", Tag("two"), RouteOptions{.max_body_bytes = 5, .run_inline = true});
  auto m = r.Find("GET", "/x");
  ASSERT_EQ(m.kind, Router::MatchKind::kFound);
  EXPECT_EQ(Body(m), "two");
  EXPECT_EQ(m.route->options.max_body_bytes, 5u);
  EXPECT_TRUE(m.route->options.run_inline);
}

TEST(RouterTest, DotIsLiteralInExactPatterns) {
  Router r;
  r.Get("/a.b", Tag("x"));
  EXPECT_EQ(r.Find("GET", "/a.b").kind, Router::MatchKind::kFound);
  EXPECT_EQ(r.Find("GET", "/aXb").kind, Router::MatchKind::kNotFound);
}

}  // namespace
}  // namespace gpumon::http
