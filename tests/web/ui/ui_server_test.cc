// The UI's routes behind a real HttpServer over loopback: basic auth from a
// web config refuses the page, the assets and the silences endpoint without
// credentials, exactly as it refuses the API; and the wire framing of what
// the routes answer (HEAD, 304 without a body, gzip bytes as sent).
#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "../test_certs.h"
#include "fake_assets.h"
#include "web/http_server.h"
#include "web/ui/silences_route.h"
#include "web/ui/ui_routes.h"
#include "web/web_config.h"

namespace gpumon::web::ui {
namespace {

class Serving {
 public:
  Serving(const AssetTable& assets, std::optional<WebConfig> web)
      : server_(HttpServerOptions{.threads = 2}, std::move(web)) {
    RegisterUiRoutes(server_.router(), assets);
    RegisterSilencesRoute(server_.router(), [] { return notifier::SilenceList{}; });
    bind_ = server_.Bind("127.0.0.1:0");
    if (bind_.ok()) thread_ = std::thread([this] { (void)server_.Run(); });
  }
  ~Serving() {
    if (thread_.joinable()) {
      server_.Stop();
      thread_.join();
    }
  }
  const Status& bind() const { return bind_; }
  int port() const { return server_.port(); }

 private:
  HttpServer server_;
  Status bind_;
  std::thread thread_;
};

TEST(UiServerTest, BasicAuthGuardsThePageAssetsAndSilences) {
  testing::FakeAssets assets;
  WebConfig web;
  web.basic_auth_users["alice"] = web::testing::BcryptHash("wonderland");
  Serving server(assets.table(), web);
  ASSERT_TRUE(server.bind().ok()) << server.bind().message();

  const std::vector<std::string> paths = {
      "/",           "/fleet", "/assets/app-ABCD2345.js", "/assets/app-QRST6789.css",
      kSilencesPath, "/graph"};
  for (const std::string& path : paths) {
    httplib::Client anonymous("127.0.0.1", server.port());
    auto res = anonymous.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 401) << path;
    EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Basic") << path;
    EXPECT_EQ(res->body.find("gpumon"), std::string::npos) << path;

    httplib::Client wrong("127.0.0.1", server.port());
    wrong.set_basic_auth("alice", "looking-glass");
    auto refused = wrong.Get(path);
    ASSERT_TRUE(refused) << path;
    EXPECT_EQ(refused->status, 401) << path;
  }
  httplib::Client alice("127.0.0.1", server.port());
  alice.set_basic_auth("alice", "wonderland");
  auto page = alice.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, assets.index());
  auto script = alice.Get("/assets/app-ABCD2345.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  EXPECT_EQ(script->body, assets.script());
  auto silences = alice.Get(std::string(kSilencesPath));
  ASSERT_TRUE(silences);
  EXPECT_EQ(silences->status, 200);
  EXPECT_NE(silences->body.find("\"status\":\"success\""), std::string::npos) << silences->body;
}

TEST(UiServerTest, WireFramingOfHeadGzipAnd304) {
  testing::FakeAssets assets;
  Serving server(assets.table(), std::nullopt);
  ASSERT_TRUE(server.bind().ok()) << server.bind().message();
  httplib::Client client("127.0.0.1", server.port());

  auto head = client.Head("/assets/app-ABCD2345.js");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
  EXPECT_EQ(head->get_header_value("Content-Length"), std::to_string(assets.script().size()));
  EXPECT_EQ(head->get_header_value("ETag"), "\"app1\"");

  // (httplib may inflate the body itself; the bytes are checked in
  // ui_routes_test, the headers as sent here.)
  auto gz = client.Get("/assets/app-ABCD2345.js", {{"Accept-Encoding", "gzip, deflate"}});
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(gz->get_header_value("Vary"), "Accept-Encoding");

  auto not_modified = client.Get("/assets/app-ABCD2345.js", {{"If-None-Match", "\"app1\""}});
  ASSERT_TRUE(not_modified);
  EXPECT_EQ(not_modified->status, 304);
  EXPECT_TRUE(not_modified->body.empty());
  EXPECT_EQ(not_modified->get_header_value("ETag"), "\"app1\"");
  EXPECT_FALSE(not_modified->get_header_value("Content-Security-Policy").empty());

  // The connection is still usable after the bodiless answer.
  auto again = client.Get("/fleet");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(again->body, assets.index());
}

}  // namespace
}  // namespace gpumon::web::ui
