#include "rules/backtest_recorder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_env.h"

namespace gpumon::rules {
namespace {

using testing::kMinute;
using testing::TestEnv;

const Labels kGpu0{{"__name__", "temp"}, {"gpu", "0"}};
const Labels kGpu1{{"__name__", "temp"}, {"gpu", "1"}};

constexpr const char* kHotRule = R"(groups:
- name: g
  rules:
  - alert: Hot
    expr: temp > 80
    for: 2m
    labels:
      severity: warning
    annotations:
      summary: "gpu {{ $labels.gpu }} at {{ $value }}"
)";

// Feeds one value per GPU per minute, evaluates the group at each minute
// and hands the state to the recorder, as the backtest does.
struct Replay {
  TestEnv env;
  std::shared_ptr<Group> group;
  std::vector<AlertEpisode> episodes;
  BacktestRecorder recorder{[this](const AlertEpisode& e) { episodes.push_back(e); }};

  explicit Replay(const char* yaml = kHotRule) : group(env.MakeGroup(yaml)) {}

  void Minute(int m, double gpu0, double gpu1 = 0) {
    env.Add(kGpu0, m * kMinute - 1, gpu0);
    env.Add(kGpu1, m * kMinute - 1, gpu1);
    group->Eval(m * kMinute);
    recorder.Observe(*group, m * kMinute);
  }
};

TEST(BacktestRecorderTest, PendingFiringResolved) {
  Replay r;
  ASSERT_TRUE(r.group);
  r.Minute(1, 90);
  r.Minute(2, 91);
  EXPECT_TRUE(r.episodes.empty());
  EXPECT_EQ(r.recorder.open_episodes(), 1u);
  r.Minute(3, 92);  // 3m - 1m >= for: fires
  r.Minute(4, 95);
  EXPECT_TRUE(r.episodes.empty());
  r.Minute(5, 70);  // cooled down: resolved
  ASSERT_EQ(r.episodes.size(), 1u);
  const AlertEpisode& e = r.episodes[0];
  EXPECT_EQ(e.alertname, "Hot");
  EXPECT_EQ(e.severity, "warning");
  EXPECT_EQ(e.labels, (Labels{{"alertname", "Hot"}, {"gpu", "0"}, {"severity", "warning"}}));
  EXPECT_EQ(e.pending_at_ms, 1 * kMinute);
  ASSERT_TRUE(e.firing_at_ms.has_value());
  EXPECT_EQ(*e.firing_at_ms, 3 * kMinute);
  ASSERT_TRUE(e.resolved_at_ms.has_value());
  EXPECT_EQ(*e.resolved_at_ms, 5 * kMinute);
  // Annotations as they were when it first fired, not later.
  EXPECT_EQ(e.annotations.Get("summary"), "gpu 0 at 92");
  EXPECT_EQ(r.recorder.open_episodes(), 0u);
  r.recorder.Finish();
  EXPECT_EQ(r.episodes.size(), 1u);
  EXPECT_EQ(r.recorder.stats().episodes, 1u);
  EXPECT_EQ(r.recorder.stats().fired, 1u);
}

TEST(BacktestRecorderTest, AlertThatNeverFiresIsAnEpisodeWithoutFiringTime) {
  Replay r;
  ASSERT_TRUE(r.group);
  r.Minute(1, 90);
  r.Minute(2, 90);
  r.Minute(3, 50);  // dropped while pending
  ASSERT_EQ(r.episodes.size(), 1u);
  const AlertEpisode& e = r.episodes[0];
  EXPECT_EQ(e.pending_at_ms, 1 * kMinute);
  EXPECT_FALSE(e.firing_at_ms.has_value());
  ASSERT_TRUE(e.resolved_at_ms.has_value());
  EXPECT_EQ(*e.resolved_at_ms, 3 * kMinute);
  EXPECT_TRUE(e.annotations.empty());
  EXPECT_EQ(r.recorder.stats().fired, 0u);
}

TEST(BacktestRecorderTest, StillActiveAtTheEndHasNoResolvedTime) {
  Replay r;
  ASSERT_TRUE(r.group);
  for (int m = 1; m <= 4; ++m) r.Minute(m, 90, m >= 3 ? 99 : 10);
  EXPECT_TRUE(r.episodes.empty());
  r.recorder.Finish();
  ASSERT_EQ(r.episodes.size(), 2u);
  // Sorted by labels: gpu 0 (firing) before gpu 1 (still pending).
  EXPECT_EQ(r.episodes[0].labels.Get("gpu"), "0");
  EXPECT_EQ(*r.episodes[0].firing_at_ms, 3 * kMinute);
  EXPECT_FALSE(r.episodes[0].resolved_at_ms.has_value());
  EXPECT_EQ(r.episodes[1].labels.Get("gpu"), "1");
  EXPECT_EQ(r.episodes[1].pending_at_ms, 3 * kMinute);
  EXPECT_FALSE(r.episodes[1].firing_at_ms.has_value());
  EXPECT_FALSE(r.episodes[1].resolved_at_ms.has_value());
  EXPECT_EQ(r.recorder.open_episodes(), 0u);
}

TEST(BacktestRecorderTest, AnAlertThatComesBackIsANewEpisode) {
  Replay r;
  ASSERT_TRUE(r.group);
  r.Minute(1, 90);
  r.Minute(2, 90);
  r.Minute(3, 90);  // fires
  r.Minute(4, 10);  // resolved
  r.Minute(5, 90);  // pending again
  r.Minute(6, 90);
  r.Minute(7, 90);  // fires again
  r.recorder.Finish();
  ASSERT_EQ(r.episodes.size(), 2u);
  EXPECT_EQ(r.episodes[0].pending_at_ms, 1 * kMinute);
  EXPECT_EQ(*r.episodes[0].resolved_at_ms, 4 * kMinute);
  EXPECT_EQ(r.episodes[1].pending_at_ms, 5 * kMinute);
  EXPECT_EQ(*r.episodes[1].firing_at_ms, 7 * kMinute);
  EXPECT_FALSE(r.episodes[1].resolved_at_ms.has_value());
}

TEST(BacktestRecorderTest, ForZeroFiresAtOnceAndKeepFiringForDelaysTheResolution) {
  Replay r(R"(groups:
- name: g
  rules:
  - alert: Now
    expr: temp > 80
    keep_firing_for: 2m
)");
  ASSERT_TRUE(r.group);
  r.Minute(1, 90);
  r.Minute(2, 10);  // still firing (keep_firing_for)
  r.Minute(3, 10);
  EXPECT_TRUE(r.episodes.empty());
  r.Minute(4, 10);  // 2m after it went away: resolved
  ASSERT_EQ(r.episodes.size(), 1u);
  EXPECT_EQ(r.episodes[0].pending_at_ms, 1 * kMinute);
  EXPECT_EQ(*r.episodes[0].firing_at_ms, 1 * kMinute);
  EXPECT_EQ(*r.episodes[0].resolved_at_ms, 4 * kMinute);
  EXPECT_EQ(r.episodes[0].severity, "");
}

TEST(BacktestRecorderTest, EpisodeJson) {
  AlertEpisode e;
  e.alertname = "Hot";
  e.labels = Labels{{"alertname", "Hot"}, {"gpu", "0"}};
  e.severity = "warning";
  e.pending_at_ms = 1700000000000;
  e.firing_at_ms = 1700000060000;
  e.annotations = Labels{{"summary", "say \"hi\"\n"}};
  EXPECT_EQ(EpisodeJson(e),
            R"({"alertname":"Hot","labels":{"alertname":"Hot","gpu":"0"},"severity":"warning",)"
            R"("pending_at_ms":1700000000000,"firing_at_ms":1700000060000,)"
            R"("resolved_at_ms":null,"annotations":{"summary":"say \"hi\"\n"}})");
  e.firing_at_ms.reset();
  e.resolved_at_ms = 5;
  e.annotations = Labels{};
  EXPECT_NE(EpisodeJson(e).find(R"("firing_at_ms":null,"resolved_at_ms":5,"annotations":{})"),
            std::string::npos);
}

}  // namespace
}  // namespace gpumon::rules
