// The API over HTTP with the real engine over an in-memory head: routing,
// GET and form POST, status codes, streaming and gzip.
#include "web/api/http_api.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <future>
#include <thread>

#include "../gunzip.h"
#include "test_util.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "web/http_server.h"

namespace gpumon::web::api {
namespace {

using testing::ParseJson;
using testing::Str;

using ::gpumon::web::testing::Gunzip;

// Sends `request` as is on a new connection and returns everything the
// server sends until it closes (10 s at most).
std::string RawExchange(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;)
      out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

class HttpApiTest : public ::testing::Test {
 protected:
  static constexpr int kSeries = 200;
  void SetUp() override {
    auto app = head_.Appender();
    for (int64_t t = 0; t <= 3600000; t += 15000) {
      for (int i = 0; i < kSeries; ++i) {
        Labels l{{"__name__", "gpu_temp"}, {"gpu", std::to_string(i)}};
        ASSERT_TRUE(app->Append(0, l, t, 40 + i % 7).ok());
      }
    }
    ASSERT_TRUE(app->Commit().ok());
    RegisterApiRoutes(server_.router(),
                      {.query = &query_, .series = &series_, .status = &status_, .ready = {}});
    ASSERT_TRUE(server_.Bind("127.0.0.1:0").ok());
    thread_ = std::thread([this] { (void)server_.Run(); });
  }
  void TearDown() override {
    server_.Stop();
    thread_.join();
  }

  httplib::Client Client() {
    httplib::Client c("127.0.0.1", server_.port());
    c.set_decompress(false);
    c.set_read_timeout(30, 0);
    return c;
  }

  tsdb::head::Head head_;
  promql::Engine engine_;
  StorageBackend backend_{
      [this](int64_t mint, int64_t maxt) { return head_.Querier(mint, maxt); }, engine_,
      [this] {
        return HeadSummary{head_.NumSeries(), 0, head_.MinTime(), head_.MaxTime()};
      }};
  QueryApi query_{backend_, [] { return int64_t{3600000}; }};
  SeriesApi series_{backend_};
  StatusApi status_{backend_, testing::Info("3.0.0"), [] { return int64_t{0}; }};
  HttpServer server_{HttpServerOptions{.threads = 2}};
  std::thread thread_;
};

TEST_F(HttpApiTest, PostFormQueryOnePlusOne) {
  auto c = Client();
  auto r = c.Post("/api/v1/query", "query=1%2B1&time=100", "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("application/json", 0), 0u);
  auto d = ParseJson(r->body);
  ASSERT_TRUE(d.IsObject()) << r->body;
  EXPECT_EQ(Str(d["status"]), "success");
  EXPECT_EQ(Str(d["data"]["resultType"]), "scalar");
  EXPECT_EQ(d["data"]["result"][0].GetDouble(), 100.0);
  EXPECT_EQ(Str(d["data"]["result"][1]), "2");
}

TEST_F(HttpApiTest, GetSelectorAndRange) {
  auto c = Client();
  auto r = c.Get("/api/v1/query?query=gpu_temp%7Bgpu%3D%223%22%7D&time=60");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto d = ParseJson(r->body);
  ASSERT_EQ(d["data"]["result"].Size(), 1u);
  EXPECT_EQ(Str(d["data"]["result"][0]["metric"]["gpu"]), "3");
  EXPECT_EQ(Str(d["data"]["result"][0]["value"][1]), std::to_string(40 + 3 % 7));

  r = c.Get("/api/v1/query_range?query=gpu_temp%7Bgpu%3D%225%22%7D&start=0&end=300&step=60");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  d = ParseJson(r->body);
  EXPECT_EQ(Str(d["data"]["resultType"]), "matrix");
  const auto& values = d["data"]["result"][0]["values"];
  ASSERT_EQ(values.Size(), 6u);  // 0, 60, ..., 300
  EXPECT_EQ(values[5][0].GetDouble(), 300.0);
  EXPECT_EQ(Str(values[5][1]), std::to_string(40 + 5 % 7));
}

TEST_F(HttpApiTest, ErrorsCarryStatusAndEnvelope) {
  auto c = Client();
  auto r = c.Get("/api/v1/query_range?query=up&start=10&end=0&step=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  auto d = ParseJson(r->body);
  EXPECT_EQ(Str(d["status"]), "error");
  EXPECT_EQ(Str(d["errorType"]), "bad_data");
  r = c.Get("/api/v1/series");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
}

TEST_F(HttpApiTest, LabelValuesRouteAndSeriesPost) {
  auto c = Client();
  auto r = c.Get("/api/v1/label/__name__/values?match[]=gpu_temp");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  auto d = ParseJson(r->body);
  ASSERT_EQ(d["data"].Size(), 1u);
  EXPECT_EQ(Str(d["data"][0]), "gpu_temp");
  r = c.Post("/api/v1/series", "match%5B%5D=gpu_temp%7Bgpu%3D~%221.%22%7D",
             "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  d = ParseJson(r->body);
  EXPECT_EQ(d["data"].Size(), 10u);  // gpu 10..19
}

TEST_F(HttpApiTest, GzipWhenAcceptedDecodesToTheSameJson) {
  auto c = Client();
  const char* path = "/api/v1/query_range?query=gpu_temp&start=0&end=3600&step=15";
  auto plain = c.Get(path);
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200);
  EXPECT_TRUE(plain->get_header_value("Content-Encoding").empty());
  EXPECT_GT(plain->body.size(), 64u * 1024);  // streamed in several chunks
  auto gz = c.Get(path, {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(gz);
  ASSERT_EQ(gz->status, 200);
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_LT(gz->body.size(), plain->body.size() / 4);
  EXPECT_EQ(Gunzip(gz->body), plain->body);  // compressed exactly once
  auto d = ParseJson(plain->body);
  EXPECT_EQ(d["data"]["result"].Size(), static_cast<size_t>(kSeries));
  EXPECT_EQ(d["data"]["result"][0]["values"].Size(), 241u);

  auto refused = c.Get(path, {{"Accept-Encoding", "gzip;q=0"}});
  ASSERT_TRUE(refused);
  EXPECT_TRUE(refused->get_header_value("Content-Encoding").empty());
}

TEST_F(HttpApiTest, HealthReadyAndCors) {
  auto c = Client();
  auto r = c.Get("/-/healthy");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Get("/-/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Get("/api/v1/status/buildinfo", {{"Origin", "http://grafana:3000"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://grafana:3000");
  EXPECT_EQ(Str(ParseJson(r->body)["data"]["version"]), "3.0.0");
}

TEST_F(HttpApiTest, PostWithoutContentLengthHasAnEmptyBody) {
  // As `curl -X POST 'http://.../api/v1/query?query=1'` sends it: no
  // Content-Length, no Transfer-Encoding. The server must not wait for a
  // body.
  std::string reply = RawExchange(server_.port(),
                                  "POST /api/v1/query?query=1%2B1 HTTP/1.1\r\nHost: test\r\n"
                                  "Connection: close\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("\"status\":\"success\""), std::string::npos) << reply;
  EXPECT_NE(reply.find("\"2\""), std::string::npos) << reply;
}

TEST_F(HttpApiTest, OptionsIs204WithCors) {
  std::string reply =
      RawExchange(server_.port(),
                  "OPTIONS /api/v1/query HTTP/1.1\r\nHost: test\r\nOrigin: http://grafana\r\n"
                  "Connection: close\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 204", 0), 0u) << reply;
  EXPECT_NE(reply.find("Access-Control-Allow-Origin: http://grafana"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Access-Control-Allow-Methods: GET, POST, OPTIONS"), std::string::npos);
}

TEST_F(HttpApiTest, UnknownPathAndMethodAreJsonErrors) {
  auto c = Client();
  auto missing = c.Get("/no/such/endpoint");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("Content-Type").rfind("application/json", 0), 0u);
  EXPECT_EQ(Str(ParseJson(missing->body)["status"]), "error") << missing->body;
  auto wrong = c.Delete("/api/v1/query");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 405);
  EXPECT_NE(wrong->get_header_value("Allow").find("GET"), std::string::npos);
  EXPECT_EQ(Str(ParseJson(wrong->body)["status"]), "error") << wrong->body;
}

TEST_F(HttpApiTest, HeadOfAnApiEndpointHasNoBody) {
  auto c = Client();
  auto r = c.Head("/api/v1/status/buildinfo");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->body.empty());
}

// /-/healthy and /-/ready run on the network thread: they answer while
// every worker is busy (here the only one, held by a handler that waits
// for the health check to have been answered).
TEST(HealthTest, AnswersWhileEveryWorkerIsBusy) {
  HttpServer server(HttpServerOptions{.threads = 1});
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  server.router().Get("/busy", [&](const http::HttpRequest&, http::HttpResponse& res) {
    entered.set_value();
    released.wait();
    res.SetContent("done", "text/plain");
  });
  RegisterApiRoutes(server.router(), {.ready = [] { return true; }});
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  std::thread serving([&] { (void)server.Run(); });
  std::thread busy([&] {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(30, 0);
    auto r = c.Get("/busy");
    EXPECT_TRUE(r && r->body == "done");
  });
  entered.get_future().wait();
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(10, 0);
  auto healthy = c.Get("/-/healthy");
  auto ready = c.Get("/-/ready");
  release.set_value();
  busy.join();
  server.Stop();
  serving.join();
  ASSERT_TRUE(healthy);
  EXPECT_EQ(healthy->status, 200);
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
}

TEST(HealthTest, NotReadyIs503) {
  HttpServer server(HttpServerOptions{.threads = 1});
  RegisterApiRoutes(server.router(), {.ready = [] { return false; }});
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  std::thread serving([&] { (void)server.Run(); });
  httplib::Client c("127.0.0.1", server.port());
  auto ready = c.Get("/-/ready");
  auto healthy = c.Get("/-/healthy");
  server.Stop();
  serving.join();
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  ASSERT_TRUE(healthy);
  EXPECT_EQ(healthy->status, 200);
}

// A backend whose instant queries wait until the request is canceled
// (30 s at most), so the test sees the server's Cancellation reach the
// query.
class WaitForCancelBackend : public StorageBackend {
 public:
  using StorageBackend::StorageBackend;
  promql::QueryResult InstantQuery(const promql::Expr& expr, int64_t ts_ms,
                                   const promql::QueryOptions& o) override {
    entered.set_value();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(o.cancel && o.cancel->cancelled()) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    saw_cancel = o.cancel && o.cancel->cancelled();
    auto r = StorageBackend::InstantQuery(expr, ts_ms, o);
    finished.set_value();
    return r;
  }
  std::promise<void> entered, finished;
  bool saw_cancel = false;
};

TEST(QueryCancelTest, ClientHangingUpCancelsItsQuery) {
  tsdb::head::Head head;
  promql::Engine engine;
  WaitForCancelBackend backend(
      [&head](int64_t mint, int64_t maxt) { return head.Querier(mint, maxt); }, engine,
      [] { return HeadSummary{}; });
  QueryApi query(backend, [] { return int64_t{1000}; });
  HttpServer server(HttpServerOptions{.threads = 2});
  RegisterApiRoutes(server.router(), {.query = &query, .ready = {}});
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  std::thread serving([&] { (void)server.Run(); });

  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string req = "GET /api/v1/query?query=1 HTTP/1.1\r\nHost: test\r\n\r\n";
  ASSERT_EQ(send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  backend.entered.get_future().wait();
  close(fd);  // the client gives up
  backend.finished.get_future().wait();
  server.Stop();
  serving.join();
  EXPECT_TRUE(backend.saw_cancel);
  EXPECT_GE(server.Stats().canceled_requests, 1u);
}

TEST(QueryCancelTest, StoppingTheServerCancelsQueriesInFlight) {
  tsdb::head::Head head;
  promql::Engine engine;
  WaitForCancelBackend backend(
      [&head](int64_t mint, int64_t maxt) { return head.Querier(mint, maxt); }, engine,
      [] { return HeadSummary{}; });
  QueryApi query(backend, [] { return int64_t{1000}; });
  HttpServer server(HttpServerOptions{.threads = 2});
  RegisterApiRoutes(server.router(), {.query = &query, .ready = {}});
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  std::thread serving([&] { (void)server.Run(); });
  std::thread client([&] {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(30, 0);
    (void)c.Get("/api/v1/query?query=1");  // answered or cut off: either is fine
  });
  backend.entered.get_future().wait();
  server.Stop();  // what SIGTERM does
  backend.finished.get_future().wait();
  serving.join();
  client.join();
  EXPECT_TRUE(backend.saw_cancel);
}

}  // namespace
}  // namespace gpumon::web::api
