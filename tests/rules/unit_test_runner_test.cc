// The rule unit-test runner: promtool test rules' semantics (alert sets at
// an eval time, `for`, templated annotations, promql_expr_test, series
// notation, evaluation errors) and its failure messages.
#include "rules/unit_test_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpumon::rules {
namespace {

constexpr const char* kRules = R"(groups:
- name: gpu
  rules:
  - alert: GpuHot
    expr: gpu_temperature_celsius > 80
    for: 2m
    labels:
      severity: warning
    annotations:
      summary: 'GPU {{ $labels.gpu }} on {{ $labels.instance }} is hot'
      description: '{{ $value }} C (cluster {{ $externalLabels.cluster }})'
  - record: instance:gpu_temperature_celsius:max
    expr: max by (instance) (gpu_temperature_celsius)
- name: presence
  rules:
  - alert: GpuMetricsAbsent
    expr: absent(gpu_temperature_celsius)
)";

// The GPU reads 70, then 90 from 1m on: pending at 1m and 2m, firing at 3m.
constexpr const char* kGoodTests = R"(rule_files: [rules.yml]
tests:
- interval: 1m
  external_labels:
    cluster: west
  input_series:
  - series: 'gpu_temperature_celsius{gpu="0",instance="n1"}'
    values: '70 90x10'
  - series: 'gpu_temperature_celsius{gpu="1",instance="n1"}'
    values: '60x10'
  alert_rule_test:
  - eval_time: 2m
    alertname: GpuHot
  - eval_time: 3m30s
    alertname: GpuHot
    exp_alerts:
    - exp_labels: {severity: warning, gpu: "0", instance: n1}
      exp_annotations:
        summary: GPU 0 on n1 is hot
        description: 90 C (cluster west)
  - eval_time: 3m
    alertname: GpuMetricsAbsent
  promql_expr_test:
  - expr: instance:gpu_temperature_celsius:max
    eval_time: 2m
    exp_samples:
    - labels: 'instance:gpu_temperature_celsius:max{instance="n1"}'
      value: 90
  - expr: scalar(gpu_temperature_celsius{gpu="1"})
    eval_time: 5m
    exp_samples:
    - labels: ''
      value: 60
)";

class UnitTestRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpumon_unit_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Write("rules.yml", kRules);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  UnitTestReport Run(const std::string& test_yaml, UnitTestOptions opts = {}) {
    return RunUnitTestFile(Write("t.yml", test_yaml), opts);
  }
  static std::string All(const UnitTestReport& r) {
    std::string s;
    for (const auto& e : r.errors) s += e + "\n";
    return s;
  }

  // kGoodTests with one piece replaced.
  static std::string Good(const std::string& from, const std::string& to) {
    std::string s = kGoodTests;
    size_t pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    if (pos != std::string::npos) s.replace(pos, from.size(), to);
    return s;
  }

  std::string dir_;
};

TEST_F(UnitTestRunnerTest, PassingFile) {
  UnitTestReport r = Run(kGoodTests);
  EXPECT_TRUE(r.ok()) << All(r);
  EXPECT_TRUE(r.warnings.empty());
}

TEST_F(UnitTestRunnerTest, WrongExpectedLabelsFail) {
  UnitTestReport r = Run(Good("severity: warning, gpu: \"0\"", "severity: critical, gpu: \"0\""));
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors.size(), 1u) << All(r);
  const std::string& e = r.errors[0];
  EXPECT_NE(e.find("alertname: GpuHot, time: 3m30s"), std::string::npos) << e;
  EXPECT_NE(e.find("exp:[\n            0:\n              Labels:{alertname=\"GpuHot\", gpu=\"0\", "
                   "instance=\"n1\", severity=\"critical\"}"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("got:[\n            0:\n              Labels:{alertname=\"GpuHot\", gpu=\"0\", "
                   "instance=\"n1\", severity=\"warning\"}\n              Annotations:{description="
                   "\"90 C (cluster west)\", summary=\"GPU 0 on n1 is hot\"}"),
            std::string::npos)
      << e;
}

TEST_F(UnitTestRunnerTest, WrongAnnotationFails) {
  UnitTestReport r = Run(Good("description: 90 C", "description: 91 C"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(All(r).find("alertname: GpuHot, time: 3m30s"), std::string::npos) << All(r);
}

TEST_F(UnitTestRunnerTest, ExpectedEmptyAnnotationMustBePresent) {
  // An exp_annotations entry with an empty value expects an annotation
  // that expanded to "", which this rule does not have.
  UnitTestReport r = Run(Good("description: 90 C (cluster west)",
                              "description: 90 C (cluster west)\n        runbook_url: ''"));
  EXPECT_FALSE(r.ok());
}

TEST_F(UnitTestRunnerTest, WrongSampleValueFails) {
  UnitTestReport r = Run(Good("value: 90", "value: 91"));
  ASSERT_EQ(r.errors.size(), 1u) << All(r);
  EXPECT_EQ(r.errors[0],
            "    expr: \"instance:gpu_temperature_celsius:max\", time: 2m,\n"
            "        exp: {__name__=\"instance:gpu_temperature_celsius:max\", instance=\"n1\"} "
            "9.1E+01\n"
            "        got: {__name__=\"instance:gpu_temperature_celsius:max\", instance=\"n1\"} "
            "9E+01");
}

TEST_F(UnitTestRunnerTest, MissingAlertFails) {
  // 90 C from 1m on with for: 2m: not firing before 3m.
  UnitTestReport r = Run(Good("eval_time: 3m30s", "eval_time: 2m59s"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(All(r).find("time: 2m59s"), std::string::npos) << All(r);
  EXPECT_NE(All(r).find("got:[]"), std::string::npos) << All(r);
}

TEST_F(UnitTestRunnerTest, ForNotYetElapsed) {
  // At 2m the alert is pending (active since 1m, for 2m): expecting it fails.
  UnitTestReport r = Run(Good("  - eval_time: 2m\n    alertname: GpuHot\n",
                              "  - eval_time: 2m\n    alertname: GpuHot\n    exp_alerts:\n"
                              "    - exp_labels: {severity: warning, gpu: \"0\", instance: n1}\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(All(r).find("alertname: GpuHot, time: 2m,"), std::string::npos) << All(r);
}

TEST_F(UnitTestRunnerTest, ExtraAlertFails) {
  UnitTestReport r = Run(Good("values: '60x10'", "values: '95x10'"));
  ASSERT_FALSE(r.ok());
  // Both GPUs fire at 3m30s; one was expected. And the max is 95 now.
  EXPECT_NE(All(r).find("1:\n              Labels:{alertname=\"GpuHot\", gpu=\"1\""),
            std::string::npos)
      << All(r);
}

TEST_F(UnitTestRunnerTest, TestGroupNameIsReported) {
  std::string named = Good("- interval: 1m\n", "- interval: 1m\n  name: hot gpu\n");
  EXPECT_TRUE(Run(named).ok());
  named.replace(named.find("description: 90 C"), 17, "description: 80 C");
  UnitTestReport r = Run(named);
  ASSERT_EQ(r.errors.size(), 1u) << All(r);
  EXPECT_EQ(r.errors[0].rfind("    name: hot gpu,\n    alertname: GpuHot, time: 3m30s, \n", 0), 0u)
      << r.errors[0];
}

TEST_F(UnitTestRunnerTest, SeriesNotation) {
  Write("none.yml", "groups: []\n");
  UnitTestReport r = Run(R"(rule_files: [none.yml]
tests:
- interval: 1m
  input_series:
  - series: 'c{a="1"}'
    values: '1+2x3 _x2 stale 5 -2-3x1'
  promql_expr_test:
  - {expr: c, eval_time: 3m, exp_samples: [{labels: 'c{a="1"}', value: 7}]}
  - {expr: c, eval_time: 5m, exp_samples: [{labels: 'c{a="1"}', value: 7}]}
  - {expr: c, eval_time: 6m}
  - {expr: c, eval_time: 7m, exp_samples: [{labels: 'c{a="1"}', value: 5}]}
  - {expr: c, eval_time: 8m, exp_samples: [{labels: 'c{a="1"}', value: -2}]}
  - {expr: c, eval_time: 9m, exp_samples: [{labels: 'c{a="1"}', value: -5}]}
  - {expr: 'count_over_time(c[10m])', eval_time: 9m, exp_samples: [{labels: '{a="1"}', value: 7}]}
)");
  EXPECT_TRUE(r.ok()) << All(r);
}

TEST_F(UnitTestRunnerTest, BadSeriesNotationFails) {
  Write("none.yml", "groups: []\n");
  UnitTestReport r =
      Run("rule_files: [none.yml]\ntests:\n- interval: 1m\n  input_series:\n"
          "  - {series: 'c', values: '1 2 x3'}\n");
  EXPECT_FALSE(r.ok());
  r =
      Run("rule_files: [none.yml]\ntests:\n- interval: 1m\n  input_series:\n"
          "  - {series: 'c{a=\"1\"', values: '1'}\n");
  EXPECT_FALSE(r.ok());
}

TEST_F(UnitTestRunnerTest, RuleEvaluationErrorFails) {
  Write("m2m.yml",
        "groups:\n- name: g\n  rules:\n  - record: bad\n    expr: up * on() group_left foo\n");
  UnitTestReport r = Run(R"(rule_files: [m2m.yml]
tests:
- interval: 1m
  input_series:
  - {series: 'up{job="a"}', values: '1 1'}
  - {series: 'foo{job="a"}', values: '1 1'}
  - {series: 'foo{job="b"}', values: '1 1'}
)");
  ASSERT_EQ(r.errors.size(), 1u) << All(r);
  EXPECT_EQ(r.errors[0].rfind("    rule: bad, time: 0s, err: ", 0), 0u) << r.errors[0];
}

TEST_F(UnitTestRunnerTest, FileLevelErrors) {
  UnitTestReport r = Run("rule_files: [rules.yml]\ngroup_eval_order: [gpu, gpu]\ntests: []\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "group name repeated in evaluation order: gpu");

  r = Run("rule_files: [rules.yml]\ntests:\n- alert_rule_test:\n  - eval_time: 5m\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "an item under alert_rule_test misses required attribute alertname at eval_time 5m");

  r = Run("rule_files: [nope.yml]\ntests: [{}]\n");
  EXPECT_TRUE(r.ok()) << All(r);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "no file match pattern " + dir_ + "/nope.yml");
}

TEST_F(UnitTestRunnerTest, InvalidRuleFileFailsEachTestGroup) {
  Write("bad.yml", "groups:\n- name: g\n  rules:\n  - record: a\n    expr: sum(\n");
  UnitTestReport r = Run("rule_files: [bad.yml]\ntests: [{}, {}]\n");
  ASSERT_EQ(r.errors.size(), 2u) << All(r);
  EXPECT_NE(r.errors[0].find(dir_ + "/bad.yml:5:"), std::string::npos) << r.errors[0];
  // Rule files are only loaded by test groups.
  r = Run("rule_files: [bad.yml]\ntests: []\n");
  EXPECT_TRUE(r.ok());
}

TEST_F(UnitTestRunnerTest, Prometheus3GroupFieldsNeedTheFlag) {
  Write("p3.yml", "groups:\n- name: g\n  query_offset: 1m\n  rules: []\n");
  UnitTestReport r = Run("rule_files: [p3.yml]\ntests: [{}]\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(All(r).find("field \"query_offset\""), std::string::npos) << All(r);
  UnitTestOptions p3;
  p3.prometheus3 = true;
  r = Run("rule_files: [p3.yml]\ntests: [{}]\n", p3);
  EXPECT_TRUE(r.ok()) << All(r);
}

// Prometheus 2.x windows are closed on the left: a series is still seen
// exactly 5m after its last sample, and [5m] over 1m points holds 6.
TEST_F(UnitTestRunnerTest, LookbackAndRangeWindowsArePrometheus2s) {
  const std::string tests = R"(rule_files: [rules.yml]
tests:
- interval: 1m
  input_series:
  - series: 'gpu_temperature_celsius{gpu="0",instance="n1"}'
    values: '50x10'
  alert_rule_test:
  - eval_time: 15m
    alertname: GpuMetricsAbsent
  - eval_time: 16m
    alertname: GpuMetricsAbsent
    exp_alerts: [{}]
  promql_expr_test:
  - expr: count_over_time(gpu_temperature_celsius[5m])
    eval_time: 10m
    exp_samples: [{labels: '{gpu="0",instance="n1"}', value: 6}]
  - expr: max_over_time(gpu_temperature_celsius[5m:1m])
    eval_time: 20m
    exp_samples: [{labels: '{gpu="0",instance="n1"}', value: 50}]
  - expr: increase(gpu_temperature_celsius[5m])
    eval_time: 10m
    exp_samples: [{labels: '{gpu="0",instance="n1"}', value: 0}]
)";
  UnitTestReport r = Run(tests);
  EXPECT_TRUE(r.ok()) << All(r);
  UnitTestOptions p3;
  p3.prometheus3 = true;
  r = Run(tests, p3);
  ASSERT_FALSE(r.ok());
  // Prometheus 3: absent at 15m already (fires at 15m), 5 points in [5m],
  // nothing left in the subquery at 20m.
  EXPECT_NE(All(r).find("alertname: GpuMetricsAbsent, time: 15m"), std::string::npos) << All(r);
  EXPECT_NE(All(r).find("5E+00"), std::string::npos) << All(r);
  EXPECT_NE(All(r).find("max_over_time"), std::string::npos) << All(r);
}

TEST_F(UnitTestRunnerTest, GroupEvalOrder) {
  // `b` reads what `a` records in the same evaluation only when a runs first.
  Write("order.yml", R"(groups:
- name: b
  rules:
  - record: b_out
    expr: a_out
- name: a
  rules:
  - record: a_out
    expr: vector(1)
)");
  const std::string tests = R"(rule_files: [order.yml]
GROUP_ORDER
tests:
- interval: 1m
  promql_expr_test:
  - expr: b_out
    eval_time: 0s
    exp_samples: [{labels: b_out, value: 1}]
)";
  std::string with = tests;
  with.replace(with.find("GROUP_ORDER"), 11, "group_eval_order: [a, b]");
  EXPECT_TRUE(Run(with).ok());
  std::string without = tests;
  without.replace(without.find("GROUP_ORDER"), 11, "");
  EXPECT_FALSE(Run(without).ok());
}

TEST_F(UnitTestRunnerTest, NaNNeverEqualsAndIntervalZero) {
  Write("none.yml", "groups: []\n");
  UnitTestReport r = Run(R"(rule_files: [none.yml]
tests:
- input_series:
  - {series: 'x', values: '3 4 5'}
  promql_expr_test:
  - {expr: x, eval_time: 0s, exp_samples: [{labels: x, value: 3}]}
)");
  EXPECT_TRUE(r.ok()) << All(r);  // no interval: every point at t=0, the first kept
  r = Run(R"(rule_files: [none.yml]
tests:
- interval: 1m
  promql_expr_test:
  - {expr: 'vector(NaN)', eval_time: 0s, exp_samples: [{labels: '{}', value: .nan}]}
)");
  EXPECT_FALSE(r.ok());
}

TEST(GoFormatTest, MatchesGo) {
  EXPECT_EQ(GoFloatE(1), "1E+00");
  EXPECT_EQ(GoFloatE(90), "9E+01");
  EXPECT_EQ(GoFloatE(0.125), "1.25E-01");
  EXPECT_EQ(GoFloatE(1e300), "1E+300");
  EXPECT_EQ(GoFloatE(-INFINITY), "-Inf");
  EXPECT_EQ(GoTimeDuration(0), "0s");
  EXPECT_EQ(GoTimeDuration(60'000), "1m0s");
  EXPECT_EQ(GoTimeDuration(3'600'000), "1h0m0s");
  EXPECT_EQ(GoTimeDuration(1'500), "1.5s");
  EXPECT_EQ(GoTimeDuration(250), "250ms");
  EXPECT_EQ(GoLabelsString(Labels{{"b", "x\"y"}, {"a", "1"}}), "{a=\"1\", b=\"x\\\"y\"}");
  EXPECT_EQ(GoLabelsString(Labels()), "{}");
  // strconv.Quote's escapes, as Prometheus's Labels.String() writes values.
  EXPECT_EQ(GoLabelsString(Labels{{"a", "t\tb\a\x01\r"}}), "{a=\"t\\tb\\a\\x01\\r\"}");
}

}  // namespace
}  // namespace gpumon::rules
