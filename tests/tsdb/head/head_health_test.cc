// Storage health: append failures counted by cause, the WAL write state the
// server's readiness reads, error classification, and the series' "no
// sample yet" state (a first sample at the minimum timestamp).
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "head_test_util.h"
#include "tsdb/append_error.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::tsdb::head {
namespace {

using testing::AppendOk;
using testing::M;
using testing::ReadAll;
using testing::SameSamples;

Labels Series(const std::string& name) { return Labels{{"__name__", name}, {"job", "x"}}; }

std::vector<Sample> SamplesOf(const Head& head, const std::string& name) {
  auto got = ReadAll(head, {M(MatchType::kEqual, "__name__", name)});
  return got.empty() ? std::vector<Sample>{} : got.front().samples;
}

TEST(HeadHealthTest, FirstSampleAtMinimumTimestampIsStoredNotADuplicate) {
  Head head;
  auto app = head.Appender();
  // Value bits 0 at kMinTime used to equal the "no sample" state exactly
  // and were silently dropped as a repeat; another value was a duplicate.
  AppendOk(app.get(), Series("zero"), kMinTime, 0.0);
  AppendOk(app.get(), Series("five"), kMinTime, 5.0);
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_TRUE(SameSamples(SamplesOf(head, "zero"), {{kMinTime, 0.0}}));
  EXPECT_TRUE(SameSamples(SamplesOf(head, "five"), {{kMinTime, 5.0}}));

  // Now that the series holds a sample there, the usual rules apply.
  auto again = head.Appender();
  auto dup = again->Append(0, Series("five"), kMinTime, 6.0);
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(dup.status().message().starts_with("duplicate sample for timestamp"));
  AppendOk(again.get(), Series("five"), kMinTime, 5.0);  // the same sample: ignored
  AppendOk(again.get(), Series("five"), 1000, 7.0);
  ASSERT_TRUE(again->Commit().ok());
  EXPECT_TRUE(SameSamples(SamplesOf(head, "five"), {{kMinTime, 5.0}, {1000, 7.0}}));
  EXPECT_EQ(head.health().failures(AppendFailure::kDuplicate), 1u);
}

TEST(HeadHealthTest, CommitValidatesAFirstSampleAtMinimumTimestamp) {
  Head head;
  // Two appenders race for the same new series at kMinTime: the second
  // commit sees the first one's sample and must treat it as a duplicate.
  auto a = head.Appender();
  auto b = head.Appender();
  AppendOk(a.get(), Series("m"), kMinTime, 0.0);
  AppendOk(b.get(), Series("m"), kMinTime, 1.0);
  ASSERT_TRUE(a->Commit().ok());
  Status st = b->Commit();
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(st.message().starts_with("duplicate sample for timestamp")) << st.message();
  EXPECT_TRUE(SameSamples(SamplesOf(head, "m"), {{kMinTime, 0.0}}));
}

TEST(HeadHealthTest, ReplayKeepsAFirstSampleAtMinimumTimestamp) {
  Head head;
  ASSERT_TRUE(head.ReplaySeries(7, Series("r")).ok());
  std::vector<RefSample> samples = {{7, kMinTime, 0.0}, {7, 5, 1.0}};
  ASSERT_TRUE(head.ReplaySamples(samples).ok());
  EXPECT_TRUE(SameSamples(SamplesOf(head, "r"), {{kMinTime, 0.0}, {5, 1.0}}));
  EXPECT_EQ(head.Stats().replay_skipped_samples, 0u);
}

TEST(HeadHealthTest, RejectedSamplesAreCountedByCause) {
  HeadOptions opts;
  opts.ooo_window_ms = 0;
  Head head(opts);
  auto app = head.Appender();
  AppendOk(app.get(), Series("a"), 2000, 1);
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_FALSE(app->Append(0, Series("a"), 1000, 1).ok());  // out of order
  EXPECT_FALSE(app->Append(0, Series("a"), 2000, 9).ok());  // duplicate
  head.SetMinValidTime(1500);
  EXPECT_FALSE(app->Append(0, Series("b"), 1000, 1).ok());  // out of bounds
  std::vector<Label> many;
  for (int i = 0; i < 70000; ++i) many.push_back({"l" + std::to_string(i), "v"});
  auto too_many = app->Append(0, Labels::FromUnsorted(std::move(many)), 3000, 1);
  ASSERT_FALSE(too_many.ok());
  // The message names the series without copying all of it.
  EXPECT_LT(too_many.status().message().size(), 400u);
  EXPECT_EQ(ClassifyAppendError(too_many.status().message()), AppendFailure::kTooManyLabels);
  app->Rollback();

  const StorageHealth& h = head.health();
  EXPECT_EQ(h.failures(AppendFailure::kOutOfOrder), 1u);
  EXPECT_EQ(h.failures(AppendFailure::kDuplicate), 1u);
  EXPECT_EQ(h.failures(AppendFailure::kOutOfBounds), 1u);
  EXPECT_EQ(h.failures(AppendFailure::kTooManyLabels), 1u);
  EXPECT_EQ(h.failures(AppendFailure::kDiskFull), 0u);
  EXPECT_TRUE(h.writable());  // no WAL: nothing failed to write
}

TEST(HeadHealthTest, SamplesOutsideTheOutOfOrderWindowAreTooOld) {
  HeadOptions opts;
  opts.ooo_window_ms = 1000;
  Head head(opts);
  auto app = head.Appender();
  AppendOk(app.get(), Series("a"), 10'000, 1);
  ASSERT_TRUE(app->Commit().ok());
  AppendOk(app.get(), Series("a"), 9'500, 1);  // inside the window
  auto old = app->Append(0, Series("a"), 5'000, 1);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(ClassifyAppendError(old.status().message()), AppendFailure::kTooOld);
  EXPECT_EQ(head.health().failures(AppendFailure::kTooOld), 1u);
  EXPECT_EQ(head.health().failures(AppendFailure::kOutOfOrder), 0u);
}

// A WAL that fails like a full disk until told otherwise.
class FullDiskSink : public WalSink {
 public:
  bool full = true;
  int writes = 0;
  Status LogSeries(std::span<const RefSeries>) override { return Write(); }
  Status LogSamples(std::span<const RefSample>) override { return Write(); }

 private:
  Status Write() {
    ++writes;
    if (!full) return Status::Ok();
    return Status::Error(std::string("wal: write failed on data/wal/00000001: ") +
                         std::strerror(ENOSPC));
  }
};

TEST(HeadHealthTest, WalWriteFailureFailsTheCommitAndMakesTheHeadUnwritable) {
  Head head;
  head.health().set_recovery_hold(std::chrono::nanoseconds(0));  // the hold: below
  FullDiskSink sink;
  head.SetWalSink(&sink);
  auto app = head.Appender();
  AppendOk(app.get(), Series("a"), 1000, 1);
  AppendOk(app.get(), Series("a"), 2000, 2);
  AppendOk(app.get(), Series("b"), 1000, 3);
  Status st = app->Commit();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("No space left on device"), std::string::npos) << st.message();
  EXPECT_EQ(ClassifyAppendError(st.message()), AppendFailure::kDiskFull);
  EXPECT_FALSE(IsPermanentAppendFailure(AppendFailure::kDiskFull));
  EXPECT_TRUE(SamplesOf(head, "a").empty());

  const StorageHealth& h = head.health();
  EXPECT_FALSE(h.writable());
  EXPECT_NE(h.last_write_error().find("No space left on device"), std::string::npos);
  EXPECT_EQ(h.failures(AppendFailure::kDiskFull), 3u);  // the whole batch was lost
  EXPECT_EQ(h.wal_write_failures(), 1u);

  // Space is back: the next commit works and the head is writable again.
  sink.full = false;
  AppendOk(app.get(), Series("a"), 3000, 4);
  ASSERT_TRUE(app->Commit().ok());
  EXPECT_TRUE(h.writable());
  EXPECT_TRUE(SameSamples(SamplesOf(head, "a"), {{3000, 4}}));
  EXPECT_EQ(h.failures(AppendFailure::kDiskFull), 3u);
}

TEST(StorageHealthTest, RecoversOnlyAfterWritesSucceedForTheHold) {
  int64_t now = 1'000'000'000;
  StorageHealth h([&now] { return now; });
  h.set_recovery_hold(std::chrono::seconds(10));
  const Status full = Status::Error("wal: write: No space left on device");
  EXPECT_TRUE(h.writable());
  h.RecordWalWrite(Status::Ok());
  EXPECT_TRUE(h.writable());

  h.RecordWalWrite(full);
  EXPECT_FALSE(h.writable());
  // A small record fits on a nearly full disk: not writable yet.
  now += 1'000'000'000;
  h.RecordWalWrite(Status::Ok());
  EXPECT_FALSE(h.writable());
  now += 9'000'000'000 - 1;
  EXPECT_FALSE(h.writable());
  // A failure within the hold starts it over.
  h.RecordWalWrite(full);
  now += 1;
  h.RecordWalWrite(Status::Ok());
  now += 9'999'999'999;
  EXPECT_FALSE(h.writable());
  now += 1;
  EXPECT_TRUE(h.writable());
  // Without a write after the failure it never recovers by time alone.
  h.RecordWalWrite(full);
  now += 100'000'000'000;
  EXPECT_FALSE(h.writable());
  EXPECT_EQ(h.wal_write_failures(), 3u);
  EXPECT_NE(h.last_write_error().find("No space"), std::string::npos);
}

TEST(AppendErrorTest, ClassifiesEveryCause) {
  struct Case {
    const char* message;
    AppendFailure cause;
    bool permanent;
  };
  const Case cases[] = {
      {"out of order sample: series {a=\"b\"}: timestamp 1 <= last 2", AppendFailure::kOutOfOrder,
       true},
      {"out of order sample: series x: timestamp 1 <= last 9 (outside the out-of-order window of "
       "5ms)",
       AppendFailure::kTooOld, true},
      {"too old sample", AppendFailure::kTooOld, true},
      {"duplicate sample for timestamp: series x", AppendFailure::kDuplicate, true},
      {"out of bounds sample: series x: timestamp 1 < minimum valid time 5",
       AppendFailure::kOutOfBounds, true},
      {"too many labels in series {...}", AppendFailure::kTooManyLabels, true},
      {"empty label name in series {=\"x\"}", AppendFailure::kInvalidLabels, true},
      {"empty label set", AppendFailure::kInvalidLabels, true},
      {"commit: logging samples to the WAL: wal: write failed on f: No space left on device",
       AppendFailure::kDiskFull, false},
      {"commit: logging samples to the WAL: wal: write failed on f: Disk quota exceeded",
       AppendFailure::kDiskFull, false},
      {"commit: logging series to the WAL: wal: fdatasync failed in d: Input/output error",
       AppendFailure::kIoError, false},
      {"series ref 5 is beyond the head's limit", AppendFailure::kOther, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ClassifyAppendError(c.message), c.cause) << c.message;
    EXPECT_EQ(IsPermanentAppendFailure(ClassifyAppendError(c.message)), c.permanent) << c.message;
  }
  EXPECT_EQ(AppendFailureName(AppendFailure::kDiskFull), "disk_full");
  EXPECT_EQ(AppendFailureName(AppendFailure::kOutOfOrder), "out_of_order");
  EXPECT_EQ(AppendFailureName(AppendFailure::kOther), "other");
}

}  // namespace
}  // namespace gpumon::tsdb::head
