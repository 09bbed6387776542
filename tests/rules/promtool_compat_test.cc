// Every case is checked with the real promtool (2.42) and with our loader:
// both must accept or both must reject. Skipped when promtool is absent.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "rules/alerting_rule.h"
#include "rules/rule_file.h"
#include "rules/template.h"
#include "test_env.h"

namespace gpumon::rules {
namespace {

struct Case {
  const char* name;
  const char* yaml;
  bool valid;  // what promtool says (and what the test verifies it says)
};

const Case kCases[] = {
    {"recording",
     "groups:\n- name: g\n  rules:\n  - record: job:up:sum\n    expr: sum by (job) (up)\n", true},
    {"alerting_full",
     "groups:\n- name: g\n  interval: 30s\n  limit: 10\n  rules:\n  - alert: Hot\n    expr: t > 1\n"
     "    for: 5m\n    keep_firing_for: 1m\n    labels:\n      severity: page\n    annotations:\n"
     "      summary: '{{ $labels.instance }} at {{ $value | humanize }}'\n",
     true},
    {"empty_file", "", true},
    {"empty_groups", "groups: []\n", true},
    {"unknown_top_level", "groups: []\nfoo: bar\n", false},
    {"unknown_group_field", "groups:\n- name: g\n  foo: 1\n  rules: []\n", false},
    {"unknown_rule_field",
     "groups:\n- name: g\n  rules:\n  - record: a\n    expr: up\n    exprs: up\n", false},
    {"missing_group_name", "groups:\n- rules:\n  - record: a\n    expr: up\n", false},
    {"duplicate_group", "groups:\n- name: g\n  rules: []\n- name: g\n  rules: []\n", false},
    {"record_and_alert",
     "groups:\n- name: g\n  rules:\n  - record: a\n    alert: b\n    expr: up\n", false},
    {"neither_record_nor_alert", "groups:\n- name: g\n  rules:\n  - expr: up\n", false},
    {"missing_expr", "groups:\n- name: g\n  rules:\n  - record: a\n", false},
    {"bad_expr", "groups:\n- name: g\n  rules:\n  - record: a\n    expr: sum(up\n", false},
    {"bad_record_name", "groups:\n- name: g\n  rules:\n  - record: my-metric\n    expr: up\n",
     false},
    {"record_with_for", "groups:\n- name: g\n  rules:\n  - record: a\n    expr: up\n    for: 5m\n",
     false},
    {"record_with_annotations",
     "groups:\n- name: g\n  rules:\n  - record: a\n    expr: up\n    annotations:\n      x: y\n",
     false},
    {"record_with_keep_firing_for",
     "groups:\n- name: g\n  rules:\n  - record: a\n    expr: up\n    keep_firing_for: 5m\n", false},
    {"bad_label_name",
     "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels:\n      foo-bar: x\n",
     false},
    {"name_label",
     "groups:\n- name: g\n  rules:\n  - record: a\n    expr: up\n    labels:\n      __name__: x\n",
     false},
    {"bad_annotation_name",
     "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    annotations:\n      a.b: x\n",
     false},
    {"for_without_unit", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: 5\n",
     false},
    {"for_zero", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: 0\n", true},
    {"bad_interval", "groups:\n- name: g\n  interval: 1x\n  rules: []\n", false},
    {"limit_not_int", "groups:\n- name: g\n  limit: abc\n  rules: []\n", false},
    {"template_unclosed",
     "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    annotations:\n      s: '{{ "
     ".Labels.x'\n",
     false},
    {"template_unknown_function",
     "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    annotations:\n      s: '{{ "
     "nosuchfn . }}'\n",
     false},
    {"template_undefined_variable",
     "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels:\n      s: '{{ $nosuch "
     "}}'\n",
     false},
    {"template_if_else",
     "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    annotations:\n"
     "      s: '{{ if gt $value 1.0 }}{{ $value | printf \"%.2f\" }}{{ else }}low{{ end }}'\n",
     true},
    {"labels_as_list",
     "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: [a, b]\n", false},
    {"duplicate_rule_key",
     "groups:\n- name: g\n  rules:\n  - record: a\n    expr: up\n    expr: up\n", false},
    {"rules_not_a_list", "groups:\n- name: g\n  rules: abc\n", false},
    {"numeric_expr", "groups:\n- name: g\n  rules:\n  - record: a\n    expr: 1\n", true},
    {"not_yaml_mapping", "- a\n- b\n", false},
    {"invalid_yaml", "groups:\n- name: g\n  rules: [\n", false},
};

// Prometheus 3.x group fields that promtool 2.42 does not know: we accept
// them, promtool rejects them.
const Case kExtensions[] = {
    {"query_offset", "groups:\n- name: g\n  query_offset: 1m\n  rules: []\n", true},
    {"group_labels", "groups:\n- name: g\n  labels:\n    team: a\n  rules: []\n", true},
};

const char* Promtool() {
  static const char* kPaths[] = {"/usr/bin/promtool", "/usr/local/bin/promtool"};
  for (const char* p : kPaths) {
    if (access(p, X_OK) == 0) return p;
  }
  return nullptr;
}

// Exit status of `promtool check rules <file>`.
int RunPromtool(const std::string& file) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(Promtool(), "promtool", "check", "rules", file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class PromtoolCompatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Promtool() == nullptr) GTEST_SKIP() << "promtool not installed";
    char tmpl[] = "/tmp/gpumon_rules_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string Write(const Case& c) {
    std::string path = dir_ + "/" + c.name + ".yml";
    std::ofstream(path) << c.yaml;
    return path;
  }
  std::string dir_;
};

TEST_F(PromtoolCompatTest, SameAnswerAsPromtool) {
  for (const Case& c : kCases) {
    std::string path = Write(c);
    int rc = RunPromtool(path);
    ASSERT_TRUE(rc == 0 || rc == 1) << c.name << ": promtool exit " << rc;
    bool promtool_ok = rc == 0;
    auto ours = LoadRuleFile(path);
    EXPECT_EQ(promtool_ok, c.valid) << c.name << ": the table disagrees with promtool";
    EXPECT_EQ(ours.ok(), promtool_ok)
        << c.name << ": promtool " << (promtool_ok ? "accepts" : "rejects") << ", we "
        << (ours.ok() ? "accept" : "reject: " + ours.status().message());
    if (!ours.ok()) {
      EXPECT_NE(ours.status().message().find(path), std::string::npos)
          << c.name << ": error does not name the file: " << ours.status().message();
    }
  }
}

TEST_F(PromtoolCompatTest, Prometheus3GroupFieldsAreKnownDivergences) {
  for (const Case& c : kExtensions) {
    std::string path = Write(c);
    EXPECT_EQ(RunPromtool(path), 1) << c.name << ": promtool 2.42 was expected to reject it";
    auto ours = LoadRuleFile(path);
    EXPECT_TRUE(ours.ok()) << c.name << ": " << ours.status().message();
  }
}

}  // namespace
}  // namespace gpumon::rules

namespace gpumon::rules {
namespace {

// Alert templates expanded by our engine must equal what Prometheus
// expands: our output becomes the expected annotations of a
// `promtool test rules` unit test, which fails on any difference.
const char* kTemplates[] = {
    "{{ $value }}",
    "{{ humanize $value }}",
    "{{ humanize1024 $value }}",
    "{{ humanizeDuration $value }}",
    "{{ humanizePercentage $value }}",
    "{{ humanizeTimestamp $value }}",
    "{{ printf \"%.2f\" $value }}",
    "{{ printf \"%5.1f|%-4s|%d|%s\" $value \"x\" 42 $labels.gpu }}",
    "{{ $labels.instance | toUpper }} {{ toLower \"ABC\" }} {{ title \"gpu node down\" }}",
    "{{ reReplaceAll \":.*\" \"\" $labels.instance }}",
    "{{ reReplaceAll \"(?P<host>[a-z]+)(\\\\d+)\" \"${2}-$host\" $labels.instance }}",
    "{{ if gt $value 100.0 }}big{{ else if lt $value 0.0 }}negative{{ else }}small{{ end }}",
    "{{ with $labels.gpu }}gpu{{ . }}{{ end }}{{ with $labels.nope }}x{{ else }}-{{ end }}",
    "{{ .Labels.gpu }}/{{ .Value }}/{{ $externalLabels.cluster }}/{{ .ExternalLabels.cluster }}",
    "{{ range $k, $v := $labels }}{{ $k }}={{ $v }};{{ end }}",
    "  {{- $x := humanize $value -}}  [{{ $x }}] {{/* comment */}}",
    "{{ if and (eq $labels.gpu \"1\") (ne $value 0.0) }}one{{ end }}{{ len $labels }}",
    "{{ printf \"%v %g %e\" $value $value $value }}",
};
const char* kValues[] = {"1234567", "0.000123", "90061", "0.1234", "1435065584.128",
                         "-3661.5", "2048",     "0",     "1e-9"};

std::string SingleQuoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

TEST(PromtoolTemplateTest, ExpansionsMatchPrometheus) {
  if (Promtool() == nullptr) GTEST_SKIP() << "promtool not installed";
  char tmpl[] = "/tmp/gpumon_rules_tmpl_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::string rules = "groups:\n- name: t\n  rules:\n  - alert: T\n    expr: m\n    annotations:\n";
  std::vector<Template> parsed;
  for (size_t i = 0; i < std::size(kTemplates); ++i) {
    rules += "      a" + std::to_string(i) + ": " + SingleQuoted(kTemplates[i]) + "\n";
    auto t = Template::Parse(kTemplates[i]);
    ASSERT_TRUE(t.ok()) << kTemplates[i] << ": " << t.status().message();
    parsed.push_back(std::move(t).value());
  }
  std::ofstream(dir + "/rules.yml") << rules;

  std::string test =
      "rule_files: [rules.yml]\nevaluation_interval: 1m\ntests:\n- interval: 1m\n"
      "  external_labels:\n    cluster: west\n  input_series:\n";
  std::string expected;
  for (size_t s = 0; s < std::size(kValues); ++s) {
    std::string gpu = std::to_string(s);
    std::string instance = "node" + gpu + ":9100";
    test += "  - series: 'm{gpu=\"" + gpu + "\",instance=\"" + instance + "\"}'\n    values: '" +
            kValues[s] + "x3'\n";
    TemplateData d;
    d.labels = Labels{{"__name__", "m"}, {"gpu", gpu}, {"instance", instance}};
    d.external_labels = Labels{{"cluster", "west"}};
    d.value = std::strtod(kValues[s], nullptr);
    expected += "      - exp_labels:\n          gpu: '" + gpu + "'\n          instance: '" +
                instance + "'\n        exp_annotations:\n";
    for (size_t i = 0; i < parsed.size(); ++i) {
      auto out = parsed[i].Execute(d);
      ASSERT_TRUE(out.ok()) << kTemplates[i] << ": " << out.status().message();
      expected += "          a" + std::to_string(i) + ": " + SingleQuoted(out.value()) + "\n";
    }
  }
  test += "  alert_rule_test:\n  - eval_time: 1m\n    alertname: T\n    exp_alerts:\n" + expected;
  std::ofstream(dir + "/test.yml") << test;

  std::string cmd = std::string(Promtool()) + " test rules " + dir + "/test.yml 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), p)) output.append(buf, n);
  int rc = pclose(p);
  EXPECT_EQ(rc, 0) << output;
  if (getenv("KEEP"))
    printf("%s\n", dir.c_str());
  else
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumon::rules

namespace gpumon::rules {
namespace {

// The alert state machine (for, keep_firing_for) must fire the same alerts
// at the same times as Prometheus: our firing alerts at every evaluation
// become the expectations of a `promtool test rules` unit test.
TEST(PromtoolStateTest, FiringTimelineMatchesPrometheus) {
  if (Promtool() == nullptr) GTEST_SKIP() << "promtool not installed";
  const std::string rules = R"(groups:
- name: t
  rules:
  - alert: ForTwo
    expr: t > 80
    for: 2m
  - alert: KeepTwo
    expr: t > 80
    keep_firing_for: 2m
  - alert: ForOneKeepOne
    expr: t > 80
    for: 1m
    keep_firing_for: 1m
    labels:
      severity: '{{ if gt $value 95.0 }}page{{ else }}ticket{{ end }}'
)";
  const double kSeries[][14] = {
      {0, 90, 90, 90, 0, 90, 90, 99, 90, 0, 0, 90, 0, 0},
      {90, 0, 90, 0, 90, 90, 0, 0, 0, 99, 99, 99, 99, 0},
  };
  testing::TestEnv env;
  auto g = env.MakeGroup(rules);
  ASSERT_TRUE(g);
  std::string input, tests;
  for (size_t s = 0; s < std::size(kSeries); ++s) {
    std::string values;
    for (size_t m = 0; m < std::size(kSeries[s]); ++m) {
      values += (m ? " " : "") + std::to_string(static_cast<int>(kSeries[s][m]));
    }
    input += "  - series: 't{gpu=\"" + std::to_string(s) + "\"}'\n    values: '" + values + "'\n";
  }
  for (size_t m = 0; m < std::size(kSeries[0]); ++m) {
    for (size_t s = 0; s < std::size(kSeries); ++s) {
      env.Add(Labels{{"__name__", "t"}, {"gpu", std::to_string(s)}},
              static_cast<int64_t>(m) * testing::kMinute, kSeries[s][m]);
    }
    g->Eval(static_cast<int64_t>(m) * testing::kMinute);
    for (const auto& r : g->rules()) {
      const auto& ar = static_cast<const AlertingRule&>(*r);
      tests += "  - eval_time: " + std::to_string(m) + "m\n    alertname: " + ar.name() +
               "\n    exp_alerts:\n";
      for (const auto& a : ar.ActiveAlerts()) {
        if (a.state != AlertState::kFiring) continue;
        tests += "    - exp_labels:\n";
        for (const auto& l : a.labels) {
          tests += "        " + l.name + ": '" + l.value + "'\n";
        }
      }
    }
  }
  char tmpl[] = "/tmp/gpumon_rules_state_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::ofstream(dir + "/rules.yml") << rules;
  std::ofstream(dir + "/test.yml") << "rule_files: [rules.yml]\nevaluation_interval: 1m\n"
                                      "tests:\n- interval: 1m\n  input_series:\n"
                                   << input << "  alert_rule_test:\n"
                                   << tests;
  std::string cmd = std::string(Promtool()) + " test rules " + dir + "/test.yml 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), p)) output.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << output;
  // Sanity: the timeline does exercise firing.
  EXPECT_NE(tests.find("exp_labels"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumon::rules
