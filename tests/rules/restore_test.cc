// 'for' state restoration after a restart (Prometheus's RestoreForState):
// a first group plays the previous process and writes ALERTS_FOR_STATE,
// a second one, built as on startup, restores from it.
#include <gtest/gtest.h>

#include "rules/alerting_rule.h"
#include "rules/group.h"
#include "test_env.h"
#include "tsdb/sample.h"

namespace gpumon::rules {
namespace {

using testing::kMinute;
using testing::TestEnv;

const Labels kTemp{{"__name__", "gpu_temp"}, {"gpu", "0"}};

std::string Rule(const char* for_) {
  return std::string(
             "groups:\n- name: r\n  rules:\n  - alert: Hot\n    expr: gpu_temp > 80\n"
             "    for: ") +
         for_ + "\n    labels:\n      severity: page\n";
}

class RestoreTest : public ::testing::Test {
 protected:
  TestEnv env;

  // The previous process: evaluates every minute over [from, to] with the
  // condition true.
  void RunBefore(const std::string& yaml, int from, int to) {
    auto before = env.MakeGroup(yaml, /*should_restore=*/false);
    ASSERT_TRUE(before);
    for (int m = from; m <= to; ++m) {
      env.Add(kTemp, m * kMinute - 1, 90);
      before->Eval(m * kMinute);
    }
  }

  // The restarted process: two evaluations (no ALERTS yet), then restore.
  std::shared_ptr<Group> Restart(const std::string& yaml, int first) {
    auto g = env.MakeGroup(yaml, /*should_restore=*/true);
    EXPECT_TRUE(g);
    for (int m = first; m <= first + 1; ++m) {
      env.Add(kTemp, m * kMinute - 1, 90);
      g->Eval(m * kMinute);
    }
    g->RestoreForState((first + 1) * kMinute);
    return g;
  }

  static ActiveAlert Only(const Group& g) {
    auto all = static_cast<const AlertingRule&>(*g.rules()[0]).AllAlerts();
    EXPECT_EQ(all.size(), 1u);
    return all.empty() ? ActiveAlert{} : all[0];
  }
};

TEST_F(RestoreTest, PendingTimeCarriesOverShiftedByTheDowntime) {
  const std::string yaml = Rule("30m");
  RunBefore(yaml, 10, 20);  // active since 10m, down after 20m
  auto g = Restart(yaml, 30);
  // 10m spent pending; 20m remain (>= grace 10m): shift by downtime 31m-20m.
  EXPECT_EQ(Only(*g).active_at_ms, 21 * kMinute);
  auto* rule = static_cast<AlertingRule*>(g->rules()[0].get());
  EXPECT_TRUE(rule->restored());
  // It fires exactly 30m after the restored start.
  for (int m = 32; m <= 51; ++m) {
    env.Add(kTemp, m * kMinute - 1, 90);
    g->Eval(m * kMinute);
    EXPECT_EQ(Only(*g).state, m < 51 ? AlertState::kPending : AlertState::kFiring) << m;
  }
}

TEST_F(RestoreTest, NoAlertsSeriesBeforeRestore) {
  const std::string yaml = Rule("30m");
  auto g = env.MakeGroup(yaml, /*should_restore=*/true);
  ASSERT_TRUE(g);
  env.Add(kTemp, kMinute - 1, 90);
  g->Eval(kMinute);
  EXPECT_TRUE(env.Series("ALERTS").empty());
  EXPECT_TRUE(env.Series("ALERTS_FOR_STATE").empty());
  g->RestoreForState(kMinute);
  env.Add(kTemp, 2 * kMinute - 1, 90);
  g->Eval(2 * kMinute);
  EXPECT_EQ(env.Series("ALERTS").size(), 1u);
}

TEST_F(RestoreTest, LessThanGracePeriodLeftGivesTheGracePeriod) {
  const std::string yaml = Rule("30m");
  RunBefore(yaml, 1, 26);  // active since 1m, 25m spent: 5m (< 10m grace) left
  auto g = Restart(yaml, 40);
  // restored = now + grace - for = 41m + 10m - 30m.
  EXPECT_EQ(Only(*g).active_at_ms, 21 * kMinute);
}

TEST_F(RestoreTest, AlreadyPastForKeepsOriginalStart) {
  const std::string yaml = Rule("15m");
  RunBefore(yaml, 1, 20);  // fired at 16m
  auto g = Restart(yaml, 25);
  EXPECT_EQ(Only(*g).active_at_ms, 1 * kMinute);
  env.Add(kTemp, 27 * kMinute - 1, 90);
  g->Eval(27 * kMinute);
  EXPECT_EQ(Only(*g).state, AlertState::kFiring);
}

TEST_F(RestoreTest, ShortForIsNotRestored) {
  const std::string yaml = Rule("5m");  // below the 10m grace period
  RunBefore(yaml, 1, 3);
  auto g = Restart(yaml, 10);
  EXPECT_EQ(Only(*g).active_at_ms, 10 * kMinute);
}

TEST_F(RestoreTest, OutageLongerThanToleranceIsNotRestored) {
  const std::string yaml = Rule("30m");
  RunBefore(yaml, 1, 5);
  auto g = Restart(yaml, 5 + 61 + 1);  // last state sample more than 1h ago
  EXPECT_EQ(Only(*g).active_at_ms, 67 * kMinute);
}

TEST_F(RestoreTest, StaleStateIsNotRestored) {
  const std::string yaml = Rule("30m");
  RunBefore(yaml, 1, 5);
  // The alert resolved before the restart: its series ends in a stale marker.
  Labels fs{
      {"__name__", "ALERTS_FOR_STATE"}, {"alertname", "Hot"}, {"gpu", "0"}, {"severity", "page"}};
  ASSERT_EQ(env.Samples(fs).size(), 5u);
  env.Add(fs, 6 * kMinute, tsdb::StaleNaN());
  auto g = Restart(yaml, 20);
  EXPECT_EQ(Only(*g).active_at_ms, 20 * kMinute);
}

}  // namespace
}  // namespace gpumon::rules
