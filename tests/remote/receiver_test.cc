// The /api/v1/write receiver into a real in-memory head, through its route
// and through HandleRemoteWrite: status codes, header checks, encodings and
// their size limits, one commit per request, error classes, and the
// counters.
#include "remote/receiver.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <snappy.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <map>

#include "remote/write_request.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/matcher.h"

namespace gpumon::remote {
namespace {

constexpr int64_t kBase = 1'700'000'000'000;  // well in the past, never "too far ahead"

std::string Body(std::vector<TimeSeries> series) { return EncodeWriteRequest(series); }

// The protobuf of a request, without compression.
std::string Raw(std::vector<TimeSeries> series) {
  std::string body = Body(std::move(series)), raw;
  EXPECT_TRUE(snappy::Uncompress(body.data(), body.size(), &raw));
  return raw;
}

std::string Gzip(std::string_view data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

Labels Metric(const std::string& name, const std::string& instance = "a") {
  return Labels{{"__name__", name}, {"instance", instance}};
}

class ReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterRemoteWriteReceiver(router_, Factory(), &stats_); }

  scrape::AppenderFactory Factory() {
    return scrape::HeadAppenderFactory([this] { return head_.Appender(); });
  }

  // A request through the router, as the server hands it to the handler.
  http::HttpResponse Post(const std::string& body,
                          std::string content_type = "application/x-protobuf",
                          std::string encoding = "snappy") {
    auto match = router_.Find("POST", kRemoteWritePath);
    EXPECT_EQ(match.kind, http::Router::MatchKind::kFound);
    http::HttpRequest req;
    req.method = "POST";
    req.target = req.path = kRemoteWritePath;
    req.headers.Add("X-Prometheus-Remote-Write-Version", "0.1.0");
    if (!content_type.empty()) req.headers.Add("Content-Type", content_type);
    if (!encoding.empty()) req.headers.Add("Content-Encoding", encoding);
    req.body = body;
    http::HttpResponse res;
    if (match.route != nullptr) match.route->handler(req, res);
    return res;
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
  http::Router router_;
};

TEST_F(ReceiverTest, RoutesPostOnlyWithTheRemoteWriteBodyLimit) {
  auto match = router_.Find("POST", kRemoteWritePath);
  ASSERT_EQ(match.kind, http::Router::MatchKind::kFound);
  ASSERT_TRUE(match.route->options.max_body_bytes.has_value());
  EXPECT_EQ(*match.route->options.max_body_bytes, size_t{64} << 20);
  EXPECT_FALSE(match.route->options.run_inline);  // it blocks on the storage
  auto get = router_.Find("GET", kRemoteWritePath);
  EXPECT_EQ(get.kind, http::Router::MatchKind::kMethodNotAllowed);
  EXPECT_EQ(get.allow, "POST");
}

TEST_F(ReceiverTest, StoresEverySampleAndAnswers204) {
  std::vector<TimeSeries> in;
  for (int i = 0; i < 3; ++i) {
    TimeSeries s{Metric("gpu_temp", std::to_string(i)), {}};
    for (int j = 0; j < 100; ++j) s.samples.push_back({kBase + j * 1000, 40.0 + i + j});
    in.push_back(s);
  }
  in[2].samples.back().v = tsdb::StaleNaN();
  auto r = Post(Body(in));
  EXPECT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(r.body, "");

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
  TimeSeries s{Metric("m"), {{kBase, 1}}};
  auto r = Post(Body({s}), "", "");
  EXPECT_EQ(r.status, 204) << r.body;
  TimeSeries s2{Metric("m"), {{kBase + 1000, 2}}};
  r = Post(Body({s2}), "application/x-protobuf; proto=prometheus.WriteRequest", "");
  EXPECT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(Read("m").begin()->second.size(), 2u);
}

TEST_F(ReceiverTest, RejectsOtherEncodingsAndMessageTypes) {
  std::string body = Body({TimeSeries{Metric("m"), {{kBase, 1}}}});
  auto r = Post(body, "application/x-protobuf", "zstd");
  EXPECT_EQ(r.status, 415);
  EXPECT_NE(r.body.find("zstd encoding"), std::string::npos) << r.body;
  r = Post(body, "application/x-protobuf;proto=io.prometheus.write.v2.Request");
  EXPECT_EQ(r.status, 415);
  EXPECT_NE(r.body.find("io.prometheus.write.v2.Request"), std::string::npos) << r.body;
  r = Post(body, "application/json");
  EXPECT_EQ(r.status, 415);
  EXPECT_TRUE(Read("m").empty());
  EXPECT_EQ(stats_.errors.load(), 3u);
}

TEST_F(ReceiverTest, AcceptsGzipOfTheProtobuf) {
  std::string raw = Raw({TimeSeries{Metric("gz"), {{kBase, 1}, {kBase + 1000, 2}}}});
  auto r = Post(Gzip(raw), "application/x-protobuf", "gzip");
  EXPECT_EQ(r.status, 204) << r.body;
  // Two gzip members back to back are one gzip stream (RFC 1952 2.2).
  std::string first = Raw({TimeSeries{Metric("gz"), {{kBase + 2000, 3}}}});
  std::string second = Raw({TimeSeries{Metric("gz", "b"), {{kBase, 3}}}});
  r = Post(Gzip(first) + Gzip(second), "application/x-protobuf", "gzip");
  EXPECT_EQ(r.status, 204) << r.body;
  auto got = Read("gz");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[Metric("gz").ToString()].size(), 3u);
  EXPECT_EQ(got[Metric("gz", "b").ToString()].size(), 1u);
}

TEST_F(ReceiverTest, CorruptOrTruncatedGzipIs400) {
  std::string gz = Gzip(Raw({TimeSeries{Metric("gz"), {{kBase, 1}}}}));
  auto r = Post(gz.substr(0, gz.size() - 6), "application/x-protobuf", "gzip");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("gzip"), std::string::npos) << r.body;
  std::string bad = gz;
  bad[bad.size() / 2] ^= 0x5a;
  r = Post(bad, "application/x-protobuf", "gzip");
  EXPECT_EQ(r.status, 400) << r.body;
  r = Post(gz + "trailing", "application/x-protobuf", "gzip");
  EXPECT_EQ(r.status, 400) << r.body;
  r = Post("not gzip at all", "application/x-protobuf", "gzip");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_TRUE(Read("gz").empty());
}

TEST_F(ReceiverTest, GzipBombStopsAtTheDecodedLimit) {
  // 40 MiB of zeros deflate to ~40 KiB: past the 32 MiB limit, refused
  // while inflating (at most the limit is ever allocated).
  std::string bomb = Gzip(std::string(40u << 20, '\0'));
  ASSERT_LT(bomb.size(), 1u << 20);
  auto r = Post(bomb, "application/x-protobuf", "gzip");
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_NE(r.body.find(std::to_string(kMaxRemoteWriteDecodedBytes)), std::string::npos) << r.body;
  // Exactly at a (smaller) limit is fine; one byte more is not.
  std::string raw = Raw({TimeSeries{Metric("edge"), {{kBase, 1}}}});
  WriteOutcome at = HandleRemoteWrite("", "gzip", Gzip(raw), Factory(), kBase, raw.size());
  EXPECT_EQ(at.status, 204) << at.message;
  WriteOutcome over = HandleRemoteWrite("", "gzip", Gzip(raw), Factory(), kBase, raw.size() - 1);
  EXPECT_EQ(over.status, 413) << over.message;
}

TEST_F(ReceiverTest, SnappyDeclaredLengthIsCheckedBeforeDecoding) {
  // A valid block of 40 MiB of zeros (~2 MiB compressed): its header says
  // 40 MiB, over the limit, so it is refused before the output exists.
  std::string zeros(40u << 20, '\0'), block;
  snappy::Compress(zeros.data(), zeros.size(), &block);
  auto r = Post(block);
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_NE(r.body.find("declared length 41943040"), std::string::npos) << r.body;
  // A header claiming far more than the body can expand to is corrupt.
  std::string liar = std::string("\xff\xff\xff\x7f", 4) + std::string(100, '\0');
  r = Post(liar);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("impossible"), std::string::npos) << r.body;
  // At the limit: accepted.
  std::string body = Body({TimeSeries{Metric("edge"), {{kBase, 1}}}});
  size_t raw_len = 0;
  ASSERT_TRUE(snappy::GetUncompressedLength(body.data(), body.size(), &raw_len));
  EXPECT_EQ(HandleRemoteWrite("", "", body, Factory(), kBase, raw_len).status, 204);
  EXPECT_EQ(HandleRemoteWrite("", "", body, Factory(), kBase, raw_len - 1).status, 413);
}

TEST_F(ReceiverTest, UndecodableBodyIs400WithTheReason) {
  auto r = Post("this is not snappy");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("snappy"), std::string::npos) << r.body;
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
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("timeseries[1]"), std::string::npos) << r.body;
  EXPECT_TRUE(Read("ok").empty());
}

TEST_F(ReceiverTest, OutOfOrderSampleRollsBackTheRequest) {
  auto r = Post(Body({TimeSeries{Metric("a"), {{kBase + 2000, 1}}}}));
  ASSERT_EQ(r.status, 204) << r.body;
  // A new series first, then an out-of-order sample for the old one.
  r = Post(Body({TimeSeries{Metric("b"), {{kBase + 1000, 5}}},
                 TimeSeries{Metric("a"), {{kBase + 1000, 2}}}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("out of order sample"), std::string::npos) << r.body;
  EXPECT_TRUE(Read("b").empty());
  auto a = Read("a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a.begin()->second.size(), 1u);
  EXPECT_EQ(stats_.samples.load(), 1u);
  EXPECT_EQ(stats_.errors.load(), 1u);
}

TEST_F(ReceiverTest, DuplicateTimestampWithNewValueIs400SameValueIsAccepted) {
  std::string first = Body({TimeSeries{Metric("a"), {{kBase, 1}}}});
  ASSERT_EQ(Post(first).status, 204);
  // A retry of the same request (the sender timed out) is harmless.
  auto r = Post(first);
  EXPECT_EQ(r.status, 204) << r.body;
  r = Post(Body({TimeSeries{Metric("a"), {{kBase, 2}}}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("duplicate sample for timestamp"), std::string::npos) << r.body;
  EXPECT_EQ(Read("a").begin()->second.at(0).v, 1);
}

TEST_F(ReceiverTest, SampleAtTheMinimumTimestampIsStoredNotADuplicate) {
  // The varint of INT64_MIN on the wire: a sample there, value 0 or not.
  const int64_t min = std::numeric_limits<int64_t>::min();
  auto r = Post(Body({TimeSeries{Metric("early", "zero"), {{min, 0.0}}},
                      TimeSeries{Metric("early", "one"), {{min, 1.0}}}}));
  EXPECT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(stats_.samples.load(), 2u);
  auto got = Read("early");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[Metric("early", "zero").ToString()].at(0).t, min);
  EXPECT_EQ(got[Metric("early", "one").ToString()].at(0).v, 1.0);
  // Now a real duplicate.
  r = Post(Body({TimeSeries{Metric("early", "one"), {{min, 2.0}}}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("duplicate sample"), std::string::npos) << r.body;
}

TEST_F(ReceiverTest, TooManyLabelsIs400NotARetry) {
  std::vector<Label> many;
  for (int i = 0; i < 70'000; ++i) many.push_back({"l" + std::to_string(i), "v"});
  many.push_back({"__name__", "wide"});
  auto r = Post(Body({TimeSeries{Labels::FromUnsorted(std::move(many)), {{kBase, 1}}}}));
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 300);
  EXPECT_NE(r.body.find("too many labels"), std::string::npos) << r.body.substr(0, 300);
  EXPECT_LT(r.body.size(), 1000u);  // the message does not echo the label set
  EXPECT_EQ(head_.health().failures(tsdb::AppendFailure::kTooManyLabels), 1u);
}

TEST_F(ReceiverTest, FarFutureTimestampIs400) {
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  auto r = Post(Body({TimeSeries{Metric("near"), {{now + 60'000, 1}}},
                      TimeSeries{Metric("far"), {{now + 3'600'000, 1}}}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("too far in the future"), std::string::npos) << r.body;
  EXPECT_TRUE(Read("near").empty());
}

size_t HeapInUse() { return mallinfo2().uordblks; }

// Measures the heap each time the receiver appends (every 1,000th call).
class PeakAppender : public scrape::Appender {
 public:
  PeakAppender(std::unique_ptr<scrape::Appender> inner, size_t* peak)
      : inner_(std::move(inner)), peak_(peak) {}
  Status Append(const Labels& l, int64_t t, double v) override { return inner_->Append(l, t, v); }
  Result<uint64_t> AppendRef(uint64_t ref, const Labels& l, int64_t t, double v) override {
    if (++calls_ % 1000 == 0) *peak_ = std::max(*peak_, HeapInUse());
    return inner_->AppendRef(ref, l, t, v);
  }
  Status Commit() override {
    *peak_ = std::max(*peak_, HeapInUse());
    return inner_->Commit();
  }
  void Rollback() override { inner_->Rollback(); }

 private:
  std::unique_ptr<scrape::Appender> inner_;
  size_t* peak_;
  uint64_t calls_ = 0;
};

TEST_F(ReceiverTest, RepeatedSeriesCostNoMemoryPerRepeat) {
  // One label set sent 300,000 times with the same sample: ~9 MB of
  // protobuf. Decoded into a list first, that would be ~300,000 label sets
  // (tens of MB); streamed, it is one series and one buffered sample.
  const Labels lset{{"__name__", "repeated"}, {"instance", "a"}, {"job", "j"}};
  std::string one = Raw({TimeSeries{lset, {{kBase, 1}}}});
  std::string raw;
  constexpr int kRepeats = 300'000;
  raw.reserve(one.size() * kRepeats);
  for (int i = 0; i < kRepeats; ++i) raw += one;
  std::string body;
  snappy::Compress(raw.data(), raw.size(), &body);
  const size_t decoded = raw.size();
  std::string().swap(raw);

  size_t peak = 0;
  auto factory = [&]() -> std::unique_ptr<scrape::Appender> {
    return std::make_unique<PeakAppender>(Factory()(), &peak);
  };
  const size_t before = HeapInUse();
  WriteOutcome out = HandleRemoteWrite("", "", body, factory, kBase);
  ASSERT_EQ(out.status, 204) << out.message;
  EXPECT_EQ(out.samples, static_cast<uint64_t>(kRepeats));  // each accepted (repeats ignored)
  auto got = Read("repeated");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.begin()->second.size(), 1u);
  if (before > 0) {  // mallinfo2 reports nothing under some sanitizers
    EXPECT_LT(peak - before, decoded + (4u << 20))
        << "decoded " << decoded << " bytes, heap grew " << (peak - before);
  }
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
  Status Commit() override {
    return Status::Error(
        "commit: logging samples to the WAL: wal: write failed on x: No space left on device");
  }
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
  EXPECT_NE(out.message.find("No space left on device"), std::string::npos);
}

TEST(HandleRemoteWriteTest, AFullDiskIs500AndTheHeadRecordsIt) {
  // The real head behind a WAL that is out of space.
  class FullSink : public tsdb::head::WalSink {
   public:
    Status LogSeries(std::span<const tsdb::head::RefSeries>) override { return Full(); }
    Status LogSamples(std::span<const tsdb::head::RefSample>) override { return Full(); }
    static Status Full() {
      return Status::Error("wal: write failed on s: No space left on device");
    }
  } sink;
  tsdb::head::Head head;
  head.SetWalSink(&sink);
  auto factory = scrape::HeadAppenderFactory([&head] { return head.Appender(); });
  std::string body = EncodeWriteRequest(std::vector<TimeSeries>{{Metric("m"), {{kBase, 1}}}});
  WriteOutcome out = HandleRemoteWrite("", "", body, factory, kBase);
  EXPECT_EQ(out.status, 500);
  EXPECT_NE(out.message.find("No space left on device"), std::string::npos) << out.message;
  EXPECT_FALSE(head.health().writable());
  EXPECT_EQ(head.health().failures(tsdb::AppendFailure::kDiskFull), 1u);
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

TEST(HandleRemoteWriteTest, EmptyRequestIs204WithoutAnAppender) {
  int calls = 0;
  auto factory = [&]() -> std::unique_ptr<scrape::Appender> {
    ++calls;
    return nullptr;
  };
  WriteOutcome out = HandleRemoteWrite("", "", EncodeWriteRequest({}), factory, kBase);
  EXPECT_EQ(out.status, 204) << out.message;
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace gpumon::remote
