// CheckRuleFile: promtool check rules' verdicts, the 2.x field set and the
// duplicate-rule lint.
#include "rules/rule_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpumon::rules {
namespace {

class RuleCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpumon_rule_check_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& text) {
    std::string path = dir_ + "/r" + std::to_string(n_++) + ".yml";
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
  int n_ = 0;
};

TEST_F(RuleCheckTest, CountsRules) {
  RuleCheckResult r = CheckRuleFile(
      Write("groups:\n- name: a\n  rules:\n  - record: x\n    expr: up\n  - alert: A\n    expr: up "
            "== 0\n- name: b\n  rules:\n  - record: y\n    expr: up\n"),
      {});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.rules, 3);
}

TEST_F(RuleCheckTest, ErrorsNameFileLineAndField) {
  std::string path = Write(
      "groups:\n- name: g\n  rules:\n  - record: a\n    expr: sum(\n  - record: b-c\n"
      "    expr: up\n");
  RuleCheckResult r = CheckRuleFile(path, {});
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].rfind(path + ":5:", 0), 0u) << r.errors[0];
  EXPECT_NE(r.errors[0].find("field \"expr\""), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[1].find("field \"record\""), std::string::npos) << r.errors[1];
  EXPECT_EQ(r.rules, 0);
}

TEST_F(RuleCheckTest, Prometheus3FieldsAreErrorsUnlessAllowed) {
  std::string path = Write(
      "groups:\n- name: g\n  query_offset: 1m\n  labels:\n    team: gpu\n  rules:\n"
      "  - record: a\n    expr: up\n");
  RuleCheckResult r = CheckRuleFile(path, {});
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].rfind(path + ":3:3: group \"g\": field \"query_offset\"", 0), 0u)
      << r.errors[0];
  EXPECT_EQ(r.errors[1].rfind(path + ":4:3: group \"g\": field \"labels\"", 0), 0u) << r.errors[1];
  RuleCheckOptions p3;
  p3.prometheus3 = true;
  r = CheckRuleFile(path, p3);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.rules, 1);
}

TEST_F(RuleCheckTest, DuplicateRulesAreALintProblem) {
  // Same name and labels across groups and kinds; different labels differ.
  std::string path = Write(
      "groups:\n- name: g\n  rules:\n  - record: a\n    expr: up\n  - record: a\n    expr: up\n"
      "- name: h\n  rules:\n  - alert: a\n    expr: up\n  - record: a\n    expr: down\n"
      "    labels: {x: y}\n  - record: b\n    expr: up\n    labels: {x: y}\n"
      "  - record: b\n    expr: up\n    labels: {x: y}\n");
  RuleCheckResult r = CheckRuleFile(path, {});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.lint,
            "lint error 2 duplicate rule(s) found.\nMetric: a\nLabel(s):\nMetric: b\nLabel(s):\n"
            "\tx: y\nMight cause inconsistency while recording expressions");
  RuleCheckOptions none;
  none.lint_duplicates = false;
  r = CheckRuleFile(path, none);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.rules, 6);
}

TEST_F(RuleCheckTest, Prometheus3PromqlIsAnErrorUnlessAllowed) {
  std::string path =
      Write("groups:\n- name: g\n  rules:\n  - record: a\n    expr: sort_by_label(up, \"job\")\n");
  RuleCheckResult r = CheckRuleFile(path, {});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].rfind(path + ":4: group \"g\", rule 1 \"a\": field \"expr\"", 0), 0u)
      << r.errors[0];
  EXPECT_NE(r.errors[0].find("sort_by_label"), std::string::npos) << r.errors[0];
  RuleCheckOptions p3;
  p3.prometheus3 = true;
  EXPECT_TRUE(CheckRuleFile(path, p3).ok());
}

TEST_F(RuleCheckTest, Prometheus3OnlyFieldsIgnoresOtherFiles) {
  EXPECT_EQ(Prometheus3OnlyFields("groups:\n- name: g\n  rules: []\n", "f"), "");
  EXPECT_EQ(Prometheus3OnlyFields("not: [valid", "f"), "");
  EXPECT_EQ(Prometheus3OnlyFields("- a\n", "f"), "");
}

}  // namespace
}  // namespace gpumon::rules
