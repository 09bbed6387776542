// The endpoint classes over an in-memory head: series/labels/status read
// the head; query endpoints use a backend whose engine answers are set by
// the test (the real engine is exercised in engine_api_test.cc).
#include <gtest/gtest.h>

#include <array>

#include "test_util.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "web/api/query_api.h"
#include "web/api/series_api.h"
#include "web/api/status_api.h"

namespace gpumon::web::api {
namespace {

using testing::Encode;
using testing::Str;

class TestBackend : public ApiBackend {
 public:
  std::unique_ptr<tsdb::Querier> Querier(int64_t mint, int64_t maxt) override {
    return head.Querier(mint, maxt);
  }
  promql::QueryResult InstantQuery(const promql::Expr&, int64_t ts,
                                   const promql::QueryOptions& o) override {
    opts = o;
    instant_ts = ts;
    return answer;
  }
  promql::QueryResult RangeQuery(const promql::Expr&, int64_t s, int64_t e, int64_t step,
                                 const promql::QueryOptions& o) override {
    opts = o;
    range = {s, e, step};
    return answer;
  }
  HeadSummary Head() override { return {head.NumSeries(), 0, head.MinTime(), head.MaxTime()}; }

  tsdb::head::Head head;
  promql::QueryResult answer;
  int64_t instant_ts = -1;
  promql::QueryOptions opts;
  std::array<int64_t, 3> range{};
};

class EndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto app = backend_.head.Appender();
    // 3 GPUs on 2 nodes, a sample every 15 s for 10 minutes.
    for (int64_t t = 0; t <= 600000; t += 15000) {
      for (int gpu = 0; gpu < 3; ++gpu) {
        Labels l{{"__name__", "gpu_util"},
                 {"node", gpu < 2 ? "n1" : "n2"},
                 {"gpu", std::to_string(gpu)}};
        ASSERT_TRUE(app->Append(0, l, t, gpu * 10.0 + t / 15000).ok());
      }
      ASSERT_TRUE(app->Append(0, Labels{{"__name__", "up"}, {"node", "n1"}}, t, 1).ok());
    }
    ASSERT_TRUE(app->Commit().ok());
  }

  static Params P(std::initializer_list<std::pair<std::string, std::string>> kv) {
    Params p;
    for (const auto& [k, v] : kv) p.Add(k, v);
    return p;
  }

  TestBackend backend_;
  QueryApi query_{backend_, [] { return int64_t{1234567}; }};
  SeriesApi series_{backend_};
};

TEST_F(EndpointsTest, LabelNamesAndValues) {
  auto d = Encode(series_.LabelNames(P({})));
  ASSERT_TRUE(d["data"].IsArray());
  std::vector<std::string> names;
  for (const auto& v : d["data"].GetArray()) names.push_back(Str(v));
  EXPECT_EQ(names, (std::vector<std::string>{"__name__", "gpu", "node"}));

  d = Encode(series_.LabelValues("__name__", P({})));
  ASSERT_EQ(d["data"].Size(), 2u);
  EXPECT_EQ(Str(d["data"][0]), "gpu_util");
  EXPECT_EQ(Str(d["data"][1]), "up");

  // match[] restricts; several match[] give the union.
  d = Encode(series_.LabelValues("node", P({{"match[]", "up"}})));
  ASSERT_EQ(d["data"].Size(), 1u);
  EXPECT_EQ(Str(d["data"][0]), "n1");
  d = Encode(series_.LabelValues(
      "gpu", P({{"match[]", "gpu_util{node=\"n2\"}"}, {"match[]", "gpu_util{gpu=\"0\"}"}})));
  ASSERT_EQ(d["data"].Size(), 2u);
  EXPECT_EQ(Str(d["data"][0]), "0");
  EXPECT_EQ(Str(d["data"][1]), "2");
}

TEST_F(EndpointsTest, LimitTruncatesWithWarning) {
  auto d = Encode(series_.LabelValues("gpu", P({{"limit", "2"}})));
  ASSERT_EQ(d["data"].Size(), 2u);
  ASSERT_TRUE(d.HasMember("warnings"));
  EXPECT_EQ(Str(d["warnings"][0]), "results truncated due to limit");
  d = Encode(series_.LabelValues("gpu", P({{"limit", "3"}})));
  EXPECT_EQ(d["data"].Size(), 3u);
  EXPECT_FALSE(d.HasMember("warnings"));
}

TEST_F(EndpointsTest, SeriesRequiresMatchAndMergesSets) {
  auto r = series_.Series(P({}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message, "no match[] parameter provided");

  r = series_.Series(P({{"match[]", "gpu_util"}, {"match[]", "{node=\"n1\"}"}}));
  ASSERT_TRUE(r.ok());
  auto d = Encode(r);
  // gpu 0, gpu 1, gpu 2 (n2) and up{node=n1}: 4 series, each once, sorted.
  ASSERT_EQ(d["data"].Size(), 4u);
  EXPECT_EQ(Str(d["data"][0]["gpu"]), "0");
  EXPECT_EQ(Str(d["data"][3]["__name__"]), "up");

  r = series_.Series(P({{"match[]", "gpu_util"}, {"limit", "1"}}));
  d = Encode(r);
  EXPECT_EQ(d["data"].Size(), 1u);
  EXPECT_EQ(Str(d["warnings"][0]), "results truncated due to limit");
}

TEST_F(EndpointsTest, SeriesTimeRange) {
  // Entirely after the data: nothing.
  auto d = Encode(series_.Series(P({{"match[]", "up"}, {"start", "700"}, {"end", "800"}})));
  ASSERT_TRUE(d["data"].IsArray());
  EXPECT_EQ(d["data"].Size(), 0u);
  d = Encode(series_.Series(P({{"match[]", "up"}, {"start", "1970-01-01T00:01:00Z"}})));
  EXPECT_EQ(d["data"].Size(), 1u);
}

TEST_F(EndpointsTest, BadParametersAreBadData) {
  auto r = series_.Series(P({{"match[]", "up"}, {"start", "yesterday"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message,
            "invalid parameter \"start\": invalid time value for 'start': cannot parse "
            "\"yesterday\" to a valid timestamp");
  r = series_.Series(P({{"match[]", "{job=~\".*\"}"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  r = series_.LabelNames(P({{"match[]", "up{"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->kind, ErrorKind::kBadData);
  r = series_.LabelNames(P({{"limit", "-3"}}));
  EXPECT_EQ(r.error->message, "invalid parameter \"limit\": limit must be non-negative");
}

TEST_F(EndpointsTest, QueryPassesTimeAndEncodesResult) {
  backend_.answer.value = promql::Vector{{Labels{{"__name__", "up"}}, 5000, 1}};
  auto r = query_.Query(P({{"query", "up"}, {"time", "5"}}));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(backend_.instant_ts, 5000);
  auto d = Encode(r);
  EXPECT_EQ(Str(d["status"]), "success");
  EXPECT_EQ(Str(d["data"]["resultType"]), "vector");
  EXPECT_EQ(d["data"]["result"][0]["value"][0].GetDouble(), 5.0);

  // No time: now.
  ASSERT_TRUE(query_.Query(P({{"query", "up"}})).ok());
  EXPECT_EQ(backend_.instant_ts, 1234567);
  EXPECT_FALSE(backend_.opts.timeout_ms.has_value());
  EXPECT_EQ(backend_.opts.lookback_delta_ms, 0);
}

TEST_F(EndpointsTest, QueryOptionsReachTheBackend) {
  ASSERT_TRUE(
      query_.Query(P({{"query", "up"}, {"timeout", "30s"}, {"lookback_delta", "1m"}})).ok());
  EXPECT_EQ(backend_.opts.timeout_ms.value_or(-1), 30000);
  EXPECT_EQ(backend_.opts.lookback_delta_ms, 60000);
  ASSERT_TRUE(query_
                  .QueryRange(P({{"query", "up"},
                                 {"start", "0"},
                                 {"end", "60"},
                                 {"step", "15"},
                                 {"timeout", "2.5"},
                                 {"lookback_delta", "90s"}}))
                  .ok());
  EXPECT_EQ(backend_.opts.timeout_ms.value_or(-1), 2500);
  EXPECT_EQ(backend_.opts.lookback_delta_ms, 90000);
}

TEST_F(EndpointsTest, QueryErrors) {
  auto r = query_.Query(P({{"query", "sum(up"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message.rfind("invalid parameter \"query\": 1:", 0), 0u) << r.error->message;
  r = query_.Query(P({{"query", "up"}, {"time", "x"}}));
  EXPECT_EQ(r.error->message,
            "invalid parameter \"time\": invalid time value for 'time': cannot parse \"x\" to a "
            "valid timestamp");
  r = query_.Query(P({{"query", "up"}, {"timeout", "soon"}}));
  EXPECT_EQ(r.HttpStatus(), 400);

  backend_.answer.error_type = promql::ErrorType::kTimeout;
  backend_.answer.error = "query timed out in expression evaluation";
  r = query_.Query(P({{"query", "up"}}));
  EXPECT_EQ(r.HttpStatus(), 503);
  auto d = Encode(r);
  EXPECT_EQ(Str(d["errorType"]), "timeout");
  EXPECT_EQ(Str(d["error"]), "query timed out in expression evaluation");

  backend_.answer.error_type = promql::ErrorType::kExecution;
  r = query_.Query(P({{"query", "up"}}));
  EXPECT_EQ(r.HttpStatus(), 422);
}

TEST_F(EndpointsTest, QueryRangeChecks) {
  backend_.answer.value = promql::Matrix{};
  auto ok =
      query_.QueryRange(P({{"query", "up"}, {"start", "0"}, {"end", "600"}, {"step", "15s"}}));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(backend_.range, (std::array<int64_t, 3>{0, 600000, 15000}));
  ASSERT_TRUE(
      query_.QueryRange(P({{"query", "up"}, {"start", "0"}, {"end", "600"}, {"step", "2.5"}}))
          .ok());
  EXPECT_EQ(backend_.range[2], 2500);

  auto r = query_.QueryRange(P({{"query", "up"}, {"start", "10"}, {"end", "5"}, {"step", "1"}}));
  EXPECT_EQ(r.error->message,
            "invalid parameter \"end\": end timestamp must not be before start time");
  r = query_.QueryRange(P({{"query", "up"}, {"start", "0"}, {"end", "5"}, {"step", "0"}}));
  EXPECT_EQ(r.error->message,
            "invalid parameter \"step\": zero or negative query resolution step widths are not "
            "accepted. Try a positive integer");
  r = query_.QueryRange(P({{"query", "up"}, {"start", "0"}, {"end", "11001"}, {"step", "1"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message,
            "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the "
            "query resolution (?step=XX)");
  EXPECT_TRUE(
      query_.QueryRange(P({{"query", "up"}, {"start", "0"}, {"end", "11000"}, {"step", "1"}}))
          .ok());
  r = query_.QueryRange(P({{"query", "up"}, {"start", "0"}, {"end", "5"}}));
  EXPECT_EQ(r.error->message, "invalid parameter \"step\": cannot parse \"\" to a valid duration");
}

TEST_F(EndpointsTest, QueryLimitAndStats) {
  backend_.answer.value = promql::Vector{{Labels{{"a", "1"}}, 0, 1}, {Labels{{"a", "2"}}, 0, 2}};
  backend_.answer.annotations.AddInfo("PromQL info: x");
  auto d = Encode(query_.Query(P({{"query", "up"}, {"limit", "1"}, {"stats", "true"}})));
  EXPECT_EQ(d["data"]["result"].Size(), 1u);
  EXPECT_EQ(Str(d["warnings"][0]), "results truncated due to limit");
  EXPECT_EQ(Str(d["infos"][0]), "PromQL info: x");
  ASSERT_TRUE(d["data"].HasMember("stats"));
  EXPECT_TRUE(d["data"]["stats"]["samples"].HasMember("totalQueryableSamples"));
}

TEST_F(EndpointsTest, FormatAndParseQuery) {
  auto d = Encode(query_.FormatQuery(P({{"query", "sum by(job)(rate(x[5m]))"}})));
  ASSERT_TRUE(d["data"].IsString());
  EXPECT_NE(Str(d["data"]).find("rate(x[5m])"), std::string::npos);
  d = Encode(query_.ParseQuery(P({{"query", "foo{a=\"b\"} + 1"}})));
  ASSERT_TRUE(d["data"].IsObject());
  EXPECT_EQ(Str(d["data"]["type"]), "binaryExpr");
  EXPECT_EQ(Str(d["data"]["op"]), "+");
  EXPECT_EQ(Str(d["data"]["lhs"]["type"]), "vectorSelector");
  EXPECT_EQ(Str(d["data"]["lhs"]["name"]), "foo");
  EXPECT_EQ(Str(d["data"]["rhs"]["val"]), "1");
  EXPECT_TRUE(d["data"]["matching"].IsNull());  // scalar operand: no vector matching
  EXPECT_EQ(query_.ParseQuery(P({{"query", "foo{"}})).HttpStatus(), 400);
}

TEST_F(EndpointsTest, ExemplarsAreEmpty) {
  auto d = Encode(query_.QueryExemplars(P({{"query", "up"}})));
  ASSERT_TRUE(d["data"].IsArray());
  EXPECT_EQ(d["data"].Size(), 0u);
}

TEST_F(EndpointsTest, MetadataEmptyObjectWhenUnknown) {
  auto d = Encode(series_.Metadata(P({})));
  ASSERT_TRUE(d["data"].IsObject());
  EXPECT_EQ(d["data"].MemberCount(), 0u);
  EXPECT_EQ(series_.Metadata(P({{"limit", "x"}})).error->message, "limit must be a number");
}

TEST_F(EndpointsTest, TsdbStatusCountsFromTheData) {
  StatusApi status(backend_, testing::Info("3.0.0"), [] { return int64_t{0}; });
  auto d = Encode(status.Tsdb(P({})));
  const auto& data = d["data"];
  EXPECT_EQ(data["headStats"]["numSeries"].GetUint64(), 4u);
  EXPECT_EQ(data["headStats"]["minTime"].GetInt64(), 0);
  EXPECT_EQ(data["headStats"]["maxTime"].GetInt64(), 600000);
  // 3 gpu_util series, 1 up.
  EXPECT_EQ(Str(data["seriesCountByMetricName"][0]["name"]), "gpu_util");
  EXPECT_EQ(data["seriesCountByMetricName"][0]["value"].GetUint64(), 3u);
  EXPECT_EQ(Str(data["seriesCountByMetricName"][1]["name"]), "up");
  // gpu has 3 values, __name__ and node 2 each.
  EXPECT_EQ(Str(data["labelValueCountByLabelName"][0]["name"]), "gpu");
  EXPECT_EQ(data["labelValueCountByLabelName"][0]["value"].GetUint64(), 3u);
  // 3 series each carry __name__=gpu_util and node=n1 (gpu 0, 1 and up);
  // ties are ordered by name.
  EXPECT_EQ(Str(data["seriesCountByLabelValuePair"][0]["name"]), "__name__=gpu_util");
  EXPECT_EQ(Str(data["seriesCountByLabelValuePair"][1]["name"]), "node=n1");
  EXPECT_EQ(data["seriesCountByLabelValuePair"][1]["value"].GetUint64(), 3u);
  EXPECT_EQ(data["seriesCountByLabelValuePair"][2]["value"].GetUint64(), 1u);
  // pairs: __name__ 2 + gpu 3 + node 2.
  EXPECT_EQ(data["headStats"]["numLabelPairs"].GetUint64(), 7u);
  // node: (4+2)*3 for n1 + (4+2)*1 for n2.
  bool found = false;
  for (const auto& m : data["memoryInBytesByLabelName"].GetArray()) {
    if (Str(m["name"]) == "node") {
      found = true;
      EXPECT_EQ(m["value"].GetUint64(), 24u);
    }
  }
  EXPECT_TRUE(found);

  d = Encode(status.Tsdb(P({{"limit", "1"}})));
  EXPECT_EQ(d["data"]["seriesCountByMetricName"].Size(), 1u);
  EXPECT_EQ(status.Tsdb(P({{"limit", "0"}})).error->message, "limit must be a positive number");
  EXPECT_EQ(status.Tsdb(P({{"limit", "10001"}})).error->message, "limit must not exceed 10000");
}

TEST_F(EndpointsTest, BuildInfoAndFlags) {
  ServerInfo info;
  info.version = "3.0.0";
  info.revision = "gpumon 0.1.0";
  info.flags = {{"listen", ":9090"}};
  StatusApi status(backend_, info, [] { return int64_t{0}; });
  auto d = Encode(status.BuildInfo(P({})));
  EXPECT_EQ(Str(d["data"]["version"]), "3.0.0");
  EXPECT_EQ(Str(d["data"]["revision"]), "gpumon 0.1.0");
  EXPECT_TRUE(d["data"].HasMember("goVersion"));
  d = Encode(status.Flags(P({})));
  EXPECT_EQ(Str(d["data"]["listen"]), ":9090");
  d = Encode(status.RuntimeInfo(P({})));
  EXPECT_EQ(Str(d["data"]["serverTime"]), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace gpumon::web::api
