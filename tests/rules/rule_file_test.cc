#include "rules/rule_file.h"

#include <gtest/gtest.h>

namespace gpumon::rules {
namespace {

TEST(RuleFileTest, ParsesAllFields) {
  auto f = ParseRuleFile(R"(groups:
  - name: gpu
    interval: 30s
    limit: 5
    query_offset: 1m
    labels:
      team: ml
    rules:
      - record: job:gpu_util:avg
        expr: avg by (job) (gpu_util)
        labels:
          source: rule
      - alert: GpuHot
        expr: gpu_temp > 85
        for: 5m
        keep_firing_for: 2m
        labels:
          severity: page
        annotations:
          summary: "{{ $labels.instance }} is at {{ $value }}C"
)",
                         "r.yml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->groups.size(), 1u);
  const auto& g = f->groups[0];
  EXPECT_EQ(g.name, "gpu");
  EXPECT_EQ(g.interval_ms, 30000);
  EXPECT_EQ(g.limit, 5);
  ASSERT_TRUE(g.query_offset_ms.has_value());
  EXPECT_EQ(*g.query_offset_ms, 60000);
  EXPECT_EQ(g.labels.Get("team"), "ml");
  ASSERT_EQ(g.rules.size(), 2u);
  EXPECT_EQ(g.rules[0].record, "job:gpu_util:avg");
  EXPECT_EQ(g.rules[0].labels.Get("source"), "rule");
  EXPECT_EQ(g.rules[1].alert, "GpuHot");
  EXPECT_EQ(g.rules[1].for_ms, 300000);
  EXPECT_EQ(g.rules[1].keep_firing_for_ms, 120000);
  EXPECT_EQ(g.rules[1].annotations.Get("summary"), "{{ $labels.instance }} is at {{ $value }}C");
  EXPECT_EQ(g.rules[1].line, 13);
}

TEST(RuleFileTest, ErrorsNameFileLineAndField) {
  auto f = ParseRuleFile(R"(groups:
  - name: g
    rules:
      - record: ok_metric
        expr: up
      - alert: Bad
        expr: sum(up
)",
                         "rules/bad.yml");
  ASSERT_FALSE(f.ok());
  const std::string& m = f.status().message();
  EXPECT_NE(m.find("rules/bad.yml:7:15:"), std::string::npos) << m;
  EXPECT_NE(m.find("field \"expr\""), std::string::npos) << m;
  EXPECT_NE(m.find("rule 2 \"Bad\""), std::string::npos) << m;
}

TEST(RuleFileTest, ReportsEveryError) {
  auto f = ParseRuleFile(R"(groups:
  - name: g
    rules:
      - record: bad-name
        expr: up
      - alert: A
        expr: up
        labels:
          bad-label: x
        annotations:
          s: "{{ nosuchfunc }}"
)",
                         "x.yml");
  ASSERT_FALSE(f.ok());
  const std::string& m = f.status().message();
  EXPECT_NE(m.find("invalid recording rule name: bad-name"), std::string::npos) << m;
  EXPECT_NE(m.find("invalid label name: bad-label"), std::string::npos) << m;
  EXPECT_NE(m.find("field \"annotations.s\""), std::string::npos) << m;
  EXPECT_NE(m.find("nosuchfunc"), std::string::npos) << m;
}

TEST(RuleFileTest, UnsupportedTemplateNamesTheRule) {
  const std::string yaml =
      "groups:\n"
      "- name: g\n"
      "  rules:\n"
      "  - alert: UsesNow\n"
      "    expr: up == 0\n"
      "    annotations:\n"
      "      since: '{{ now | humanizeTimestamp }}'\n";
  auto f = ParseRuleFile(yaml, "t.yml");
  ASSERT_FALSE(f.ok());
  const std::string& m = f.status().message();
  EXPECT_NE(m.find("t.yml:7:"), std::string::npos) << m;
  EXPECT_NE(m.find("rule 1 \"UsesNow\""), std::string::npos) << m;
  EXPECT_NE(m.find("field \"annotations.since\""), std::string::npos) << m;
  EXPECT_NE(m.find("not supported"), std::string::npos) << m;
}

TEST(RuleFileTest, UnknownFieldNamesTheKey) {
  auto f = ParseRuleFile("groups:\n  - name: g\n    rules:\n      - record: a\n        exp: up\n",
                         "u.yml");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("u.yml:5:9: "), std::string::npos) << f.status().message();
  EXPECT_NE(f.status().message().find("field \"exp\""), std::string::npos);
}

TEST(RuleFileTest, EmptyFileHasNoGroups) {
  auto f = ParseRuleFile("", "e.yml");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->groups.empty());
}

TEST(RuleFileTest, LoadRuleFileReportsMissingFile) {
  auto f = LoadRuleFile("/nonexistent/dir/rules.yml");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("/nonexistent/dir/rules.yml"), std::string::npos);
}

TEST(RuleFileTest, NameValidity) {
  EXPECT_TRUE(IsValidMetricName("job:up:sum"));
  EXPECT_FALSE(IsValidMetricName("1abc"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_TRUE(IsValidLabelName("_x1"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
}

}  // namespace
}  // namespace gpumon::rules
