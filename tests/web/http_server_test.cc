#include "web/http_server.h"

#include <gtest/gtest.h>

#include <thread>

namespace gpumon::web {
namespace {

TEST(ListenAddressTest, Parses) {
  EXPECT_EQ(ParseListenAddress(":9400").value(), std::make_pair(std::string("0.0.0.0"), 9400));
  EXPECT_EQ(ParseListenAddress("127.0.0.1:80").value(),
            std::make_pair(std::string("127.0.0.1"), 80));
  EXPECT_EQ(ParseListenAddress("[::1]:9400").value(), std::make_pair(std::string("::1"), 9400));
  EXPECT_FALSE(ParseListenAddress("9400").ok());
  EXPECT_FALSE(ParseListenAddress("host:99999").ok());
  EXPECT_FALSE(ParseListenAddress("host:12ab").ok());
}

TEST(HttpServerTest, ServesMetricsWithNegotiation) {
  HttpServer server;
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  MetricsEndpoint ep([] { return uint64_t{1}; },
                     [](exposition::Format f, std::string* out) {
                       *out = "# TYPE up gauge\nup 1\n";
                       exposition::FinishText(f, out);
                     });
  server.raw().Get("/metrics", [&](const httplib::Request& req, httplib::Response& res) {
    HttpServer::ServeMetrics(ep, req, res);
  });
  std::thread t([&] { server.Run(); });
  httplib::Client client("127.0.0.1", server.port());
  client.set_decompress(false);
  auto plain = client.Get("/metrics");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(plain->body, "# TYPE up gauge\nup 1\n");
  auto om = client.Get("/metrics", {{"Accept", "application/openmetrics-text; version=1.0.0"}});
  ASSERT_TRUE(om);
  EXPECT_EQ(om->body, "# TYPE up gauge\nup 1\n# EOF\n");
  auto gz = client.Get("/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_NE(gz->body, plain->body);  // compressed exactly once by us
  server.Stop();
  t.join();
}

}  // namespace
}  // namespace gpumon::web
