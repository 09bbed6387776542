#include "rules/group.h"

#include <gtest/gtest.h>

#include <cmath>

#include "rules/alerting_rule.h"
#include "test_env.h"
#include "tsdb/sample.h"

namespace gpumon::rules {
namespace {

using testing::kMinute;
using testing::TestEnv;

const Labels kGpu0{{"__name__", "gpu_util"}, {"gpu", "0"}, {"job", "node"}};
const Labels kGpu1{{"__name__", "gpu_util"}, {"gpu", "1"}, {"job", "node"}};

TEST(GroupRecordingTest, RecordsResultUnderNewNameWithRuleLabels) {
  TestEnv env;
  env.Add(kGpu0, 0, 10);
  env.Add(kGpu1, 0, 30);
  auto g = env.MakeGroup(R"(groups:
- name: rec
  rules:
  - record: job:gpu_util:avg
    expr: avg by (job) (gpu_util)
    labels:
      source: rules
)");
  ASSERT_TRUE(g);
  g->Eval(kMinute);
  Labels want{{"__name__", "job:gpu_util:avg"}, {"job", "node"}, {"source", "rules"}};
  auto s = env.Samples(want);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].t, kMinute);
  EXPECT_EQ(s[0].v, 20);
  RuleStatus st = g->rules()[0]->status();
  EXPECT_EQ(st.health, RuleHealth::kGood);
  EXPECT_TRUE(st.last_error.empty());
  EXPECT_NE(st.last_evaluation_ms, kNoTime);
  EXPECT_NE(g->last_evaluation_ms(), kNoTime);
}

TEST(GroupRecordingTest, ScalarResultBecomesUnlabelledSample) {
  TestEnv env;
  auto g = env.MakeGroup("groups:\n- name: s\n  rules:\n  - record: answer\n    expr: 6 * 7\n");
  ASSERT_TRUE(g);
  g->Eval(kMinute);
  auto s = env.Samples(Labels{{"__name__", "answer"}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].v, 42);
}

TEST(GroupRecordingTest, DisappearedSeriesGetStaleMarkers) {
  TestEnv env;
  env.Add(kGpu0, 0, 10);
  env.Add(kGpu1, 0, 30);
  auto g =
      env.MakeGroup("groups:\n- name: st\n  rules:\n  - record: busy\n    expr: gpu_util > 20\n");
  ASSERT_TRUE(g);
  g->Eval(kMinute);
  env.Add(kGpu1, kMinute + 1, 5);  // gpu 1 calms down
  g->Eval(2 * kMinute);
  Labels busy1{{"__name__", "busy"}, {"gpu", "1"}, {"job", "node"}};
  auto s = env.Samples(busy1);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].v, 30);
  EXPECT_EQ(s[1].t, 2 * kMinute);
  EXPECT_TRUE(tsdb::IsStaleNaN(s[1].v));
  // A third evaluation does not mark it again.
  g->Eval(3 * kMinute);
  EXPECT_EQ(env.Samples(busy1).size(), 2u);
}

TEST(GroupRecordingTest, DuplicateLabelSetsFailTheRule) {
  TestEnv env;
  env.Add(kGpu0, 0, 10);
  env.Add(kGpu1, 0, 30);
  auto g = env.MakeGroup(R"(groups:
- name: dup
  rules:
  - record: flat
    expr: gpu_util
    labels:
      gpu: ""
  - record: ok_after
    expr: vector(1)
)");
  ASSERT_TRUE(g);
  g->Eval(kMinute);
  RuleStatus st = g->rules()[0]->status();
  EXPECT_EQ(st.health, RuleHealth::kBad);
  EXPECT_NE(st.last_error.find("same labelset"), std::string::npos) << st.last_error;
  EXPECT_TRUE(env.Series("flat").empty());
  // The next rule still runs.
  EXPECT_EQ(g->rules()[1]->status().health, RuleHealth::kGood);
  EXPECT_EQ(env.Series("ok_after").size(), 1u);
}

TEST(GroupRecordingTest, QueryErrorMarksRuleUnhealthy) {
  TestEnv env;
  env.Add(kGpu0, 0, 10);
  env.Add(kGpu1, 0, 30);
  auto g = env.MakeGroup(
      "groups:\n- name: e\n  rules:\n  - record: bad\n    expr: gpu_util + on() gpu_util\n");
  ASSERT_TRUE(g);
  g->Eval(kMinute);
  RuleStatus st = g->rules()[0]->status();
  EXPECT_EQ(st.health, RuleHealth::kBad);
  EXPECT_FALSE(st.last_error.empty());
}

TEST(GroupRecordingTest, LimitExceededFailsTheRule) {
  TestEnv env;
  env.Add(kGpu0, 0, 10);
  env.Add(kGpu1, 0, 30);
  auto g = env.MakeGroup(
      "groups:\n- name: l\n  limit: 1\n  rules:\n  - record: r\n    expr: gpu_util\n");
  ASSERT_TRUE(g);
  g->Eval(kMinute);
  EXPECT_EQ(g->rules()[0]->status().last_error, "exceeded limit of 1 with 2 series");
}

TEST(GroupRecordingTest, QueryOffsetShiftsQueryAndSampleTime) {
  TestEnv env;
  env.Add(kGpu0, 0, 5);
  env.Add(kGpu0, 2 * kMinute - 1, 7);
  auto g = env.MakeGroup(
      "groups:\n- name: o\n  query_offset: 1m\n  rules:\n  - record: r\n    expr: gpu_util\n");
  ASSERT_TRUE(g);
  g->Eval(2 * kMinute);
  auto s = env.Samples(Labels{{"__name__", "r"}, {"gpu", "0"}, {"job", "node"}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].t, kMinute);  // evaluated as of ts - offset
  EXPECT_EQ(s[0].v, 5);
}

TEST(GroupTest, EvalTimestampIsAlignedAndStable) {
  TestEnv env;
  auto g = env.MakeGroup("groups:\n- name: a\n  rules: []\n");
  ASSERT_TRUE(g);
  int64_t now = 1'700'000'123'456;
  int64_t t = g->EvalTimestamp(now);
  EXPECT_LE(t, now);
  EXPECT_GT(t, now - kMinute);
  // Same phase for any time: consecutive slots are exactly one interval apart.
  EXPECT_EQ(g->EvalTimestamp(t + kMinute), t + kMinute);
  EXPECT_EQ(g->EvalTimestamp(t + kMinute - 1), t);
}

// ---------------------------------------------------------------- alerts

constexpr const char* kHotRule = R"(groups:
- name: alerts
  rules:
  - alert: GpuHot
    expr: gpu_temp > 80
    for: 2m
    labels:
      severity: page
      where: "{{ $labels.gpu }}"
    annotations:
      summary: "GPU {{ $labels.gpu }} at {{ $value }}C"
)";

const Labels kTemp0{{"__name__", "gpu_temp"}, {"gpu", "0"}};

class AlertStateTest : public ::testing::Test {
 protected:
  TestEnv env;
  std::shared_ptr<Group> g;
  AlertingRule* rule = nullptr;

  void Init(const char* yaml) {
    g = env.MakeGroup(yaml);
    ASSERT_TRUE(g);
    rule = static_cast<AlertingRule*>(g->rules()[0].get());
  }
  // Temperature sample just before the evaluation at `minute`, then evaluate.
  void Step(int minute, double temp) {
    env.Add(kTemp0, minute * kMinute - 1, temp);
    g->Eval(minute * kMinute);
  }
  AlertState StateOfOnly() {
    auto all = rule->AllAlerts();
    EXPECT_EQ(all.size(), 1u);
    return all.empty() ? AlertState::kInactive : all[0].state;
  }
};

TEST_F(AlertStateTest, PendingFiringResolvedWithNotifications) {
  Init(kHotRule);
  Step(1, 90);
  EXPECT_EQ(StateOfOnly(), AlertState::kPending);
  EXPECT_TRUE(env.notifications.empty());  // pending alerts are not sent
  auto a = rule->AllAlerts()[0];
  EXPECT_EQ(a.active_at_ms, kMinute);
  EXPECT_EQ(a.labels,
            (Labels{{"alertname", "GpuHot"}, {"gpu", "0"}, {"severity", "page"}, {"where", "0"}}));
  EXPECT_EQ(a.annotations.Get("summary"), "GPU 0 at 90C");

  Step(2, 91);
  EXPECT_EQ(StateOfOnly(), AlertState::kPending);
  EXPECT_TRUE(env.notifications.empty());

  Step(3, 92);  // 2m since active: fires
  EXPECT_EQ(StateOfOnly(), AlertState::kFiring);
  ASSERT_EQ(env.notifications.size(), 1u);
  ASSERT_EQ(env.notifications[0].size(), 1u);
  const Alert& n = env.notifications[0][0];
  EXPECT_EQ(n.starts_at_ms, 3 * kMinute);
  EXPECT_EQ(n.ends_at_ms, 3 * kMinute + 4 * kMinute);  // 4 * max(interval, resend delay)
  EXPECT_EQ(n.annotations.Get("summary"), "GPU 0 at 92C");
  EXPECT_EQ(n.generator_url, "http://gpumon:9090/graph?g0.expr=gpu_temp+%3E+80&g0.tab=1");

  Step(4, 93);  // sent 1m ago: not yet due (resend when last + 1m < now)
  EXPECT_EQ(env.notifications.size(), 1u);
  Step(5, 93);
  ASSERT_EQ(env.notifications.size(), 2u);
  EXPECT_EQ(env.notifications[1][0].starts_at_ms, 3 * kMinute);
  EXPECT_EQ(env.notifications[1][0].ends_at_ms, 9 * kMinute);

  Step(6, 50);  // condition gone: resolved and sent with endsAt = resolve time
  EXPECT_EQ(StateOfOnly(), AlertState::kInactive);
  EXPECT_EQ(rule->State(), AlertState::kInactive);
  EXPECT_TRUE(rule->ActiveAlerts().empty());
  ASSERT_EQ(env.notifications.size(), 3u);
  EXPECT_EQ(env.notifications[2][0].ends_at_ms, 6 * kMinute);
  EXPECT_EQ(env.notifications[2][0].starts_at_ms, 3 * kMinute);

  // Kept 15 minutes for resending, then forgotten.
  for (int m = 7; m <= 21; ++m) Step(m, 50);
  EXPECT_EQ(rule->AllAlerts().size(), 1u);
  Step(22, 50);
  EXPECT_TRUE(rule->AllAlerts().empty());
}

TEST_F(AlertStateTest, AlertsSeriesFollowTheState) {
  Init(kHotRule);
  Step(1, 90);
  Step(2, 90);
  Step(3, 90);
  Step(4, 50);
  Labels base{{"alertname", "GpuHot"}, {"gpu", "0"}, {"severity", "page"}, {"where", "0"}};
  auto with = [&](std::vector<Label> extra) {
    std::vector<Label> ls(base.begin(), base.end());
    ls.insert(ls.end(), extra.begin(), extra.end());
    return Labels::FromUnsorted(ls);
  };
  auto pending = env.Samples(with({{"__name__", "ALERTS"}, {"alertstate", "pending"}}));
  ASSERT_EQ(pending.size(), 3u);  // 1m, 2m, then stale at 3m
  EXPECT_EQ(pending[0].v, 1);
  EXPECT_EQ(pending[1].t, 2 * kMinute);
  EXPECT_TRUE(tsdb::IsStaleNaN(pending[2].v));
  auto firing = env.Samples(with({{"__name__", "ALERTS"}, {"alertstate", "firing"}}));
  ASSERT_EQ(firing.size(), 2u);  // 3m, then stale at 4m
  EXPECT_EQ(firing[0].t, 3 * kMinute);
  EXPECT_TRUE(tsdb::IsStaleNaN(firing[1].v));
  auto for_state = env.Samples(with({{"__name__", "ALERTS_FOR_STATE"}}));
  ASSERT_EQ(for_state.size(), 4u);
  EXPECT_EQ(for_state[0].v, 60);  // active since 60 s
  EXPECT_EQ(for_state[2].v, 60);
  EXPECT_TRUE(tsdb::IsStaleNaN(for_state[3].v));
}

TEST_F(AlertStateTest, PendingAlertThatDisappearsIsDropped) {
  Init(kHotRule);
  Step(1, 90);
  Step(2, 50);
  EXPECT_TRUE(rule->AllAlerts().empty());
  EXPECT_TRUE(env.notifications.empty());
  // Coming back starts the `for` clock again.
  Step(3, 90);
  EXPECT_EQ(rule->AllAlerts()[0].active_at_ms, 3 * kMinute);
}

TEST_F(AlertStateTest, ForZeroFiresImmediately) {
  Init("groups:\n- name: a\n  rules:\n  - alert: Now\n    expr: gpu_temp > 80\n");
  Step(1, 90);
  EXPECT_EQ(StateOfOnly(), AlertState::kFiring);
  ASSERT_EQ(env.notifications.size(), 1u);
  EXPECT_EQ(env.notifications[0][0].starts_at_ms, kMinute);
}

TEST_F(AlertStateTest, KeepFiringFor) {
  Init(R"(groups:
- name: k
  rules:
  - alert: Flappy
    expr: gpu_temp > 80
    keep_firing_for: 2m
)");
  Step(1, 90);
  EXPECT_EQ(StateOfOnly(), AlertState::kFiring);
  Step(2, 50);  // gone, but keeps firing for 2m from now
  EXPECT_EQ(StateOfOnly(), AlertState::kFiring);
  EXPECT_EQ(rule->AllAlerts()[0].keep_firing_since_ms, 2 * kMinute);
  Step(3, 50);
  EXPECT_EQ(StateOfOnly(), AlertState::kFiring);
  Step(4, 50);  // 2m reached
  EXPECT_EQ(StateOfOnly(), AlertState::kInactive);
  EXPECT_EQ(rule->AllAlerts()[0].resolved_at_ms, 4 * kMinute);
}

TEST_F(AlertStateTest, KeepFiringResetsWhenConditionReturns) {
  Init(R"(groups:
- name: k
  rules:
  - alert: Flappy
    expr: gpu_temp > 80
    keep_firing_for: 2m
)");
  Step(1, 90);
  Step(2, 50);
  Step(3, 90);
  EXPECT_EQ(rule->AllAlerts()[0].keep_firing_since_ms, kNoTime);
  Step(4, 50);
  Step(5, 50);
  EXPECT_EQ(StateOfOnly(), AlertState::kFiring);
}

TEST_F(AlertStateTest, ExternalLabelsInTemplates) {
  g = env.MakeGroup(R"(groups:
- name: x
  rules:
  - alert: A
    expr: gpu_temp > 80
    annotations:
      where: "{{ $externalLabels.cluster }}/{{ .Labels.gpu }}: {{ .Value | humanize }}"
)",
                    false, Labels{{"cluster", "west"}});
  ASSERT_TRUE(g);
  rule = static_cast<AlertingRule*>(g->rules()[0].get());
  Step(1, 1234.5);
  EXPECT_EQ(rule->AllAlerts()[0].annotations.Get("where"), "west/0: 1.234k");
}

TEST_F(AlertStateTest, TemplateExecutionErrorIsReportedInTheText) {
  Init(R"(groups:
- name: x
  rules:
  - alert: A
    expr: gpu_temp > 80
    annotations:
      cmp: "{{ if gt $value 80 }}hot{{ end }}"
)");
  Step(1, 90);
  std::string v(rule->AllAlerts()[0].annotations.Get("cmp"));
  EXPECT_EQ(v.rfind("<error expanding template: ", 0), 0u) << v;
}

TEST_F(AlertStateTest, LimitDropsAllAlerts) {
  Init(R"(groups:
- name: l
  limit: 1
  rules:
  - alert: A
    expr: gpu_temp > 80
)");
  env.Add(Labels{{"__name__", "gpu_temp"}, {"gpu", "1"}}, kMinute - 1, 95);
  Step(1, 90);
  EXPECT_TRUE(rule->AllAlerts().empty());
  EXPECT_EQ(rule->status().last_error, "exceeded limit of 1 with 2 alerts");
  EXPECT_EQ(rule->status().health, RuleHealth::kBad);
}

TEST_F(AlertStateTest, DuplicateAlertLabelsAreAnError) {
  Init(R"(groups:
- name: d
  rules:
  - alert: A
    expr: gpu_temp > 0
    labels:
      gpu: same
)");
  env.Add(Labels{{"__name__", "gpu_temp"}, {"gpu", "1"}}, kMinute - 1, 95);
  Step(1, 90);
  EXPECT_NE(rule->status().last_error.find("same labelset after applying alert labels"),
            std::string::npos);
}

}  // namespace
}  // namespace gpumon::rules
