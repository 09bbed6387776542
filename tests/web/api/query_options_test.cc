// Per-request `timeout` and `lookback_delta` on /api/v1/query and
// /api/v1/query_range, through QueryApi with the real engine over an
// in-memory head.
#include <gtest/gtest.h>

#include "test_util.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "web/api/query_api.h"

namespace gpumon::web::api {
namespace {

using testing::Encode;
using testing::Str;

constexpr int64_t kNow = 10 * 60 * 1000;  // the query time: 10 minutes

class QueryOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto app = head_.Appender();
    // One sample two minutes before the query time.
    ASSERT_TRUE(
        app->Append(0, Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}}, kNow - 120000, 61).ok());
    ASSERT_TRUE(app->Commit().ok());
  }

  static Params P(std::initializer_list<std::pair<std::string, std::string>> kv) {
    Params p;
    for (const auto& [k, v] : kv) p.Add(k, v);
    return p;
  }

  // Number of series of an instant vector result (-1 on error).
  static int VectorSize(const ApiResponse& r) {
    if (!r.ok()) return -1;
    auto d = Encode(r);
    return static_cast<int>(d["data"]["result"].Size());
  }

  std::unique_ptr<promql::Engine> engine_ = std::make_unique<promql::Engine>();
  tsdb::head::Head head_;
  StorageBackend backend_{[this](int64_t mint, int64_t maxt) { return head_.Querier(mint, maxt); },
                          *engine_, nullptr};
  QueryApi query_{backend_, [] { return kNow; }};
};

TEST_F(QueryOptionsTest, LookbackDeltaIsPerRequest) {
  // The default 5m lookback sees the 2-minute-old sample.
  EXPECT_EQ(VectorSize(query_.Query(P({{"query", "gpu_temp"}}))), 1);
  // 1m does not.
  EXPECT_EQ(VectorSize(query_.Query(P({{"query", "gpu_temp"}, {"lookback_delta", "1m"}}))), 0);
  // 3m (float seconds) does.
  EXPECT_EQ(VectorSize(query_.Query(P({{"query", "gpu_temp"}, {"lookback_delta", "180"}}))), 1);
  // The next request is back on the server's default.
  EXPECT_EQ(VectorSize(query_.Query(P({{"query", "gpu_temp"}}))), 1);
}

TEST_F(QueryOptionsTest, LookbackDeltaOnRangeQuery) {
  // Steps at -2m (the sample itself), -1m and now.
  auto count_points = [&](std::string lookback) {
    Params p = P({{"query", "gpu_temp"},
                  {"start", std::to_string((kNow - 120000) / 1000)},
                  {"end", std::to_string(kNow / 1000)},
                  {"step", "60"}});
    if (!lookback.empty()) p.Add("lookback_delta", lookback);
    auto r = query_.QueryRange(p);
    if (!r.ok()) return -1;
    auto d = Encode(r);
    if (d["data"]["result"].Size() != 1) return 0;
    return static_cast<int>(d["data"]["result"][0]["values"].Size());
  };
  EXPECT_EQ(count_points(""), 3);
  // 90s: the sample is seen at -2m and -1m, not at the end.
  EXPECT_EQ(count_points("90s"), 2);
}

TEST_F(QueryOptionsTest, TinyTimeoutIsTimeoutError) {
  // 0.1 ms rounds to a zero deadline: the query cannot finish in time.
  auto r = query_.Query(P({{"query", "gpu_temp"}, {"timeout", "0.0001"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.HttpStatus(), 503);
  auto d = Encode(r);
  EXPECT_EQ(Str(d["status"]), "error");
  EXPECT_EQ(Str(d["errorType"]), "timeout");
  EXPECT_NE(Str(d["error"]).find("query timed out"), std::string::npos) << Str(d["error"]);

  r = query_.QueryRange(P(
      {{"query", "gpu_temp"}, {"start", "0"}, {"end", "600"}, {"step", "15"}, {"timeout", "0s"}}));
  EXPECT_EQ(r.HttpStatus(), 503);
  EXPECT_EQ(Str(Encode(r)["errorType"]), "timeout");

  // A generous timeout runs normally.
  EXPECT_EQ(VectorSize(query_.Query(P({{"query", "gpu_temp"}, {"timeout", "1m"}}))), 1);
}

TEST_F(QueryOptionsTest, RequestCannotExtendServerTimeout) {
  // A server whose timeout is already spent: an hour asked for is capped.
  promql::EngineOptions o;
  o.timeout_ms = 0;
  promql::Engine strict(o);
  StorageBackend backend([this](int64_t mint, int64_t maxt) { return head_.Querier(mint, maxt); },
                         strict, nullptr);
  QueryApi api(backend, [] { return kNow; });
  auto r = api.Query(P({{"query", "gpu_temp"}, {"timeout", "1h"}}));
  EXPECT_EQ(r.HttpStatus(), 503);
  EXPECT_EQ(Str(Encode(r)["errorType"]), "timeout");
}

TEST_F(QueryOptionsTest, BadValuesAreBadData) {
  auto r = query_.Query(P({{"query", "gpu_temp"}, {"lookback_delta", "x"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message.rfind("error parsing lookback delta duration: ", 0), 0u)
      << r.error->message;
  r = query_.Query(P({{"query", "gpu_temp"}, {"timeout", "x"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message.rfind("invalid parameter \"timeout\": ", 0), 0u) << r.error->message;
}

}  // namespace
}  // namespace gpumon::web::api
