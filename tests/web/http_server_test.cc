#include "web/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

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

// Runs a server on its own thread until destroyed.
class Serving {
 public:
  explicit Serving(HttpServer& server) : server_(server) {
    thread_ = std::thread([this] { status_ = server_.Run(); });
  }
  ~Serving() { Join(); }
  Status Join() {
    if (thread_.joinable()) {
      server_.Stop();
      thread_.join();
    }
    return status_;
  }

 private:
  HttpServer& server_;
  std::thread thread_;
  Status status_;
};

TEST(HttpServerTest, ServesMetricsWithNegotiation) {
  HttpServer server;
  MetricsEndpoint ep([] { return uint64_t{1}; },
                     [](exposition::Format f, std::string* out) {
                       *out = "# TYPE up gauge\nup 1\n";
                       exposition::FinishText(f, out);
                     });
  server.router().Get("/metrics", [&](const http::HttpRequest& req, http::HttpResponse& res) {
    HttpServer::ServeMetrics(ep, req, res);
  });
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  Serving serving(server);
  httplib::Client client("127.0.0.1", server.port());
  client.set_decompress(false);
  auto plain = client.Get("/metrics");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(plain->get_header_value("Content-Length"), "21");
  EXPECT_EQ(plain->get_header_value("Vary"), "Accept, Accept-Encoding");
  EXPECT_EQ(plain->body, "# TYPE up gauge\nup 1\n");
  auto om = client.Get("/metrics", {{"Accept", "application/openmetrics-text; version=1.0.0"}});
  ASSERT_TRUE(om);
  EXPECT_EQ(om->body, "# TYPE up gauge\nup 1\n# EOF\n");
  auto gz = client.Get("/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_NE(gz->body, plain->body);  // compressed exactly once by us
  auto head = client.Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
}

TEST(HttpServerTest, ReserveHoldsThePortUntilBind) {
  HttpServer server;
  server.router().Get("/late", [](const http::HttpRequest&, http::HttpResponse& res) {
    res.SetContent("late", "text/plain");
  });
  ASSERT_TRUE(server.Reserve("127.0.0.1:0").ok());
  const int port = server.port();
  ASSERT_GT(port, 0);
  // Not served yet: the reservation does not listen.
  httplib::Client early("127.0.0.1", port);
  early.set_connection_timeout(5, 0);
  EXPECT_FALSE(early.Get("/late"));
  ASSERT_TRUE(server.Bind().ok());
  EXPECT_EQ(server.port(), port);
  Serving serving(server);
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/late");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "late");
  EXPECT_TRUE(serving.Join().ok());
}

TEST(HttpServerTest, ReserveReportsAPortInUse) {
  HttpServer first;
  ASSERT_TRUE(first.Bind("127.0.0.1:0").ok());
  const std::string taken = "127.0.0.1:" + std::to_string(first.port());
  HttpServer second;
  Status s = second.Reserve(taken);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot listen on " + taken), std::string::npos) << s.message();
  EXPECT_FALSE(second.Bind(taken).ok());
  // Still taken while the first one serves.
  Serving serving(first);
  HttpServer third;
  EXPECT_FALSE(third.Reserve(taken).ok());
}

TEST(HttpServerTest, StopBeforeRunMakesRunReturn) {
  HttpServer server;
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  server.Stop();
  EXPECT_TRUE(server.Run().ok());
}

TEST(HttpServerTest, RunOrBindOutOfOrderIsAnError) {
  HttpServer server;
  EXPECT_FALSE(server.Run().ok());
  EXPECT_FALSE(server.Bind().ok());
  EXPECT_FALSE(server.Reserve("127.0.0.1").ok());
}

TEST(HttpServerTest, StatsCountConnectionsRequestsAndRejections) {
  HttpServer server;
  server.router().Get("/ok", [](const http::HttpRequest&, http::HttpResponse& res) {
    res.SetContent("ok", "text/plain");
  });
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  EXPECT_EQ(server.Stats().requests, 0u);
  Serving serving(server);
  httplib::Client client("127.0.0.1", server.port());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.Get("/ok"));
  auto missing = client.Get("/missing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  const http::ServerStats st = server.Stats();
  EXPECT_GE(st.connections_accepted, 1u);
  EXPECT_GE(st.requests, 4u);
  EXPECT_GE(st.rejected_requests, 1u);
}

}  // namespace
}  // namespace gpumon::web
