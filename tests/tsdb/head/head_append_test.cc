// Appender semantics: visibility, validation errors, commit/rollback, the
// out-of-order window and the WAL sink.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "head_test_util.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::tsdb::head {
namespace {

using testing::AppendOk;
using testing::M;
using testing::ReadAll;
using testing::SameSamples;

const Labels kUp{{"__name__", "up"}, {"job", "x"}};

std::vector<Sample> SamplesOf(const Head& head, const Labels& l) {
  std::vector<Matcher> ms;
  for (const auto& lab : l) ms.push_back(M(MatchType::kEqual, lab.name, lab.value));
  auto got = ReadAll(head, ms);
  for (auto& s : got) {
    if (s.labels == l) return s.samples;
  }
  return {};
}

TEST(HeadAppendTest, SamplesAreInvisibleUntilCommit) {
  Head head;
  auto app = head.Appender();
  AppendOk(app.get(), kUp, 1000, 1);
  AppendOk(app.get(), kUp, 2000, 2);
  EXPECT_EQ(app->NumPending(), 2u);
  EXPECT_TRUE(SamplesOf(head, kUp).empty());
  EXPECT_EQ(head.MaxTime(), kMinTime);
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_EQ(app->NumPending(), 0u);
  EXPECT_TRUE(SameSamples(SamplesOf(head, kUp), {{1000, 1}, {2000, 2}}));
  EXPECT_EQ(head.MinTime(), 1000);
  EXPECT_EQ(head.MaxTime(), 2000);
  EXPECT_EQ(head.NumSeries(), 1u);
}

TEST(HeadAppendTest, RollbackDiscardsAndAppenderIsReusable) {
  Head head;
  auto app = head.Appender();
  AppendOk(app.get(), kUp, 1000, 1);
  app->Rollback();
  ASSERT_TRUE(app->Commit().ok());  // nothing left to commit
  EXPECT_TRUE(SamplesOf(head, kUp).empty());
  AppendOk(app.get(), kUp, 500, 5);  // earlier than the rolled-back sample
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_TRUE(SameSamples(SamplesOf(head, kUp), {{500, 5}}));
}

TEST(HeadAppendTest, DestroyingAnAppenderRollsBack) {
  Head head;
  {
    auto app = head.Appender();
    AppendOk(app.get(), kUp, 1000, 1);
  }
  EXPECT_TRUE(SamplesOf(head, kUp).empty());
}

TEST(HeadAppendTest, RefsAreStableAndSkipTheLookup) {
  Head head;
  auto app = head.Appender();
  auto r1 = app->Append(0, kUp, 1000, 1);
  ASSERT_TRUE(r1.ok());
  Labels other{{"__name__", "up"}, {"job", "y"}};
  auto r2 = app->Append(0, other, 1000, 1);
  ASSERT_TRUE(r2.ok());
  EXPECT_NE(*r1, *r2);
  EXPECT_GT(*r2, *r1);  // monotonically assigned
  ASSERT_TRUE(app->Commit().ok());
  // Re-append by ref with empty labels: the ref alone identifies the series.
  auto r3 = app->Append(*r1, Labels{}, 2000, 3);
  ASSERT_TRUE(r3.ok()) << r3.status().message();
  EXPECT_EQ(*r3, *r1);
  // Labels lookup finds the same series.
  auto r4 = app->Append(0, kUp, 3000, 4);
  ASSERT_TRUE(r4.ok());
  EXPECT_EQ(*r4, *r1);
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_TRUE(SameSamples(SamplesOf(head, kUp), {{1000, 1}, {2000, 3}, {3000, 4}}));
  EXPECT_EQ(head.NumSeries(), 2u);
}

TEST(HeadAppendTest, OutOfOrderIsRejectedWithSeriesAndTimestamps) {
  Head head;
  auto app = head.Appender();
  AppendOk(app.get(), kUp, 2000, 1);
  ASSERT_TRUE(app->Commit().ok());
  auto r = app->Append(0, kUp, 1000, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "out of order sample: series up{job=\"x\"}: timestamp 1000 <= last 2000");
  // Within one batch too.
  AppendOk(app.get(), kUp, 5000, 1);
  auto r2 = app->Append(0, kUp, 4000, 1);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("timestamp 4000 <= last 5000"), std::string::npos);
  // The rejected sample does not spoil the batch.
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_TRUE(SameSamples(SamplesOf(head, kUp), {{2000, 1}, {5000, 1}}));
}

TEST(HeadAppendTest, DuplicateTimestampSameValueIgnoredOtherValueRejected) {
  Head head;
  auto app = head.Appender();
  AppendOk(app.get(), kUp, 1000, 1.5);
  ASSERT_TRUE(app->Commit().ok());
  auto same = app->Append(0, kUp, 1000, 1.5);
  EXPECT_TRUE(same.ok());
  EXPECT_EQ(app->NumPending(), 0u);
  auto other = app->Append(0, kUp, 1000, 2.5);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("duplicate sample for timestamp"), std::string::npos);
  EXPECT_NE(other.status().message().find("up{job=\"x\"}"), std::string::npos);
  EXPECT_NE(other.status().message().find("1000"), std::string::npos);
  // NaN payloads are compared as bits: a stale marker is not a plain NaN.
  AppendOk(app.get(), kUp, 2000, StaleNaN());
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_TRUE(app->Append(0, kUp, 2000, StaleNaN()).ok());
  EXPECT_FALSE(app->Append(0, kUp, 2000, std::nan("")).ok());
  auto got = SamplesOf(head, kUp);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(IsStaleNaN(got[1].v));
}

TEST(HeadAppendTest, CommitRevalidatesAgainstOtherAppenders) {
  Head head;
  auto a = head.Appender();
  auto b = head.Appender();
  AppendOk(a.get(), kUp, 1000, 1);
  AppendOk(b.get(), kUp, 2000, 2);
  Labels other{{"__name__", "other"}};
  AppendOk(a.get(), other, 1000, 7);
  ASSERT_TRUE(b->Commit().ok());
  Status st = a->Commit();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(
      st.message().find("out of order sample: series up{job=\"x\"}: timestamp 1000 <= last 2000"),
      std::string::npos)
      << st.message();
  // All or nothing: the valid sample of the failed batch was not applied.
  EXPECT_TRUE(SamplesOf(head, other).empty());
  EXPECT_TRUE(SameSamples(SamplesOf(head, kUp), {{2000, 2}}));
}

TEST(HeadAppendTest, OutOfBoundsBeforeMinValidTime) {
  Head head;
  head.SetMinValidTime(10000);
  auto app = head.Appender();
  auto r = app->Append(0, kUp, 9999, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("out of bounds"), std::string::npos);
  EXPECT_NE(r.status().message().find("9999"), std::string::npos);
  AppendOk(app.get(), kUp, 10000, 1);
  ASSERT_TRUE(app->Commit().ok());
}

TEST(HeadAppendTest, InvalidLabelSets) {
  Head head;
  auto app = head.Appender();
  EXPECT_FALSE(app->Append(0, Labels{}, 1, 1).ok());
  EXPECT_FALSE(app->Append(0, Labels{{"", "v"}}, 1, 1).ok());
  // Empty values are dropped: {a="", b="1"} is the series {b="1"}.
  auto r1 = app->Append(0, Labels{{"a", ""}, {"b", "1"}}, 1, 1);
  ASSERT_TRUE(r1.ok());
  auto r2 = app->Append(0, Labels{{"b", "1"}}, 2, 1);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(*r1, *r2);
  EXPECT_FALSE(app->Append(0, Labels{{"a", ""}}, 1, 1).ok());
}

TEST(HeadAppendTest, UnknownRefFallsBackToLabels) {
  Head head;
  auto app = head.Appender();
  auto r = app->Append(12345, kUp, 1000, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(*r, 12345u);
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_EQ(SamplesOf(head, kUp).size(), 1u);
}

TEST(HeadAppendTest, OutOfOrderWindowAcceptsRecentSamplesAndMergesThem) {
  HeadOptions opts;
  opts.ooo_window_ms = 10000;
  Head head(opts);
  auto app = head.Appender();
  for (int64_t t = 20000; t <= 30000; t += 2000)
    AppendOk(app.get(), kUp, t, static_cast<double>(t));
  ASSERT_TRUE(app->Commit().ok());
  // Within the window (last 30000 - 10000): accepted, in between samples.
  AppendOk(app.get(), kUp, 21000, 21);
  AppendOk(app.get(), kUp, 25000, 25);
  ASSERT_TRUE(app->Commit().ok());
  // Outside the window.
  auto r = app->Append(0, kUp, 19999, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("out-of-order window of 10000ms"), std::string::npos);
  // Duplicate of an in-order sample with another value; same value ignored.
  AppendOk(app.get(), kUp, 22000, 99);
  EXPECT_FALSE(app->Commit().ok());
  AppendOk(app.get(), kUp, 22000, 22000);
  ASSERT_TRUE(app->Commit().ok());
  // Duplicate of an earlier out-of-order sample.
  AppendOk(app.get(), kUp, 21000, 0);
  EXPECT_FALSE(app->Commit().ok());
  // Duplicate within one batch.
  AppendOk(app.get(), kUp, 23000, 1);
  AppendOk(app.get(), kUp, 23000, 2);
  Status st = app->Commit();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("duplicate sample for timestamp"), std::string::npos);

  std::vector<Sample> want = {{20000, 20000}, {21000, 21},    {22000, 22000}, {24000, 24000},
                              {25000, 25},    {26000, 26000}, {28000, 28000}, {30000, 30000}};
  EXPECT_TRUE(SameSamples(SamplesOf(head, kUp), want));
  // Seek lands on merged samples.
  auto set = head.Querier(kMinTime, kMaxTime)
                 ->Select(std::vector<Matcher>{M(MatchType::kEqual, "job", "x")});
  ASSERT_TRUE(set->Next());
  auto it = set->Iterator();
  ASSERT_TRUE(it->Seek(24500));
  EXPECT_EQ(it->At().t, 25000);
  ASSERT_TRUE(it->Next());
  EXPECT_EQ(it->At().t, 26000);
  EXPECT_EQ(head.Stats().ooo_samples, 2u);
}

class RecordingSink : public WalSink {
 public:
  Status LogSeries(std::span<const RefSeries> series) override {
    if (fail_series) return Status::Error("disk full");
    for (const auto& s : series) {
      series_log.push_back(s);
      order.push_back('S');
    }
    return Status::Ok();
  }
  Status LogSamples(std::span<const RefSample> samples) override {
    if (fail_samples) return Status::Error("disk full");
    for (const auto& s : samples) {
      samples_log.push_back(s);
      order.push_back('s');
    }
    return Status::Ok();
  }
  bool fail_series = false;
  bool fail_samples = false;
  std::vector<RefSeries> series_log;
  std::vector<RefSample> samples_log;
  std::string order;
};

TEST(HeadAppendTest, CommitLogsNewSeriesOnceThenSamples) {
  Head head;
  RecordingSink sink;
  head.SetWalSink(&sink);
  auto app = head.Appender();
  auto r = app->Append(0, kUp, 1000, 1);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(app->Commit().ok());
  ASSERT_TRUE(app->Append(*r, kUp, 2000, 2).ok());
  ASSERT_TRUE(app->Commit().ok());
  ASSERT_EQ(sink.series_log.size(), 1u);
  EXPECT_EQ(sink.series_log[0].ref, *r);
  EXPECT_EQ(sink.series_log[0].labels, kUp);
  ASSERT_EQ(sink.samples_log.size(), 2u);
  EXPECT_EQ(sink.samples_log[1].ref, *r);
  EXPECT_EQ(sink.samples_log[1].t, 2000);
  EXPECT_EQ(sink.order, "Sss");
}

TEST(HeadAppendTest, SinkFailureFailsCommitAndAppliesNothing) {
  Head head;
  RecordingSink sink;
  head.SetWalSink(&sink);
  auto app = head.Appender();
  sink.fail_samples = true;
  AppendOk(app.get(), kUp, 1000, 1);
  Status st = app->Commit();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("disk full"), std::string::npos);
  EXPECT_TRUE(SamplesOf(head, kUp).empty());
  EXPECT_EQ(head.MaxTime(), kMinTime);
  // After recovery the same sample commits; the series was logged once.
  sink.fail_samples = false;
  AppendOk(app.get(), kUp, 1000, 1);
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_EQ(sink.series_log.size(), 1u);
  EXPECT_EQ(SamplesOf(head, kUp).size(), 1u);
  // A series-log failure also applies nothing.
  sink.fail_series = true;
  Labels other{{"__name__", "other"}};
  AppendOk(app.get(), other, 1000, 1);
  AppendOk(app.get(), kUp, 2000, 2);
  EXPECT_FALSE(app->Commit().ok());
  EXPECT_EQ(SamplesOf(head, kUp).size(), 1u);
}

TEST(HeadAppendTest, RejectedDuplicateSamplesAreNotLogged) {
  Head head;
  RecordingSink sink;
  head.SetWalSink(&sink);
  auto a = head.Appender();
  auto b = head.Appender();
  AppendOk(a.get(), kUp, 1000, 1);
  AppendOk(b.get(), kUp, 1000, 1);  // the same sample from another appender
  ASSERT_TRUE(a->Commit().ok());
  ASSERT_TRUE(b->Commit().ok());  // ignored at commit
  EXPECT_EQ(sink.samples_log.size(), 1u);
  EXPECT_EQ(SamplesOf(head, kUp).size(), 1u);
}

}  // namespace
}  // namespace gpumon::tsdb::head
