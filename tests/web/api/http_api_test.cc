// The API over HTTP with the real engine over an in-memory head: routing,
// GET and form POST, status codes, streaming and gzip.
#include "web/api/http_api.h"

#include <gtest/gtest.h>
#include <zlib.h>

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
    ASSERT_TRUE(server_.Bind("127.0.0.1:0").ok());
    RegisterApiRoutes(server_.raw(),
                      {.query = &query_, .series = &series_, .status = &status_, .ready = {}});
    thread_ = std::thread([this] { server_.Run(); });
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
  HttpServer server_{HttpServerOptions{.threads = 2, .keep_alive_max_requests = 10}};
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

}  // namespace
}  // namespace gpumon::web::api
