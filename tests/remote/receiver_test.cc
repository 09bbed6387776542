// The /api/v1/write receiver over HTTP into a real in-memory head: status
// codes, header checks, one commit per request, and the counters.
#include "remote/receiver.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <snappy.h>

#include <bit>
#include <chrono>
#include <map>
#include <thread>

#include "remote/write_request.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/matcher.h"

namespace gpumon::remote {
namespace {

constexpr int64_t kBase = 1'700'000'000'000;  // well in the past, never "too far ahead"

std::string Body(std::vector<TimeSeries> series) { return EncodeWriteRequest(series); }

Labels Metric(const std::string& name, const std::string& instance = "a") {
  return Labels{{"__name__", name}, {"instance", instance}};
}

class ReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterRemoteWriteReceiver(
        server_, scrape::HeadAppenderFactory([this] { return head_.Appender(); }), &stats_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }

  httplib::Result Post(const std::string& body, std::string content_type = "application/x-protobuf",
                       std::string encoding = "snappy") {
    httplib::Client c("127.0.0.1", port_);
    httplib::Headers h{{"X-Prometheus-Remote-Write-Version", "0.1.0"}};
    if (!encoding.empty()) h.emplace("Content-Encoding", encoding);
    return c.Post(kRemoteWritePath, h, body, content_type);
  }

  // Every stored sample of series named `name`, by label set.
  std::map<std::string, std::vector<tsdb::Sample>> Read(const std::string& name) {
    std::map<std::string, std::vector<tsdb::Sample>> out;
    auto m = tsdb::Matcher::Make(tsdb::MatchType::kEqual, "__name__", name);
    EXPECT_TRUE(m.ok());
    auto q = head_.Querier(tsdb::kMinTime, tsdb::kMaxTime);
    auto set = q->Select({&m.value(), 1});
    while (set->Next()) {
      auto it = set->Iterator();
      std::vector<tsdb::Sample> samples;
      while (it->Next()) samples.push_back(it->At());
      if (!samples.empty()) out[set->labels().ToString()] = samples;
    }
    return out;
  }

  tsdb::head::Head head_;
  ReceiverStats stats_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(ReceiverTest, StoresEverySampleAndAnswers204) {
  std::vector<TimeSeries> in;
  for (int i = 0; i < 3; ++i) {
    TimeSeries s{Metric("gpu_temp", std::to_string(i)), {}};
    for (int j = 0; j < 100; ++j) s.samples.push_back({kBase + j * 1000, 40.0 + i + j});
    in.push_back(s);
  }
  in[2].samples.back().v = tsdb::StaleNaN();
  auto r = Post(Body(in));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204) << r->body;
  EXPECT_EQ(r->body, "");

  auto got = Read("gpu_temp");
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    auto& samples = got[in[i].labels.ToString()];
    ASSERT_EQ(samples.size(), 100u);
    EXPECT_EQ(samples[5].t, kBase + 5000);
    EXPECT_EQ(samples[5].v, 45.0 + i);
  }
  EXPECT_TRUE(tsdb::IsStaleNaN(got[in[2].labels.ToString()].back().v));
  EXPECT_EQ(stats_.requests.load(), 1u);
  EXPECT_EQ(stats_.samples.load(), 300u);
  EXPECT_EQ(stats_.errors.load(), 0u);
}

TEST_F(ReceiverTest, AcceptsMissingHeadersAsSnappyProtobuf) {
  // httplib's client always sends a Content-Type with a body, so the
  // header-less request goes straight to the handler.
  auto factory = scrape::HeadAppenderFactory([this] { return head_.Appender(); });
  TimeSeries s{Metric("m"), {{kBase, 1}}};
  WriteOutcome out = HandleRemoteWrite("", "", Body({s}), factory, kBase);
  EXPECT_EQ(out.status, 204) << out.message;
  EXPECT_EQ(out.samples, 1u);
  TimeSeries s2{Metric("m"), {{kBase + 1000, 2}}};
  auto r = Post(Body({s2}), "application/x-protobuf; proto=prometheus.WriteRequest", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204) << r->body;
  EXPECT_EQ(Read("m").begin()->second.size(), 2u);
}

TEST_F(ReceiverTest, RejectsOtherEncodingsAndMessageTypes) {
  std::string body = Body({TimeSeries{Metric("m"), {{kBase, 1}}}});
  auto r = Post(body, "application/x-protobuf", "zstd");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);
  EXPECT_NE(r->body.find("zstd encoding"), std::string::npos) << r->body;
  r = Post(body, "application/x-protobuf;proto=io.prometheus.write.v2.Request");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);
  EXPECT_NE(r->body.find("io.prometheus.write.v2.Request"), std::string::npos) << r->body;
  // cpp-httplib inflates a gzip body itself; the header still says gzip.
  httplib::Client gz("127.0.0.1", port_);
  gz.set_compress(true);
  r = gz.Post(kRemoteWritePath, body, "application/x-protobuf");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);
  EXPECT_NE(r->body.find("gzip encoding"), std::string::npos) << r->body;
  r = Post(body, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);
  EXPECT_TRUE(Read("m").empty());
  EXPECT_EQ(stats_.errors.load(), 4u);
}

TEST_F(ReceiverTest, UndecodableBodyIs400WithTheReason) {
  auto r = Post("this is not snappy");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("snappy"), std::string::npos) << r->body;
  EXPECT_EQ(stats_.errors.load(), 1u);
  EXPECT_EQ(stats_.samples.load(), 0u);
}

TEST_F(ReceiverTest, InvalidSeriesFailsTheWholeRequest) {
  // A valid first series must not be stored when a later one is invalid.
  std::string good = std::string("\x0a\x0e\x0a\x08__name__\x12\x02ok", 16);
  std::string sample = std::string("\x12\x0b\x09\x00\x00\x00\x00\x00\x00\xf0\x3f\x10\x01", 13);
  std::string ts1 = good + sample;
  std::string bad_labels = std::string("\x0a\x04\x0a\x00\x12\x00", 6);
  std::string ts2 = bad_labels + sample;
  std::string raw = "\x0a" + std::string(1, char(ts1.size())) + ts1 + "\x0a" +
                    std::string(1, char(ts2.size())) + ts2;
  std::string body;
  snappy::Compress(raw.data(), raw.size(), &body);
  auto r = Post(body);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("timeseries[1]"), std::string::npos) << r->body;
  EXPECT_TRUE(Read("ok").empty());
}

TEST_F(ReceiverTest, OutOfOrderSampleRollsBackTheRequest) {
  auto r = Post(Body({TimeSeries{Metric("a"), {{kBase + 2000, 1}}}}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 204) << r->body;
  // A new series first, then an out-of-order sample for the old one.
  r = Post(Body({TimeSeries{Metric("b"), {{kBase + 1000, 5}}},
                 TimeSeries{Metric("a"), {{kBase + 1000, 2}}}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("out of order sample"), std::string::npos) << r->body;
  EXPECT_TRUE(Read("b").empty());
  auto a = Read("a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a.begin()->second.size(), 1u);
  EXPECT_EQ(stats_.samples.load(), 1u);
  EXPECT_EQ(stats_.errors.load(), 1u);
}

TEST_F(ReceiverTest, DuplicateTimestampWithNewValueIs400SameValueIsAccepted) {
  std::string first = Body({TimeSeries{Metric("a"), {{kBase, 1}}}});
  ASSERT_EQ(Post(first)->status, 204);
  // A retry of the same request (the sender timed out) is harmless.
  auto r = Post(first);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204) << r->body;
  r = Post(Body({TimeSeries{Metric("a"), {{kBase, 2}}}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("duplicate sample for timestamp"), std::string::npos) << r->body;
  EXPECT_EQ(Read("a").begin()->second.at(0).v, 1);
}

TEST_F(ReceiverTest, FarFutureTimestampIs400) {
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  auto r = Post(Body({TimeSeries{Metric("near"), {{now + 60'000, 1}}},
                      TimeSeries{Metric("far"), {{now + 3'600'000, 1}}}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("too far in the future"), std::string::npos) << r->body;
  EXPECT_TRUE(Read("near").empty());
}

TEST_F(ReceiverTest, OnlyPostIsRouted) {
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get(kRemoteWritePath);
  ASSERT_TRUE(r);
  EXPECT_GE(r->status, 400);
  EXPECT_EQ(stats_.requests.load(), 0u);
}

// An appender that fails where the head would not: storage trouble is a
// 500 (the sender retries), and the batch is never half applied.
class BrokenAppender : public scrape::Appender {
 public:
  BrokenAppender(bool fail_append, int* rollbacks)
      : fail_append_(fail_append), rollbacks_(rollbacks) {}
  Status Append(const Labels&, int64_t, double) override {
    return fail_append_ ? Status::Error("write ahead log: no space left on device") : Status::Ok();
  }
  Status Commit() override { return Status::Error("commit: no space left on device"); }
  void Rollback() override { ++*rollbacks_; }

 private:
  bool fail_append_;
  int* rollbacks_;
};

TEST(HandleRemoteWriteTest, StorageFailuresAre500) {
  std::string body = EncodeWriteRequest(std::vector<TimeSeries>{{Metric("m"), {{kBase, 1}}}});
  int rollbacks = 0;
  auto failing_append = [&] { return std::make_unique<BrokenAppender>(true, &rollbacks); };
  WriteOutcome out = HandleRemoteWrite("", "", body, failing_append, kBase);
  EXPECT_EQ(out.status, 500);
  EXPECT_EQ(out.message, "write ahead log: no space left on device");
  EXPECT_EQ(rollbacks, 1);
  auto failing_commit = [&] { return std::make_unique<BrokenAppender>(false, &rollbacks); };
  out = HandleRemoteWrite("", "", body, failing_commit, kBase);
  EXPECT_EQ(out.status, 500);
  EXPECT_EQ(out.samples, 0u);
  EXPECT_NE(out.message.find("commit"), std::string::npos);
}

TEST(HandleRemoteWriteTest, RejectsNativeHistograms) {
  // TimeSeries{labels: {__name__="h"}, histograms: [{}]}
  std::string raw = std::string("\x0a\x11\x0a\x0d\x0a\x08__name__\x12\x01h\x22\x00", 19);
  std::string body;
  snappy::Compress(raw.data(), raw.size(), &body);
  int calls = 0;
  auto factory = [&]() -> std::unique_ptr<scrape::Appender> {
    ++calls;
    return nullptr;
  };
  WriteOutcome out = HandleRemoteWrite("application/x-protobuf", "snappy", body, factory, kBase);
  EXPECT_EQ(out.status, 400);
  EXPECT_EQ(out.message, "timeseries[0]: native histograms are not supported");
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace gpumon::remote
