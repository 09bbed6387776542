#include "remote/queue/disk_queue.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tsdb/sample.h"

namespace gpumon::remote {
namespace {

namespace fs = std::filesystem;

class DiskQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rwq-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<DiskQueue> MustOpen(DiskQueueOptions opts = {}) {
    auto q = DiskQueue::Open(dir_.string(), std::move(opts));
    EXPECT_TRUE(q.ok()) << q.status().message();
    return q.ok() ? std::move(q).value() : nullptr;
  }

  // Commit k holds `n` samples of series s0..s{n-1} at time base+k.
  static std::vector<QueuedSample> Commit(int k, int n = 3, int64_t base = 1000) {
    std::vector<QueuedSample> out;
    for (int i = 0; i < n; ++i) {
      out.push_back({Labels{{"__name__", "m"}, {"s", std::to_string(i)}, {"job", "j"}}, base + k,
                     k * 10.0 + i});
    }
    return out;
  }

  std::vector<std::string> SegmentFiles() {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(dir_)) {
      std::string name = e.path().filename().string();
      if (name != "cursor" && name != "cursor.tmp") out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

TEST_F(DiskQueueTest, AppendReadAckRoundTrip) {
  auto q = MustOpen();
  ASSERT_TRUE(q->Append(Commit(0)).ok());
  std::vector<QueuedSample> odd = {
      {Labels{{"__name__", "stale"}}, 5, tsdb::StaleNaN()},
      {Labels{{"__name__", "neg"}, {"a", "with \"quotes\"\n"}}, -7, -0.0},
  };
  ASSERT_TRUE(q->Append(odd).ok());
  EXPECT_EQ(q->Stats().samples_pending, 5u);

  auto batch = q->Read(100);
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  ASSERT_EQ(batch->samples.size(), 5u);
  EXPECT_EQ(batch->records, 2u);
  auto want = Commit(0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(batch->samples[i].labels, want[i].labels);
    EXPECT_EQ(batch->samples[i].t, want[i].t);
    EXPECT_EQ(batch->samples[i].v, want[i].v);
  }
  EXPECT_TRUE(tsdb::IsStaleNaN(batch->samples[3].v));
  EXPECT_EQ(batch->samples[4].labels.Get("a"), "with \"quotes\"\n");
  EXPECT_EQ(batch->samples[4].t, -7);
  EXPECT_TRUE(std::signbit(batch->samples[4].v));
  EXPECT_FALSE(q->HasUnread());
  EXPECT_EQ(q->Stats().samples_pending, 5u);  // read is not delivered

  ASSERT_TRUE(q->Ack(batch->end).ok());
  EXPECT_EQ(q->Stats().samples_pending, 0u);
  auto empty = q->Read(100);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->samples.empty());
}

TEST_F(DiskQueueTest, ReadStopsAtRecordBoundaries) {
  auto q = MustOpen();
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(q->Append(Commit(k)).ok());
  auto b = q->Read(4);  // 3 + 3: whole records only
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->samples.size(), 6u);
  EXPECT_EQ(b->samples.back().t, 1001);
}

TEST_F(DiskQueueTest, RestartResumesAtAcknowledgedCursor) {
  {
    auto q = MustOpen();
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(q->Append(Commit(k)).ok());
    auto first = q->Read(1);
    ASSERT_TRUE(first.ok());
    ASSERT_EQ(first->samples.size(), 3u);
    ASSERT_TRUE(q->Ack(first->end).ok());
    auto second = q->Read(1);  // read but never acknowledged
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->samples[0].t, 1001);
  }
  auto q = MustOpen();
  EXPECT_TRUE(q->warnings().empty());
  EXPECT_EQ(q->Stats().samples_pending, 6u);
  auto rest = q->Read(100);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->samples.size(), 6u);
  EXPECT_EQ(rest->samples.front().t, 1001);  // resent: at-least-once
  EXPECT_EQ(rest->samples.back().t, 1002);
  ASSERT_TRUE(q->Append(Commit(3)).ok());
  auto more = q->Read(100);
  ASSERT_TRUE(more.ok());
  ASSERT_EQ(more->samples.size(), 3u);
  EXPECT_EQ(more->samples[0].t, 1003);
}

TEST_F(DiskQueueTest, RewindRereadsUnacknowledged) {
  auto q = MustOpen();
  for (int k = 0; k < 2; ++k) ASSERT_TRUE(q->Append(Commit(k)).ok());
  auto a = q->Read(1);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(q->Ack(a->end).ok());
  ASSERT_TRUE(q->Read(1).ok());
  q->Rewind();
  auto again = q->Read(100);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->samples.size(), 3u);
  EXPECT_EQ(again->samples[0].t, 1001);
}

TEST_F(DiskQueueTest, SegmentsRotateAndAreDeletedOnceAcknowledged) {
  DiskQueueOptions opts;
  opts.segment_bytes = 256;
  auto q = MustOpen(opts);
  for (int k = 0; k < 40; ++k) ASSERT_TRUE(q->Append(Commit(k)).ok());
  EXPECT_GT(q->Stats().segments, 3u);
  EXPECT_EQ(SegmentFiles().size(), q->Stats().segments);
  auto b = q->Read(1000);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->samples.size(), 120u);
  for (int k = 0; k < 40; ++k) EXPECT_EQ(b->samples[3 * k].t, 1000 + k);
  ASSERT_TRUE(q->Ack(b->end).ok());
  EXPECT_EQ(q->Stats().segments, 1u);
  EXPECT_EQ(SegmentFiles().size(), 1u);
  EXPECT_EQ(q->Stats().samples_pending, 0u);
  // And after a restart nothing is resent.
  q.reset();
  q = MustOpen(opts);
  auto after = q->Read(1000);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->samples.empty());
}

TEST_F(DiskQueueTest, CorruptTailIsReportedAndTruncated) {
  {
    auto q = MustOpen();
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(q->Append(Commit(k)).ok());
  }
  auto files = SegmentFiles();
  ASSERT_EQ(files.size(), 1u);
  const auto size = fs::file_size(files[0]);
  {
    // Flip a byte inside the last record's payload.
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 3));
    char c;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(size - 3));
    c = static_cast<char>(c ^ 0x55);
    f.write(&c, 1);
  }
  auto q = MustOpen();
  auto warnings = q->warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(files[0]), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("checksum mismatch"), std::string::npos) << warnings[0];
  EXPECT_EQ(q->Stats().corrupt_segments, 1u);
  EXPECT_GT(q->Stats().bytes_truncated, 0u);
  EXPECT_LT(fs::file_size(files[0]), size);
  auto b = q->Read(100);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->samples.size(), 6u);  // the two intact commits
  EXPECT_EQ(b->samples.back().t, 1001);
  ASSERT_TRUE(q->Append(Commit(9)).ok());
  q.reset();
  q = MustOpen();
  EXPECT_TRUE(q->warnings().empty());
  auto all = q->Read(100);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->samples.size(), 9u);
  EXPECT_EQ(all->samples.back().t, 1009);
}

TEST_F(DiskQueueTest, TornWriteIsTruncated) {
  {
    auto q = MustOpen();
    for (int k = 0; k < 2; ++k) ASSERT_TRUE(q->Append(Commit(k)).ok());
  }
  auto files = SegmentFiles();
  ASSERT_EQ(files.size(), 1u);
  fs::resize_file(files[0], fs::file_size(files[0]) - 5);
  auto q = MustOpen();
  ASSERT_EQ(q->warnings().size(), 1u);
  EXPECT_NE(q->warnings()[0].find("truncated"), std::string::npos) << q->warnings()[0];
  auto b = q->Read(100);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->samples.size(), 3u);
}

TEST_F(DiskQueueTest, BadSegmentHeaderIsRemoved) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "00000004") << "not a segment at all";
  auto q = MustOpen();
  ASSERT_EQ(q->warnings().size(), 1u);
  EXPECT_NE(q->warnings()[0].find("bad segment header"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "00000004"));
  ASSERT_TRUE(q->Append(Commit(0)).ok());
  auto b = q->Read(10);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->samples.size(), 3u);
}

TEST_F(DiskQueueTest, SizeLimitDropsOldestSegmentsAndCountsThem) {
  DiskQueueOptions opts;
  opts.segment_bytes = 300;
  opts.max_bytes = 1200;
  auto q = MustOpen(opts);
  const int commits = 200;
  for (int k = 0; k < commits; ++k) ASSERT_TRUE(q->Append(Commit(k)).ok());
  DiskQueueStats st = q->Stats();
  EXPECT_LE(st.bytes, opts.max_bytes);
  EXPECT_GT(st.samples_dropped_size, 0u);
  uint64_t on_disk = 0;
  for (auto& f : SegmentFiles()) on_disk += fs::file_size(f);
  EXPECT_EQ(on_disk, st.bytes);
  auto b = q->Read(100000);
  ASSERT_TRUE(b.ok());
  // Nothing vanishes silently: dropped + readable == appended.
  EXPECT_EQ(st.samples_dropped_size + b->samples.size(), 3u * commits);
  EXPECT_EQ(b->samples.back().t, 1000 + commits - 1);  // newest kept
}

TEST_F(DiskQueueTest, SizeLimitMovesCursorPastDroppedSegments) {
  DiskQueueOptions opts;
  opts.segment_bytes = 300;
  opts.max_bytes = 1200;
  auto q = MustOpen(opts);
  ASSERT_TRUE(q->Append(Commit(0)).ok());
  auto first = q->Read(1);
  ASSERT_TRUE(first.ok());
  for (int k = 1; k < 100; ++k) ASSERT_TRUE(q->Append(Commit(k)).ok());
  // Acknowledging a batch whose segment is gone is harmless.
  EXPECT_TRUE(q->Ack(first->end).ok());
  auto rest = q->Read(100000);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(q->Stats().samples_dropped_size + rest->samples.size() + 3, 300u);
}

TEST_F(DiskQueueTest, AgeLimitDropsOldSamplesOnReadAndOldSegments) {
  int64_t now = 1'000'000;
  DiskQueueOptions opts;
  opts.segment_bytes = 200;
  opts.sample_age_limit_ms = 10'000;
  opts.now_ms = [&] { return now; };
  auto q = MustOpen(opts);
  // Old data: 20 commits at t = 995000.., inside the limit when written.
  for (int k = 0; k < 20; ++k) ASSERT_TRUE(q->Append(Commit(k, 3, 995'000)).ok());
  const uint64_t old_segments = q->Stats().segments;
  ASSERT_GT(old_segments, 2u);
  now += 60'000;  // everything written so far is now too old
  ASSERT_TRUE(q->Append(Commit(0, 3, now)).ok());
  DiskQueueStats st = q->Stats();
  EXPECT_LT(st.segments, old_segments);
  EXPECT_GT(st.samples_dropped_age, 0u);
  auto b = q->Read(1000);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->samples.size(), 3u);  // only the fresh commit
  EXPECT_EQ(b->samples[0].t, now);
  EXPECT_EQ(q->Stats().samples_dropped_age, 60u);  // all old ones counted
}

}  // namespace
}  // namespace gpumon::remote
