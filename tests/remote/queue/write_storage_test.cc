#include "remote/queue/write_storage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "test_receiver.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::remote {
namespace {

namespace fs = std::filesystem;
using testing::TestReceiver;
using testing::WaitFor;

// The server's own storage stand-in: records committed samples, and can
// be told to reject a metric or fail commits.
class InnerStore {
 public:
  scrape::AppenderFactory Factory() {
    return [this]() -> std::unique_ptr<scrape::Appender> { return std::make_unique<App>(this); };
  }
  size_t committed() {
    std::lock_guard<std::mutex> lock(mu_);
    return committed_;
  }
  std::string reject_metric;
  bool fail_commit = false;

 private:
  class App : public scrape::Appender {
   public:
    explicit App(InnerStore* s) : s_(s) {}
    Status Append(const Labels& l, int64_t, double) override {
      if (l.Get("__name__") == s_->reject_metric) return Status::Error("out of order sample");
      ++pending_;
      return Status::Ok();
    }
    Status Commit() override {
      if (s_->fail_commit) return Status::Error("disk full");
      std::lock_guard<std::mutex> lock(s_->mu_);
      s_->committed_ += pending_;
      pending_ = 0;
      return Status::Ok();
    }
    void Rollback() override { pending_ = 0; }

   private:
    InnerStore* s_;
    size_t pending_ = 0;
  };
  std::mutex mu_;
  size_t committed_ = 0;
};

class WriteStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rwws-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static scrape::RemoteWriteConfig Config(const std::string& url, const std::string& name) {
    scrape::RemoteWriteConfig c;
    c.url = url;
    c.name = name;
    c.queue.batch_send_deadline_ms = 20;
    c.queue.min_backoff_ms = 5;
    c.queue.max_backoff_ms = 20;
    return c;
  }

  static void Commit(scrape::AppenderFactory& f, const std::string& metric, int n, int64_t t) {
    auto app = f();
    for (int i = 0; i < n; ++i) {
      (void)app->Append(Labels{{"__name__", metric}, {"i", std::to_string(i)}}, t, i);
    }
    (void)app->Commit();
  }

  fs::path dir_;
};

TEST_F(WriteStorageTest, CommittedSamplesReachEveryQueue) {
  TestReceiver a, b;
  InnerStore inner;
  WriteStorage ws(dir_.string());
  ASSERT_TRUE(
      ws.ApplyConfig({Config(a.url(), "a"), Config(b.url(), "b")}, Labels{{"replica", "1"}}).ok());
  auto f = ws.Wrap(inner.Factory());
  Commit(f, "up", 5, 1000);
  EXPECT_EQ(inner.committed(), 5u);
  ASSERT_TRUE(WaitFor([&] { return a.AcceptedSamples() == 5 && b.AcceptedSamples() == 5; }));
  for (const auto& r : a.Requests()) {
    for (const auto& s : r.series) EXPECT_EQ(s.labels.Get("replica"), "1");
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "a"));
  EXPECT_TRUE(fs::is_directory(dir_ / "b"));
  auto stats = ws.Stats();
  ASSERT_EQ(stats.size(), 2u);
  ASSERT_TRUE(WaitFor([&] {
    auto s = ws.Stats();
    return s[0].samples_sent == 5 && s[1].samples_sent == 5;
  }));
}

TEST_F(WriteStorageTest, OnlyAcceptedAndCommittedSamplesAreQueued) {
  TestReceiver rx;
  InnerStore inner;
  inner.reject_metric = "rejected";
  WriteStorage ws(dir_.string());
  ASSERT_TRUE(ws.ApplyConfig({Config(rx.url(), "rx")}, {}).ok());
  auto f = ws.Wrap(inner.Factory());
  {
    auto app = f();
    ASSERT_TRUE(app->Append(Labels{{"__name__", "ok"}}, 1, 1).ok());
    EXPECT_FALSE(app->Append(Labels{{"__name__", "rejected"}}, 1, 1).ok());
    ASSERT_TRUE(app->Commit().ok());
  }
  {
    auto app = f();
    ASSERT_TRUE(app->Append(Labels{{"__name__", "rolled_back"}}, 1, 1).ok());
    app->Rollback();
  }
  inner.fail_commit = true;
  {
    auto app = f();
    ASSERT_TRUE(app->Append(Labels{{"__name__", "failed_commit"}}, 1, 1).ok());
    EXPECT_FALSE(app->Commit().ok());
  }
  inner.fail_commit = false;
  Commit(f, "last", 1, 2);
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() >= 2; }));
  ASSERT_TRUE(WaitFor([&] { return ws.Stats()[0].samples_pending == 0; }));
  std::vector<std::string> names;
  for (const auto& r : rx.Requests()) {
    for (const auto& s : r.series) names.emplace_back(s.labels.Get("__name__"));
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"last", "ok"}));
}

TEST_F(WriteStorageTest, ReloadKeepsUnchangedQueuesAndRemovesDropped) {
  TestReceiver rx;
  InnerStore inner;
  WriteStorage ws(dir_.string());
  auto keep = Config(rx.url(), "keep");
  auto change = Config(rx.url(), "change");
  auto gone = Config(rx.url(), "gone");
  ASSERT_TRUE(ws.ApplyConfig({keep, change, gone}, {}).ok());
  auto f = ws.Wrap(inner.Factory());
  Commit(f, "m", 4, 1);
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& s : ws.Stats()) {
      if (s.samples_sent != 4) return false;
    }
    return true;
  }));
  change.headers["X-Scope-OrgID"] = "t1";
  ASSERT_TRUE(ws.ApplyConfig({keep, change}, {}).ok());
  std::map<std::string, QueueStats> by_name;
  for (auto& s : ws.Stats()) by_name[s.name] = s;
  ASSERT_EQ(by_name.size(), 2u);
  EXPECT_EQ(by_name["keep"].samples_sent, 4u);    // same queue, counters go on
  EXPECT_EQ(by_name["change"].samples_sent, 0u);  // restarted
  EXPECT_FALSE(fs::exists(dir_ / "gone"));
  EXPECT_TRUE(fs::exists(dir_ / "change"));
  Commit(f, "n", 1, 2);
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& r : rx.Requests()) {
      for (const auto& [k, v] : r.headers) {
        if (k == "X-Scope-OrgID" && v == "t1") return true;
      }
    }
    return false;
  }));
}

TEST_F(WriteStorageTest, InvalidConfigsAreRejectedWithoutChanges) {
  TestReceiver rx;
  WriteStorage ws(dir_.string());
  ASSERT_TRUE(ws.ApplyConfig({Config(rx.url(), "a")}, {}).ok());

  Status dup = ws.ApplyConfig({Config(rx.url(), "x"), Config(rx.url(), "x")}, {});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.message().find("remote_write[1]"), std::string::npos) << dup.message();

  auto reserved = Config(rx.url(), "r");
  reserved.headers["Content-Type"] = "text/plain";
  Status res = ws.ApplyConfig({reserved}, {});
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.message().find("reserved header"), std::string::npos) << res.message();

  Status url = ws.ApplyConfig({Config("localhost:9090/write", "u")}, {});
  ASSERT_FALSE(url.ok());
  EXPECT_NE(url.message().find("url"), std::string::npos) << url.message();

  auto bad_rule = Config(rx.url(), "b");
  scrape::RelabelConfig r;
  r.regex = "(";
  bad_rule.write_relabel_configs = {r};
  Status rule = ws.ApplyConfig({bad_rule}, {});
  ASSERT_FALSE(rule.ok());
  EXPECT_NE(rule.message().find("write_relabel_configs[0]"), std::string::npos) << rule.message();

  auto stats = ws.Stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].name, "a");
}

TEST_F(WriteStorageTest, UnnamedConfigsGetStableDistinctNames) {
  TestReceiver rx;
  auto a = Config(rx.url(), "");
  auto b = Config(rx.url() + "?x=1", "");
  EXPECT_EQ(RemoteWriteQueueName(a), RemoteWriteQueueName(a));
  EXPECT_NE(RemoteWriteQueueName(a), RemoteWriteQueueName(b));
  EXPECT_EQ(RemoteWriteQueueName(Config(rx.url(), "we/ird")), "we_ird");
  WriteStorage ws(dir_.string());
  ASSERT_TRUE(ws.ApplyConfig({a, b}, {}).ok());
  EXPECT_TRUE(fs::is_directory(dir_ / RemoteWriteQueueName(a)));
  EXPECT_FALSE(ws.ApplyConfig({a, a}, {}).ok());  // identical unnamed entries
}

// The scrape loop's fast path: after the first sample it passes only the
// ref. The TSDB must still get every sample and the queue every label.
TEST_F(WriteStorageTest, RefOnlyAppendsReachTsdbAndQueueWithLabels) {
  TestReceiver rx;
  tsdb::head::Head head;
  WriteStorage ws(dir_.string());
  ASSERT_TRUE(ws.ApplyConfig({Config(rx.url(), "rx")}, {}).ok());
  auto f = ws.Wrap(scrape::HeadAppenderFactory([&] { return head.Appender(); }));
  const Labels series{{"__name__", "gpu_temp"}, {"gpu", "0"}};
  uint64_t ref = 0;
  for (int64_t t = 1; t <= 3; ++t) {
    auto app = f();
    auto r = app->AppendRef(ref, ref == 0 ? series : Labels(), t * 1000, t * 10.0);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_NE(*r, 0u);
    if (ref != 0) {
      EXPECT_EQ(*r, ref);
    }
    ref = *r;
    ASSERT_TRUE(app->Commit().ok());
  }
  {
    auto app = f();
    EXPECT_FALSE(app->AppendRef(ref + (1u << 20), Labels(), 5000, 1).ok());
  }
  EXPECT_EQ(head.NumSeries(), 1u);
  EXPECT_EQ(head.SamplesAppended(), 3u);
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 3; }));
  std::vector<int64_t> ts;
  for (const auto& r : rx.Requests()) {
    for (const auto& s : r.series) {
      EXPECT_EQ(s.labels, series);
      for (const auto& smp : s.samples) {
        ts.push_back(smp.t);
        EXPECT_EQ(smp.v, smp.t / 100.0);
      }
    }
  }
  EXPECT_EQ(ts, (std::vector<int64_t>{1000, 2000, 3000}));
}

// With no remote_write configured the storage's refs pass straight
// through; enabling remote write later keeps every sample stored, and a
// caller holding an old ref is asked once for labels, after which its
// samples are queued too.
TEST_F(WriteStorageTest, PassesRefsThroughUntilRemoteWriteIsEnabled) {
  TestReceiver rx;
  tsdb::head::Head head;
  WriteStorage ws(dir_.string());
  ASSERT_TRUE(ws.ApplyConfig({}, {}).ok());
  auto f = ws.Wrap(scrape::HeadAppenderFactory([&] { return head.Appender(); }));
  const Labels series{{"__name__", "gpu_temp"}, {"gpu", "0"}};
  uint64_t ref = 0;
  for (int64_t t = 1; t <= 2; ++t) {
    auto app = f();
    auto r = app->AppendRef(ref, ref == 0 ? series : Labels(), t * 1000, t * 10.0);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ref = *r;
    ASSERT_TRUE(app->Commit().ok());
  }
  ASSERT_TRUE(ws.ApplyConfig({Config(rx.url(), "rx")}, {}).ok());
  {
    auto app = f();
    auto r = app->AppendRef(ref, Labels(), 3000, 30.0);
    EXPECT_FALSE(r.ok()) << "an old ref needs labels once";
    ASSERT_TRUE(app->Commit().ok());
  }
  {
    auto app = f();
    auto r = app->AppendRef(0, series, 4000, 40.0);
    ASSERT_TRUE(r.ok()) << r.status().message();
    auto again = app->AppendRef(*r, Labels(), 4000, 40.0);  // same sample again: accepted
    ASSERT_TRUE(again.ok()) << again.status().message();
    ASSERT_TRUE(app->Commit().ok());
  }
  EXPECT_EQ(head.NumSeries(), 1u);
  EXPECT_EQ(head.SamplesAppended(), 4u) << "every sample is stored locally";
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() >= 1; }));
  std::vector<int64_t> ts;
  for (const auto& r : rx.Requests()) {
    for (const auto& s : r.series) {
      EXPECT_EQ(s.labels, series);
      for (const auto& smp : s.samples) ts.push_back(smp.t);
    }
  }
  EXPECT_EQ(ts.front(), 4000) << "queued from the first sample with labels on";
}

TEST_F(WriteStorageTest, BacklogSurvivesStopAndRestart) {
  InnerStore inner;
  {
    TestReceiver down;
    down.Script(std::vector<int>(10000, 503));
    WriteStorage ws(dir_.string());
    ASSERT_TRUE(ws.ApplyConfig({Config(down.url(), "q")}, {}).ok());
    auto f = ws.Wrap(inner.Factory());
    for (int t = 0; t < 10; ++t) Commit(f, "m", 3, t);
    ASSERT_TRUE(WaitFor([&] { return ws.Stats()[0].samples_retried > 0; }));
    ws.Stop();
    Commit(f, "after_stop", 1, 99);  // only reaches inner
  }
  EXPECT_EQ(inner.committed(), 31u);
  TestReceiver up;
  WriteStorage ws(dir_.string());
  ASSERT_TRUE(ws.ApplyConfig({Config(up.url(), "q")}, {}).ok());
  ASSERT_TRUE(WaitFor([&] { return ws.Stats()[0].samples_pending == 0; }));
  std::map<std::string, std::vector<int64_t>> got;
  for (const auto& r : up.Requests()) {
    for (const auto& s : r.series) {
      for (const auto& smp : s.samples) got[s.labels.ToString()].push_back(smp.t);
    }
  }
  ASSERT_EQ(got.size(), 3u);
  for (const auto& [name, ts] : got) {
    EXPECT_EQ(ts, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})) << name;
  }
}

}  // namespace
}  // namespace gpumon::remote
