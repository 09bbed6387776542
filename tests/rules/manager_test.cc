// RuleManager end to end over an in-memory head: loading, reloading with
// state carried over, bad files keeping the old rules, and the real
// schedule writing recorded series.
#include "rules/manager.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "rules/alerting_rule.h"
#include "test_env.h"
#include "tsdb/sample.h"

namespace gpumon::rules {
namespace {

using testing::kMinute;
using testing::TestEnv;

class ManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpumon_rules_mgr_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    RuleManagerOptions o;
    o.engine = &env_.engine;
    o.queryable = env_.deps.queryable;
    o.appender = env_.deps.appender;
    o.notify = [this](const std::vector<Alert>& a) {
      sent_.insert(sent_.end(), a.begin(), a.end());
    };
    o.external_url = "http://gpumon:9090";
    manager_ = std::make_unique<RuleManager>(std::move(o));
  }
  void TearDown() override {
    manager_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string Write(const std::string& name, const std::string& yaml) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << yaml;
    return p;
  }
  std::shared_ptr<Group> Find(const std::string& name) {
    for (auto& g : manager_->Groups()) {
      if (g->name() == name) return g;
    }
    return nullptr;
  }

  TestEnv env_;
  std::string dir_;
  std::vector<Alert> sent_;
  std::unique_ptr<RuleManager> manager_;
};

const Labels kTemp{{"__name__", "gpu_temp"}, {"gpu", "0"}};

constexpr const char* kAlerts = R"(groups:
- name: alerts
  rules:
  - alert: Hot
    expr: gpu_temp > 80
    for: 1m
)";
constexpr const char* kRecords = R"(groups:
- name: records
  interval: 30s
  rules:
  - record: gpu_temp:max
    expr: max(gpu_temp)
)";

TEST_F(ManagerTest, LoadsGroupsSortedWithIntervals) {
  std::string a = Write("a.yml", kAlerts);
  std::string b = Write("b.yml", kRecords);
  ASSERT_TRUE(manager_->Update(kMinute, {dir_ + "/*.yml"}, Labels{}).ok());
  auto groups = manager_->Groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]->file(), a);
  EXPECT_EQ(groups[0]->interval_ms(), kMinute);  // the global default
  EXPECT_EQ(groups[1]->file(), b);
  EXPECT_EQ(groups[1]->interval_ms(), 30000);
}

TEST_F(ManagerTest, BadFileKeepsPreviousGroups) {
  std::string a = Write("a.yml", kAlerts);
  ASSERT_TRUE(manager_->Update(kMinute, {a}, Labels{}).ok());
  auto before = manager_->Groups();
  Write("a.yml", "groups:\n- name: alerts\n  rules:\n  - alert: Hot\n    expr: sum(\n");
  Status st = manager_->Update(kMinute, {a}, Labels{});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(a + ":5:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("field \"expr\""), std::string::npos) << st.message();
  EXPECT_EQ(manager_->Groups(), before);
}

TEST_F(ManagerTest, ReloadKeepsStateOfUnchangedAndChangedGroups) {
  std::string a = Write("a.yml", kAlerts);
  ASSERT_TRUE(manager_->Update(kMinute, {a}, Labels{}).ok());
  auto g = Find("alerts");
  ASSERT_TRUE(g);
  // The first load restores state: pretend the restore ran.
  g->RestoreForState(0);
  for (int m = 1; m <= 3; ++m) {
    env_.Add(kTemp, m * kMinute - 1, 90);
    g->Eval(m * kMinute);
  }
  auto state = [](const Group& grp) {
    auto all = static_cast<const AlertingRule&>(*grp.rules()[0]).AllAlerts();
    return all.empty() ? AlertState::kInactive : all[0].state;
  };
  ASSERT_EQ(state(*g), AlertState::kFiring);

  // Same content: the very same group keeps running.
  ASSERT_TRUE(manager_->Update(kMinute, {a}, Labels{}).ok());
  EXPECT_EQ(Find("alerts"), g);

  // A new rule in the group: a new group object, the alert state carried.
  Write("a.yml", std::string(kAlerts) + "  - record: extra\n    expr: vector(1)\n");
  ASSERT_TRUE(manager_->Update(kMinute, {a}, Labels{}).ok());
  auto g2 = Find("alerts");
  ASSERT_TRUE(g2);
  EXPECT_NE(g2, g);
  EXPECT_EQ(state(*g2), AlertState::kFiring);
  auto* rule = static_cast<AlertingRule*>(g2->rules()[0].get());
  EXPECT_EQ(rule->AllAlerts()[0].active_at_ms, kMinute);
  // Rules of a reload are not restored from storage again: ALERTS at once.
  EXPECT_TRUE(rule->restored());
}

TEST_F(ManagerTest, RemovedRuleSeriesGoStale) {
  std::string b = Write("b.yml", std::string(kRecords) + "  - record: gone\n    expr: vector(7)\n");
  ASSERT_TRUE(manager_->Update(kMinute, {b}, Labels{}).ok());
  env_.Add(kTemp, 0, 70);
  Find("records")->Eval(kMinute);
  Labels gone{{"__name__", "gone"}};
  ASSERT_EQ(env_.Samples(gone).size(), 1u);
  Write("b.yml", kRecords);
  ASSERT_TRUE(manager_->Update(kMinute, {b}, Labels{}).ok());
  Find("records")->Eval(2 * kMinute);
  auto s = env_.Samples(gone);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(tsdb::IsStaleNaN(s[1].v));
  EXPECT_EQ(s[1].t, 2 * kMinute);
}

TEST_F(ManagerTest, RemovedGroupSeriesGoStale) {
  std::string b = Write("b.yml", kRecords);
  ASSERT_TRUE(manager_->Update(kMinute, {b}, Labels{}).ok());
  env_.Add(kTemp, 0, 70);
  Find("records")->Eval(kMinute);
  ASSERT_TRUE(manager_->Update(kMinute, {}, Labels{}).ok());
  EXPECT_TRUE(manager_->Groups().empty());
  auto s = env_.Samples(Labels{{"__name__", "gpu_temp:max"}});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(tsdb::IsStaleNaN(s[1].v));
}

TEST_F(ManagerTest, ScheduledEvaluationRecordsAndNotifies) {
  // Real clock and threads: samples near now, a short interval, and a wait
  // for the outcome (bounded generously; no timing is asserted).
  auto now = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  env_.Add(kTemp, now(), 90);
  std::string f = Write("live.yml", R"(groups:
- name: live
  interval: 50ms
  rules:
  - record: gpu_temp:max
    expr: max(gpu_temp)
  - alert: Hot
    expr: gpu_temp > 80
)");
  ASSERT_TRUE(manager_->Update(kMinute, {f}, Labels{{"cluster", "c1"}}).ok());
  manager_->Start();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool recorded = false;
  while (std::chrono::steady_clock::now() < deadline) {
    recorded = !env_.Samples(Labels{{"__name__", "gpu_temp:max"}}).empty() &&
               !env_.Series("ALERTS").empty();
    if (recorded) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  manager_->Stop();
  ASSERT_TRUE(recorded);
  EXPECT_EQ(env_.Samples(Labels{{"__name__", "gpu_temp:max"}})[0].v, 90);
  ASSERT_FALSE(sent_.empty());
  EXPECT_EQ(sent_[0].labels.Get("alertname"), "Hot");
  EXPECT_GE(sent_[0].ends_at_ms, sent_[0].starts_at_ms + 4 * kMinute);
}

}  // namespace
}  // namespace gpumon::rules
