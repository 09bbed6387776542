// /api/v1/rules and /api/v1/alerts: the JSON shapes Prometheus returns.
#include "rules/rules_api.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test_env.h"
#include "web/http_server.h"

namespace gpumon::rules {
namespace {

using testing::kMinute;
using testing::TestEnv;

constexpr const char* kFile = R"(groups:
- name: gpu
  rules:
  - record: gpu_temp:max
    expr: max(gpu_temp)
    labels:
      src: r
  - alert: Hot
    expr: gpu_temp > 80
    for: 2m
    keep_firing_for: 30s
    labels:
      severity: page
    annotations:
      summary: "at {{ $value }}"
- name: other
  interval: 90s
  limit: 3
  rules:
  - record: never
    expr: vector(1)
)";

class RulesApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpumon_rules_api_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    file_ = dir_ + "/gpu.yml";
    std::ofstream(file_) << kFile;
    RuleManagerOptions o;
    o.engine = &env_.engine;
    o.queryable = env_.deps.queryable;
    o.appender = env_.deps.appender;
    manager_ = std::make_unique<RuleManager>(std::move(o));
    ASSERT_TRUE(manager_->Update(kMinute, {file_}, Labels{}).ok());
    for (auto& g : manager_->Groups()) {
      if (g->name() == "gpu") gpu_ = g;
    }
    ASSERT_TRUE(gpu_);
    gpu_->RestoreForState(0);
    env_.Add(Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}}, kMinute - 1, 90);
    gpu_->Eval(kMinute);
  }
  void TearDown() override {
    manager_.reset();
    std::filesystem::remove_all(dir_);
  }
  rapidjson::Document Get(web::api::ApiResponse r) {
    std::string body = web::api::EncodeToString(r);
    rapidjson::Document d;
    d.Parse(body.c_str());
    EXPECT_FALSE(d.HasParseError()) << body;
    return d;
  }
  rapidjson::Document Rules(const std::string& query) {
    web::api::Params p;
    p.AddUrlEncoded(query);
    return Get(RulesResponse(*manager_, p));
  }

  TestEnv env_;
  std::string dir_, file_;
  std::unique_ptr<RuleManager> manager_;
  std::shared_ptr<Group> gpu_;
};

TEST_F(RulesApiTest, RulesShape) {
  auto d = Rules("");
  ASSERT_STREQ(d["status"].GetString(), "success");
  const auto& groups = d["data"]["groups"];
  ASSERT_EQ(groups.Size(), 2u);
  const auto& g = groups[0];
  EXPECT_STREQ(g["name"].GetString(), "gpu");
  EXPECT_EQ(g["file"].GetString(), file_);
  EXPECT_EQ(g["interval"].GetDouble(), 60);
  EXPECT_EQ(g["limit"].GetInt(), 0);
  EXPECT_TRUE(g["evaluationTime"].IsNumber());
  EXPECT_TRUE(g["lastEvaluation"].IsString());

  const auto& rec = g["rules"][0];
  EXPECT_STREQ(rec["type"].GetString(), "recording");
  EXPECT_STREQ(rec["name"].GetString(), "gpu_temp:max");
  EXPECT_STREQ(rec["query"].GetString(), "max(gpu_temp)");
  EXPECT_STREQ(rec["labels"]["src"].GetString(), "r");
  EXPECT_STREQ(rec["health"].GetString(), "ok");
  EXPECT_FALSE(rec.HasMember("lastError"));
  EXPECT_FALSE(rec.HasMember("alerts"));

  const auto& al = g["rules"][1];
  EXPECT_STREQ(al["type"].GetString(), "alerting");
  EXPECT_STREQ(al["state"].GetString(), "pending");
  EXPECT_STREQ(al["query"].GetString(), "gpu_temp > 80");
  EXPECT_EQ(al["duration"].GetDouble(), 120);
  EXPECT_EQ(al["keepFiringFor"].GetDouble(), 30);
  EXPECT_STREQ(al["labels"]["severity"].GetString(), "page");
  EXPECT_STREQ(al["annotations"]["summary"].GetString(), "at {{ $value }}");
  ASSERT_EQ(al["alerts"].Size(), 1u);
  const auto& a = al["alerts"][0];
  EXPECT_STREQ(a["state"].GetString(), "pending");
  EXPECT_STREQ(a["activeAt"].GetString(), "1970-01-01T00:01:00Z");
  EXPECT_STREQ(a["value"].GetString(), "9e+01");
  EXPECT_STREQ(a["labels"]["alertname"].GetString(), "Hot");
  EXPECT_STREQ(a["annotations"]["summary"].GetString(), "at 90");
  EXPECT_FALSE(a.HasMember("keepFiringSince"));

  const auto& other = groups[1];
  EXPECT_EQ(other["interval"].GetDouble(), 90);
  EXPECT_EQ(other["limit"].GetInt(), 3);
  const auto& never = other["rules"][0];
  EXPECT_STREQ(never["health"].GetString(), "unknown");
  EXPECT_STREQ(never["lastEvaluation"].GetString(), "0001-01-01T00:00:00Z");
  EXPECT_STREQ(other["lastEvaluation"].GetString(), "0001-01-01T00:00:00Z");
}

TEST_F(RulesApiTest, Filters) {
  auto d = Rules("type=record");
  for (const auto& g : d["data"]["groups"].GetArray()) {
    for (const auto& r : g["rules"].GetArray()) EXPECT_STREQ(r["type"].GetString(), "recording");
  }
  d = Rules("type=alert");
  ASSERT_EQ(d["data"]["groups"].Size(), 1u);  // "other" has no alerting rule
  ASSERT_EQ(d["data"]["groups"][0]["rules"].Size(), 1u);
  d = Rules("rule_group[]=other");
  ASSERT_EQ(d["data"]["groups"].Size(), 1u);
  EXPECT_STREQ(d["data"]["groups"][0]["name"].GetString(), "other");
  d = Rules("rule_name[]=never&rule_name[]=Hot");
  ASSERT_EQ(d["data"]["groups"].Size(), 2u);
  EXPECT_EQ(d["data"]["groups"][0]["rules"].Size(), 1u);
  d = Rules("file[]=/nope.yml");
  EXPECT_EQ(d["data"]["groups"].Size(), 0u);
  d = Rules("match[]=%7Bseverity%3D%22page%22%7D");
  ASSERT_EQ(d["data"]["groups"].Size(), 1u);
  EXPECT_STREQ(d["data"]["groups"][0]["rules"][0]["name"].GetString(), "Hot");
  d = Rules("exclude_alerts=true&type=alert");
  EXPECT_TRUE(d["data"]["groups"][0]["rules"][0]["alerts"].IsNull());
}

TEST_F(RulesApiTest, BadTypeIsBadData) {
  web::api::Params p;
  p.Add("type", "nope");
  auto r = RulesResponse(*manager_, p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.HttpStatus(), 400);
  auto d = Get(r);
  EXPECT_STREQ(d["errorType"].GetString(), "bad_data");
  EXPECT_STREQ(d["error"].GetString(), "invalid parameter \"type\": not supported value \"nope\"");
}

TEST_F(RulesApiTest, AlertsEndpointAndFiringState) {
  env_.Add(Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}}, 3 * kMinute - 1, 91.5);
  gpu_->Eval(3 * kMinute);
  auto d = Get(AlertsResponse(*manager_));
  const auto& alerts = d["data"]["alerts"];
  ASSERT_EQ(alerts.Size(), 1u);
  EXPECT_STREQ(alerts[0]["state"].GetString(), "firing");
  EXPECT_STREQ(alerts[0]["value"].GetString(), "9.15e+01");
  EXPECT_STREQ(alerts[0]["labels"]["severity"].GetString(), "page");
  // keep_firing_for: the condition goes away, the alert keeps firing.
  env_.Add(Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}}, 4 * kMinute - 1, 10);
  gpu_->Eval(4 * kMinute);
  d = Get(AlertsResponse(*manager_));
  ASSERT_EQ(d["data"]["alerts"].Size(), 1u);
  EXPECT_STREQ(d["data"]["alerts"][0]["keepFiringSince"].GetString(), "1970-01-01T00:04:00Z");
  d = Rules("");
  EXPECT_STREQ(d["data"]["groups"][0]["rules"][1]["state"].GetString(), "firing");
}

TEST_F(RulesApiTest, RoutesOverHttp) {
  web::HttpServer server(web::HttpServerOptions{.threads = 1});
  RegisterRuleRoutes(server.router(), *manager_);
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  std::thread t([&] { (void)server.Run(); });
  httplib::Client c("127.0.0.1", server.port());
  auto res = c.Get("/api/v1/alerts");
  auto bad = c.Get("/api/v1/rules?type=x");
  auto ok = c.Get("/api/v1/rules?type=record");
  server.Stop();
  t.join();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("\"alerts\":[{"), std::string::npos) << res->body;
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_NE(ok->body.find("\"type\":\"recording\""), std::string::npos);
}

TEST(GoJsonTest, TimesAndFloats) {
  EXPECT_EQ(GoJsonTime(1500), "1970-01-01T00:00:01.5Z");
  EXPECT_EQ(GoJsonTime(kNoTime), "0001-01-01T00:00:00Z");
  EXPECT_EQ(GoJsonFloat(60), "60");
  EXPECT_EQ(GoJsonFloat(0.25), "0.25");
  EXPECT_EQ(GoJsonFloat(1e-7), "1e-7");
  EXPECT_EQ(GoJsonFloat(1e21), "1e+21");
}

}  // namespace
}  // namespace gpumon::rules
