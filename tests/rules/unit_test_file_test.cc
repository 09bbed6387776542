// The unit-test file loader: promtool's fields, yaml.v2's strictness, and
// errors naming file:line:column and the field path.
#include "rules/unit_test_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace gpumon::rules {
namespace {

constexpr const char* kFull = R"(rule_files:
  - alerts.yml
  - 'rec/*.yml'
evaluation_interval: 30s
group_eval_order: [a, b]
tests:
  - interval: 1m
    name: first
    external_labels:
      cluster: west
      empty:
    external_url: http://gpumon.example:9090
    input_series:
      - series: 'up{job="a"}'
        values: '1+0x10 _ stale'
    alert_rule_test:
      - eval_time: 5m
        alertname: Down
        exp_alerts:
          - exp_labels: {job: a, severity: page}
            exp_annotations:
              summary: "a is down"
      - eval_time: 1h30m
        alertname: Down
    promql_expr_test:
      - expr: up
        eval_time: 2m
        exp_samples:
          - labels: 'up{job="a"}'
            value: 1
          - labels: ''
            value: .inf
          - labels: x
            value: -1.5e3
          - labels: y
            value: 0x10
)";

TEST(UnitTestFileTest, DecodesEveryField) {
  auto f = ParseUnitTestFile(kFull, "t.yml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->path, "t.yml");
  EXPECT_EQ(f->rule_files, (std::vector<std::string>{"alerts.yml", "rec/*.yml"}));
  EXPECT_EQ(f->evaluation_interval_ms, 30'000);
  EXPECT_EQ(f->group_eval_order, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(f->tests.size(), 1u);
  const UnitTestGroup& g = f->tests[0];
  EXPECT_EQ(g.interval_ms, 60'000);
  EXPECT_EQ(g.name, "first");
  EXPECT_EQ(g.external_url, "http://gpumon.example:9090");
  EXPECT_EQ(g.external_labels.Get("cluster"), "west");
  EXPECT_TRUE(g.external_labels.Has("empty"));  // null reads as "", and is kept
  ASSERT_EQ(g.input_series.size(), 1u);
  EXPECT_EQ(g.input_series[0].series, "up{job=\"a\"}");
  EXPECT_EQ(g.input_series[0].values, "1+0x10 _ stale");
  EXPECT_EQ(g.input_series[0].line, 14);
  ASSERT_EQ(g.alert_rule_test.size(), 2u);
  EXPECT_EQ(g.alert_rule_test[0].eval_time_ms, 5 * 60'000);
  EXPECT_EQ(g.alert_rule_test[0].alertname, "Down");
  ASSERT_EQ(g.alert_rule_test[0].exp_alerts.size(), 1u);
  EXPECT_EQ(g.alert_rule_test[0].exp_alerts[0].exp_labels.Get("severity"), "page");
  EXPECT_EQ(g.alert_rule_test[0].exp_alerts[0].exp_annotations.Get("summary"), "a is down");
  EXPECT_EQ(g.alert_rule_test[1].eval_time_ms, 90 * 60'000);
  EXPECT_TRUE(g.alert_rule_test[1].exp_alerts.empty());
  ASSERT_EQ(g.promql_expr_test.size(), 1u);
  const auto& s = g.promql_expr_test[0].exp_samples;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].value, 1);
  EXPECT_EQ(s[1].labels, "");
  EXPECT_TRUE(std::isinf(s[1].value));
  EXPECT_EQ(s[2].value, -1500);
  EXPECT_EQ(s[3].value, 16);
}

TEST(UnitTestFileTest, EmptyFileIsValid) {
  auto f = ParseUnitTestFile("", "t.yml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->tests.empty());
}

struct BadCase {
  const char* name;
  const char* yaml;
  const char* where;  // "line:column"
  const char* field;  // field path named in the error
  const char* what;   // part of the message
};

const BadCase kBad[] = {
    {"unknown_top", "rule_files: []\nfoo: 1\n", "2:1", "foo", "not found"},
    {"unknown_in_group", "tests:\n- interval: 1m\n  bogus: 1\n", "3:3", "tests[0].bogus",
     "not found"},
    {"unknown_in_alert",
     "tests:\n- alert_rule_test:\n  - eval_time: 1m\n    alertname: A\n    exp_alert: []\n", "5:5",
     "tests[0].alert_rule_test[0].exp_alert", "not found"},
    {"unknown_in_expected_alert",
     "tests:\n- alert_rule_test:\n  - alertname: A\n    exp_alerts:\n    - labels: {}\n", "5:7",
     "tests[0].alert_rule_test[0].exp_alerts[0].labels", "not found"},
    {"duplicate_key", "tests: []\ntests: []\n", "2:1", "tests", "already set"},
    {"duplicate_label", "tests:\n- external_labels:\n    a: x\n    a: y\n", "4:5",
     "tests[0].external_labels.a", "already defined"},
    {"bad_duration", "evaluation_interval: 60\n", "1:22", "evaluation_interval",
     "not a valid duration"},
    {"bad_eval_time", "tests:\n- promql_expr_test:\n  - expr: up\n    eval_time: 1x\n", "4:16",
     "tests[0].promql_expr_test[0].eval_time", "not a valid duration"},
    {"quoted_value",
     "tests:\n- promql_expr_test:\n  - expr: up\n    exp_samples:\n    - value: \"1\"\n", "5:14",
     "tests[0].promql_expr_test[0].exp_samples[0].value", "!!str `1` into float64"},
    {"bool_value", "tests:\n- promql_expr_test:\n  - exp_samples:\n    - value: yes\n", "4:14",
     "tests[0].promql_expr_test[0].exp_samples[0].value", "!!bool"},
    {"list_as_string", "tests:\n- input_series:\n  - series: [a]\n", "3:13",
     "tests[0].input_series[0].series", "into string"},
    {"tests_not_a_list", "tests: {a: 1}\n", "1:8", "tests", "into a list"},
    {"group_not_a_map", "tests:\n- 5\n", "2:3", "tests[0]", "into a test group"},
    {"labels_as_list", "tests:\n- alert_rule_test:\n  - exp_alerts:\n    - exp_labels: [a]\n",
     "4:19", "tests[0].alert_rule_test[0].exp_alerts[0].exp_labels", "map[string]string"},
};

TEST(UnitTestFileTest, ErrorsNameFileLineAndField) {
  for (const BadCase& c : kBad) {
    auto f = ParseUnitTestFile(c.yaml, "dir/t.yml");
    ASSERT_FALSE(f.ok()) << c.name;
    const std::string& m = f.status().message();
    EXPECT_NE(m.find(std::string("dir/t.yml:") + c.where + ": "), std::string::npos)
        << c.name << ": " << m;
    EXPECT_NE(m.find(std::string("field \"") + c.field + "\""), std::string::npos)
        << c.name << ": " << m;
    EXPECT_NE(m.find(c.what), std::string::npos) << c.name << ": " << m;
  }
}

TEST(UnitTestFileTest, ReportsEveryError) {
  auto f = ParseUnitTestFile("foo: 1\nbar: 2\ntests:\n- nope: 1\n", "t.yml");
  ASSERT_FALSE(f.ok());
  const std::string& m = f.status().message();
  EXPECT_NE(m.find("t.yml:1:1:"), std::string::npos) << m;
  EXPECT_NE(m.find("t.yml:2:1:"), std::string::npos) << m;
  EXPECT_NE(m.find("t.yml:4:3:"), std::string::npos) << m;
}

TEST(UnitTestFileTest, InvalidYamlAndWrongRoot) {
  auto f = ParseUnitTestFile("tests: [\n", "t.yml");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("t.yml:"), std::string::npos);
  EXPECT_NE(f.status().message().find("invalid YAML"), std::string::npos);
  auto g = ParseUnitTestFile("- a\n", "t.yml");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("!!seq"), std::string::npos) << g.status().message();
}

TEST(UnitTestFileTest, ScalarsReadAsStringsAndNullsAsZero) {
  auto f = ParseUnitTestFile(
      "tests:\n- name: 42\n  interval:\n  input_series:\n  - series: up\n    values: 1\n"
      "  promql_expr_test:\n  - expr: 1\n    exp_samples:\n    - labels:\n      value: ~\n",
      "t.yml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->tests[0].name, "42");
  EXPECT_EQ(f->tests[0].interval_ms, 0);
  EXPECT_EQ(f->tests[0].input_series[0].values, "1");
  EXPECT_EQ(f->tests[0].promql_expr_test[0].expr, "1");
  EXPECT_EQ(f->tests[0].promql_expr_test[0].exp_samples[0].labels, "");
  EXPECT_EQ(f->tests[0].promql_expr_test[0].exp_samples[0].value, 0);
}

TEST(UnitTestFileTest, MissingFileIsAnError) {
  auto f = LoadUnitTestFile("/nonexistent/gpumon/t.yml");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("/nonexistent/gpumon/t.yml"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::rules
