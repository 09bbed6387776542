// gpumon dashboards: Grafana variables around the PromQL parser, variable
// queries, and the DCGM conversion of a dashboard (dashboards_*.h).
#include "cli/dashboards_convert.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "cli/dashboards_check.h"
#include "cli/dashboards_placeholders.h"
#include "cli/dashboards_variable_query.h"
#include "cli/rules_convert.h"

namespace gpumon::cli {
namespace {

TEST(GrafanaPlaceholdersTest, DurationsNumbersAndStringsRoundTrip) {
  GrafanaPlaceholders p;
  auto text = p.Substitute(
      "sum(rate(x{node=~\"$node\"}[$__rate_interval])) * $price / $__range_s"
      " + avg_over_time(y[${__range}:$__interval] offset $shift)");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->find("$__rate_interval"), std::string::npos);
  EXPECT_NE(text->find("\"$node\""), std::string::npos) << "a string literal is kept";
  auto back = p.Restore(*text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back,
            "sum(rate(x{node=~\"$node\"}[$__rate_interval])) * $price / $__range_s"
            " + avg_over_time(y[${__range}:$__interval] offset $shift)");
}

TEST(GrafanaPlaceholdersTest, RestoreFailsWhenAVariableIsLost) {
  GrafanaPlaceholders p;
  ASSERT_TRUE(p.Substitute("rate(x[$__rate_interval])").ok());
  EXPECT_FALSE(p.Restore("rate(x[5m])").ok());
}

TEST(GrafanaVariableTest, NamesOfEachForm) {
  EXPECT_EQ(GrafanaVariableName("$node"), "node");
  EXPECT_EQ(GrafanaVariableName("${node:regex}"), "node");
  EXPECT_EQ(GrafanaVariableName("[[node]]"), "node");
  EXPECT_EQ(GrafanaVariableLength("$ 1", 0), 0u);
  EXPECT_EQ(GrafanaVariableLength("${a b}", 0), 0u);
}

TEST(VariableQueryTest, ParsesGrafanaForms) {
  auto q = ParseVariableQuery(" label_values(up{a=\"x,y\"}, instance) ");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->kind, VariableQuery::Kind::kLabelValues);
  EXPECT_EQ(q->selector, "up{a=\"x,y\"}");
  EXPECT_EQ(q->label, "instance");
  q = ParseVariableQuery("label_values(job)");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->selector, "");
  EXPECT_EQ(FormatVariableQuery(*q), "label_values(job)");
  q = ParseVariableQuery("query_result(topk(3, up))");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->kind, VariableQuery::Kind::kQueryResult);
  EXPECT_FALSE(ParseVariableQuery("label_values(up, 1abc)").ok());
  EXPECT_FALSE(ParseVariableQuery("sum(up)").ok());
}

TEST(DashboardsConvertTest, ExpressionsKeepVariablesAndNativeUnits) {
  promql::RewriteMap map = DcgmRewriteMap();
  auto e = ConvertGrafanaExpr(
      map, "avg by (hostname) (gpu_utilization_ratio{hostname=~\"$node\"}) * $scale");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_NE(e->find("DCGM_FI_DEV_GPU_UTIL{Hostname=~\"$node\"} / 100"), std::string::npos) << *e;
  EXPECT_NE(e->find("by (Hostname)"), std::string::npos) << *e;
  EXPECT_NE(e->find("$scale"), std::string::npos) << *e;
  e = ConvertGrafanaExpr(map, "increase(gpu_energy_joules_total[$__range])");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_NE(e->find("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[$__range]"), std::string::npos) << *e;
  EXPECT_NE(e->find("1000"), std::string::npos) << "scaled back to joules: " << *e;
}

TEST(DashboardsConvertTest, VariableQueries) {
  promql::RewriteMap map = DcgmRewriteMap();
  auto q =
      ConvertVariableQuery(map, "label_values(gpu_temperature_celsius{job=~\"$job\"}, hostname)");
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(*q, "label_values(DCGM_FI_DEV_GPU_TEMP{job=~\"$job\"}, Hostname)");
  // A scaled metric is no series selector any more.
  EXPECT_FALSE(ConvertVariableQuery(map, "label_values(gpu_utilization_ratio, gpu)").ok());
  EXPECT_FALSE(ConvertVariableQuery(map, "metrics(gpu_.*)").ok());
}

// clang-format off
constexpr const char* kDashboard = R"json({
  "uid": "x", "title": "t",
  "templating": {"list": [{"name": "node", "type": "query",
     "query": {"query": "label_values(gpu_temperature_celsius, hostname)"}}]},
  "annotations": {"list": [{"name": "alerts", "tagKeys": "alertname,hostname",
     "target": {"expr": "ALERTS{hostname=~\"$node\"}"}}]},
  "panels": [
    {"id": 1, "title": "temp", "type": "timeseries", "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
     "targets": [{"refId": "A", "expr": "gpu_temperature_celsius{hostname=~\"$node\"}",
                  "legendFormat": "{{hostname}} {{ gpu }}"},
                 {"refId": "B", "expr": "gpu_xid_errors_total"}],
     "transformations": [{"id": "organize", "options": {"renameByName": {"hostname": "node"}}}]},
    {"id": 2, "title": "links", "type": "stat", "gridPos": {"x": 12, "y": 0, "w": 12, "h": 8},
     "targets": [{"refId": "A", "expr": "sum(gpu_nvlink_up)"}]}
  ]})json";
// clang-format on

TEST(DashboardsConvertTest, DashboardLabelsAndPanelsLeftOut) {
  // The rule converter's map rejects catalog metrics without DCGM equivalent
  // (the command builds it the same way, from the rule files given).
  DcgmRuleConverter rules;
  ASSERT_TRUE(rules.ConvertRuleFiles({}).ok());
  DashboardConverter converter(rules.map());
  auto out = converter.Convert(kDashboard, "in.json");
  ASSERT_TRUE(out.ok()) << out.status().message();
  rapidjson::Document d;
  d.Parse(out->c_str());
  ASSERT_FALSE(d.HasParseError());
  const auto& p1 = d["panels"][0];
  ASSERT_EQ(p1["targets"].Size(), 1u) << "the XID target is left out";
  EXPECT_STREQ(p1["targets"][0]["expr"].GetString(), "DCGM_FI_DEV_GPU_TEMP{Hostname=~\"$node\"}");
  EXPECT_STREQ(p1["targets"][0]["legendFormat"].GetString(), "{{Hostname}} {{gpu}}");
  EXPECT_NE(std::string(p1["description"].GetString()).find("gpu_xid_errors_total"),
            std::string::npos);
  EXPECT_TRUE(p1["transformations"][0]["options"]["renameByName"].HasMember("Hostname"));
  const auto& p2 = d["panels"][1];
  EXPECT_STREQ(p2["type"].GetString(), "text");
  EXPECT_EQ(p2["id"].GetInt(), 2);
  EXPECT_EQ(p2["gridPos"]["x"].GetInt(), 12);
  EXPECT_STREQ(d["annotations"]["list"][0]["tagKeys"].GetString(), "alertname,Hostname");
  EXPECT_STREQ(d["templating"]["list"][0]["query"]["query"].GetString(),
               "label_values(DCGM_FI_DEV_GPU_TEMP, Hostname)");
  EXPECT_EQ(converter.notes().size(), 2u);
  EXPECT_TRUE(CheckDashboard(*out, "out.json").empty());
}

// clang-format off
constexpr const char* kBrokenDashboard = R"json({"panels": [{"id": 7, "title": "bad",
    "targets": [{"refId": "C", "expr": "sum(x"}]}]})json";
// clang-format on

TEST(DashboardsCheckTest, ReportsFilePanelAndTarget) {
  auto problems = CheckDashboard(kBrokenDashboard, "f.json");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].rfind("f.json: panel 7 \"bad\": target C: ", 0), 0u) << problems[0];
  EXPECT_TRUE(CheckGrafanaExpr("rate(x[$__rate_interval]) * $k").empty());
  EXPECT_FALSE(CheckGrafanaExpr("rate(x[$__rate_interval]").empty());
}

}  // namespace
}  // namespace gpumon::cli
