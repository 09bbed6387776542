#include "remote/queue/queue_manager.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "test_receiver.h"

namespace gpumon::remote {
namespace {

namespace fs = std::filesystem;
using testing::TestReceiver;
using testing::WaitFor;

class QueueManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rwqm-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  scrape::RemoteWriteConfig Config(const std::string& url) {
    scrape::RemoteWriteConfig c;
    c.url = url;
    c.name = "test";
    c.remote_timeout_ms = 5000;
    c.queue.min_backoff_ms = 5;
    c.queue.max_backoff_ms = 40;
    c.queue.batch_send_deadline_ms = 20;
    c.queue.max_shards = 1;
    return c;
  }

  std::unique_ptr<QueueManager> MustStart(const scrape::RemoteWriteConfig& c, Labels ext = {}) {
    auto q = QueueManager::Start(c, ext, (dir_ / "q").string());
    EXPECT_TRUE(q.ok()) << q.status().message();
    return q.ok() ? std::move(q).value() : nullptr;
  }

  static std::vector<QueuedSample> Samples(int n, int64_t t, const std::string& name = "m") {
    std::vector<QueuedSample> out;
    for (int i = 0; i < n; ++i) {
      out.push_back({Labels{{"__name__", name}, {"i", std::to_string(i)}}, t, i + 0.5});
    }
    return out;
  }

  fs::path dir_;
};

TEST_F(QueueManagerTest, BatchesUpToMaxSamplesPerSendWithProtocolHeaders) {
  TestReceiver rx;
  auto c = Config(rx.url());
  c.queue.max_samples_per_send = 10;
  c.headers["X-Tenant"] = "team-a";
  c.http.basic_auth_username = "user";
  c.http.basic_auth_password = "pass";
  auto q = MustStart(c);
  ASSERT_TRUE(q->Append(Samples(25, 1000)).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 25; }));
  auto reqs = rx.Requests();
  ASSERT_GE(reqs.size(), 3u);
  std::map<std::string, int> seen;
  for (const auto& r : reqs) {
    EXPECT_TRUE(r.decode_error.empty()) << r.decode_error;
    EXPECT_LE(r.samples(), 10u);
    EXPECT_EQ(r.headers.find("Content-Encoding")->second, "snappy");
    EXPECT_EQ(r.headers.find("Content-Type")->second, "application/x-protobuf");
    EXPECT_EQ(r.headers.find("X-Prometheus-Remote-Write-Version")->second, "0.1.0");
    EXPECT_EQ(r.headers.find("User-Agent")->second.rfind("gpumon/", 0), 0u);
    EXPECT_EQ(r.headers.find("X-Tenant")->second, "team-a");
    // base64("user:pass")
    EXPECT_EQ(r.headers.find("Authorization")->second, "Basic dXNlcjpwYXNz");
    for (const auto& s : r.series) {
      ASSERT_EQ(s.samples.size(), 1u);
      EXPECT_EQ(s.samples[0].t, 1000);
      EXPECT_EQ(s.labels.Get("__name__"), "m");
      EXPECT_EQ(s.samples[0].v, std::stoi(std::string(s.labels.Get("i"))) + 0.5);
      ++seen[std::string(s.labels.Get("i"))];
    }
  }
  EXPECT_EQ(seen.size(), 25u);
  ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_pending == 0; }));
  QueueStats st = q->Stats();
  EXPECT_EQ(st.samples_sent, 25u);
  EXPECT_EQ(st.highest_sent_timestamp_ms, 1000);
  EXPECT_EQ(st.samples_failed, 0u);
}

TEST_F(QueueManagerTest, PartialBatchIsSentAfterDeadline) {
  TestReceiver rx;
  auto c = Config(rx.url());
  c.queue.max_samples_per_send = 1000;
  auto q = MustStart(c);
  ASSERT_TRUE(q->Append(Samples(3, 5)).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 3; }));
  EXPECT_EQ(rx.Requests().size(), 1u);
}

TEST_F(QueueManagerTest, BearerCredentialsFileIsSent) {
  TestReceiver rx;
  auto c = Config(rx.url());
  fs::create_directories(dir_);
  std::ofstream(dir_ / "token") << "s3cret\n";
  c.http.authorization_type = "Bearer";
  c.http.authorization_credentials_file = (dir_ / "token").string();
  auto q = MustStart(c);
  ASSERT_TRUE(q->Append(Samples(1, 5)).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 1; }));
  EXPECT_EQ(rx.Requests()[0].headers.find("Authorization")->second, "Bearer s3cret");
}

TEST_F(QueueManagerTest, ServerErrorsAreRetriedUntilSuccess) {
  TestReceiver rx;
  rx.Script({500, 503, 500});
  auto q = MustStart(Config(rx.url()));
  ASSERT_TRUE(q->Append(Samples(4, 7)).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 4; }));
  auto reqs = rx.Requests();
  ASSERT_EQ(reqs.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(reqs[i].samples(), 4u);  // the same batch again
  EXPECT_EQ(reqs[3].answered, 204);
  ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_pending == 0; }));
  QueueStats st = q->Stats();
  EXPECT_EQ(st.samples_retried, 12u);
  EXPECT_EQ(st.samples_sent, 4u);
  EXPECT_EQ(st.samples_failed, 0u);
  EXPECT_NE(st.last_error.find("500"), std::string::npos) << st.last_error;
}

TEST_F(QueueManagerTest, TooManyRequestsIsRetriedWhenConfigured) {
  TestReceiver rx;
  rx.Script({429});
  auto c = Config(rx.url());
  c.queue.retry_on_http_429 = true;
  auto q = MustStart(c);
  ASSERT_TRUE(q->Append(Samples(2, 7)).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 2; }));
  EXPECT_EQ(q->Stats().samples_retried, 2u);
  EXPECT_EQ(q->Stats().samples_failed, 0u);
}

TEST_F(QueueManagerTest, TooManyRequestsIsDroppedWhenNotRetrying) {
  TestReceiver rx;
  rx.Script({429});
  auto c = Config(rx.url());
  c.queue.retry_on_http_429 = false;
  auto q = MustStart(c);
  ASSERT_TRUE(q->Append(Samples(2, 7)).ok());
  ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_failed == 2; }));
  ASSERT_TRUE(q->Append(Samples(3, 8)).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 3; }));
  EXPECT_EQ(q->Stats().samples_retried, 0u);
  EXPECT_EQ(rx.Requests().size(), 2u);
}

TEST_F(QueueManagerTest, BadRequestDropsBatchAndCarriesOn) {
  TestReceiver rx;
  rx.Script({400});
  auto q = MustStart(Config(rx.url()));
  ASSERT_TRUE(q->Append(Samples(5, 7)).ok());
  ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_failed == 5; }));
  ASSERT_TRUE(q->Append(Samples(2, 9)).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 2; }));
  ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_pending == 0; }));
  QueueStats st = q->Stats();
  EXPECT_EQ(st.samples_sent, 2u);
  EXPECT_EQ(st.samples_retried, 0u);
  EXPECT_NE(st.last_error.find("400"), std::string::npos);
}

TEST_F(QueueManagerTest, ExternalLabelsThenWriteRelabel) {
  TestReceiver rx;
  auto c = Config(rx.url());
  scrape::RelabelConfig drop;
  drop.source_labels = {"__name__"};
  drop.regex = "drop_me";
  drop.action = scrape::RelabelAction::kDrop;
  scrape::RelabelConfig copy;  // sees the external label: it came first
  copy.source_labels = {"cluster"};
  copy.target_label = "copied";
  ASSERT_TRUE(drop.Compile().ok());
  ASSERT_TRUE(copy.Compile().ok());
  c.write_relabel_configs = {drop, copy};
  auto q = MustStart(c, Labels{{"cluster", "ext"}, {"region", "eu"}});
  std::vector<QueuedSample> in = {
      {Labels{{"__name__", "keep"}}, 1, 1},
      {Labels{{"__name__", "own"}, {"cluster", "mine"}}, 1, 2},
      {Labels{{"__name__", "drop_me"}}, 1, 3},
  };
  ASSERT_TRUE(q->Append(in).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == 2; }));
  ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_pending == 0; }));
  std::map<std::string, Labels> got;
  for (const auto& r : rx.Requests()) {
    for (const auto& s : r.series) got[std::string(s.labels.Get("__name__"))] = s.labels;
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(
      got["keep"],
      (Labels{{"__name__", "keep"}, {"cluster", "ext"}, {"copied", "ext"}, {"region", "eu"}}));
  EXPECT_EQ(
      got["own"],
      (Labels{{"__name__", "own"}, {"cluster", "mine"}, {"copied", "mine"}, {"region", "eu"}}));
  EXPECT_EQ(q->Stats().samples_dropped_relabel, 1u);
}

TEST_F(QueueManagerTest, ShardsKeepPerSeriesOrder) {
  TestReceiver rx;
  auto c = Config(rx.url());
  c.queue.min_shards = 4;
  c.queue.max_shards = 8;
  c.queue.max_samples_per_send = 7;
  auto q = MustStart(c);
  const int series = 20, steps = 30;
  for (int t = 0; t < steps; ++t) ASSERT_TRUE(q->Append(Samples(series, t)).ok());
  ASSERT_TRUE(WaitFor([&] { return rx.AcceptedSamples() == series * steps; }));
  std::map<std::string, std::vector<int64_t>> order;
  for (const auto& r : rx.Requests()) {
    for (const auto& s : r.series) {
      for (const auto& smp : s.samples) order[s.labels.ToString()].push_back(smp.t);
    }
  }
  ASSERT_EQ(order.size(), static_cast<size_t>(series));
  for (const auto& [name, ts] : order) {
    ASSERT_EQ(ts.size(), static_cast<size_t>(steps)) << name;
    for (int t = 0; t < steps; ++t) EXPECT_EQ(ts[t], t) << name;
  }
  EXPECT_GE(q->Stats().shards, 4);
}

TEST_F(QueueManagerTest, UndeliveredDataSurvivesRestart) {
  std::string url;
  {
    TestReceiver down;
    down.Script(std::vector<int>(1000, 503));
    auto q = MustStart(Config(down.url()));
    ASSERT_TRUE(q->Append(Samples(6, 11)).ok());
    ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_retried > 0; }));
    q->Stop();
    EXPECT_EQ(q->Stats().samples_pending, 6u);
    EXPECT_EQ(down.AcceptedSamples(), 0u);
  }
  TestReceiver up;
  auto q = MustStart(Config(up.url()));
  ASSERT_TRUE(WaitFor([&] { return up.AcceptedSamples() == 6; }));
  ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_pending == 0; }));
}

TEST_F(QueueManagerTest, ConnectionRefusedIsRetried) {
  // Learn a free port, then close it so nothing listens there.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  auto c = Config("http://127.0.0.1:" + std::to_string(port) + "/api/v1/write");
  auto q = MustStart(c);
  ASSERT_TRUE(q->Append(Samples(2, 1)).ok());
  ASSERT_TRUE(WaitFor([&] { return q->Stats().samples_retried >= 4; }));
  EXPECT_EQ(q->Stats().samples_failed, 0u);
  EXPECT_EQ(q->Stats().samples_pending, 2u);
  EXPECT_FALSE(q->Stats().last_error.empty());
}

}  // namespace
}  // namespace gpumon::remote
