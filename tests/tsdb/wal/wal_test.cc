// WalWriter, WalReader and Repair on real files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "tsdb/wal/frame.h"
#include "tsdb/wal/repair.h"
#include "tsdb/wal/segment.h"
#include "tsdb/wal/wal_reader.h"
#include "tsdb/wal/wal_writer.h"
#include "wal_test_util.h"

namespace gpumon::tsdb::wal {
namespace {

using testing::CheckRecord;
using testing::MakeRecord;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

struct Replay {
  std::vector<int64_t> ids;  // -1 for a record whose bytes are wrong
  Status status;
  std::optional<Corruption> corruption;
  std::optional<TornTail> torn;
  std::vector<std::pair<int, uint64_t>> positions;  // (segment, offset) per record
};

Replay ReplayAll(const std::string& dir, ReaderOptions options = {}) {
  Replay out;
  auto reader = WalReader::Open(dir, std::move(options));
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return out;
  while ((*reader)->Next()) {
    auto rec = (*reader)->record();
    out.ids.push_back(CheckRecord(std::vector<uint8_t>(rec.begin(), rec.end())));
    out.positions.emplace_back((*reader)->segment(), (*reader)->offset());
  }
  out.status = (*reader)->status();
  out.corruption = (*reader)->corruption();
  out.torn = (*reader)->torn_tail();
  return out;
}

std::vector<int64_t> Iota(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

std::unique_ptr<WalWriter> MustOpen(const std::string& dir, WalOptions o = {}) {
  auto w = WalWriter::Open(dir, o);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? std::move(w).value() : nullptr;
}

void LogRange(WalWriter* w, int64_t from, int64_t to) {
  for (int64_t i = from; i < to; ++i) {
    auto r = MakeRecord(static_cast<uint64_t>(i));
    ASSERT_TRUE(w->Log(r).ok());
  }
}

WalOptions Small(SyncPolicy p = SyncPolicy::kNever) {
  WalOptions o;
  o.segment_size = 2048;
  o.sync_policy = p;
  return o;
}

TEST(WalTest, RoundTripAcrossSegments) {
  TempDir tmp;
  std::string dir = tmp.path() + "/wal";
  {
    auto w = MustOpen(dir, Small());
    LogRange(w.get(), 0, 500);
    EXPECT_GT(w->CurrentSegment(), 10);
    ASSERT_TRUE(w->Close().ok());
  }
  auto segments = ListSegments(dir);
  ASSERT_TRUE(segments.ok());
  for (const auto& s : *segments) {
    EXPECT_LE(s.size, 2048u) << s.path;  // no segment over the limit
  }
  Replay r = ReplayAll(dir);
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_FALSE(r.torn);
  EXPECT_EQ(r.ids, Iota(0, 500));
}

TEST(WalTest, BatchLogIsOrderedAndOversizedRecordGetsOwnSegment) {
  TempDir tmp;
  auto w = MustOpen(tmp.path(), Small());
  std::vector<std::vector<uint8_t>> recs;
  for (int i = 0; i < 40; ++i) recs.push_back(MakeRecord(i));
  recs.push_back(MakeRecord(40, 0));
  recs.back().resize(5000);  // bigger than a segment
  std::vector<std::span<const uint8_t>> spans(recs.begin(), recs.end());
  ASSERT_TRUE(w->Log(spans).ok());
  LogRange(w.get(), 41, 45);
  ASSERT_TRUE(w->Close().ok());
  auto reader = WalReader::Open(tmp.path());
  ASSERT_TRUE(reader.ok());
  int n = 0;
  while ((*reader)->Next()) {
    auto rec = (*reader)->record();
    if (n == 40) {
      EXPECT_EQ(rec.size(), 5000u);
      EXPECT_EQ((*reader)->offset(), kSegmentHeaderSize);  // starts its own segment
    } else {
      EXPECT_EQ(CheckRecord({rec.begin(), rec.end()}), n);
    }
    ++n;
  }
  EXPECT_TRUE((*reader)->status().ok());
  EXPECT_EQ(n, 45);
}

TEST(WalTest, ReopenContinuesInNewSegment) {
  TempDir tmp;
  int first;
  {
    auto w = MustOpen(tmp.path());
    first = w->CurrentSegment();
    LogRange(w.get(), 0, 10);
  }
  auto before = ReadFile(SegmentPath(tmp.path(), first));
  {
    auto w = MustOpen(tmp.path());
    EXPECT_EQ(w->CurrentSegment(), first + 1);
    LogRange(w.get(), 10, 20);
  }
  EXPECT_EQ(ReadFile(SegmentPath(tmp.path(), first)), before);  // untouched
  Replay r = ReplayAll(tmp.path());
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.ids, Iota(0, 20));
}

TEST(WalTest, ReopenReusesSegmentWithoutRecords) {
  TempDir tmp;
  for (int i = 0; i < 5; ++i) {
    auto w = MustOpen(tmp.path());
    EXPECT_EQ(w->CurrentSegment(), 0);
  }
  // A crash right after creating a segment leaves an empty file.
  WriteFile(SegmentPath(tmp.path(), 0), {});
  auto w = MustOpen(tmp.path());
  EXPECT_EQ(w->CurrentSegment(), 0);
  LogRange(w.get(), 0, 3);
  w.reset();
  EXPECT_EQ(ReplayAll(tmp.path()).ids, Iota(0, 3));
}

TEST(WalTest, TornTailAtEveryOffsetIsDroppedAndRepairedByOpen) {
  TempDir tmp;
  std::string seg;
  size_t last_start, full_size;
  {
    auto w = MustOpen(tmp.path(), WalOptions{.segment_size = 1 << 20});
    LogRange(w.get(), 0, 9);
    seg = SegmentPath(tmp.path(), w->CurrentSegment());
    ASSERT_TRUE(w->Sync().ok());
    last_start = ReadFile(seg).size();
    LogRange(w.get(), 9, 10);
  }
  const std::vector<uint8_t> full = ReadFile(seg);
  full_size = full.size();
  ASSERT_GT(full_size, last_start + kFrameHeaderSize);
  for (size_t cut = last_start + 1; cut < full_size; ++cut) {
    SCOPED_TRACE(cut);
    TempDir t2;
    std::string seg2 = SegmentPath(t2.path(), 0);
    WriteFile(seg2, std::vector<uint8_t>(full.begin(), full.begin() + cut));
    Replay r = ReplayAll(t2.path());
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.ids, Iota(0, 9));
    ASSERT_TRUE(r.torn);
    EXPECT_EQ(r.torn->offset, last_start);
    EXPECT_EQ(r.torn->dropped_bytes, cut - last_start);
    EXPECT_EQ(r.torn->path, seg2);
    // Opening the writer truncates the torn record and appends safely
    // (checked at a subset of offsets: each open syncs files).
    if (cut - last_start > 16 && cut % 29 != 0) continue;
    {
      auto w = MustOpen(t2.path());
      ASSERT_TRUE(w->repaired_tail());
      EXPECT_EQ(ReadFile(seg2).size(), last_start);
      LogRange(w.get(), 9, 12);
    }
    Replay again = ReplayAll(t2.path());
    EXPECT_TRUE(again.status.ok()) << again.status.message();
    EXPECT_FALSE(again.torn);
    EXPECT_EQ(again.ids, Iota(0, 12));
  }
}

TEST(WalTest, CorruptionInMiddleIsReportedAndRepairKeepsPrefix) {
  TempDir tmp;
  {
    auto w = MustOpen(tmp.path(), WalOptions{.segment_size = 1 << 20});
    LogRange(w.get(), 0, 30);
  }
  Replay clean = ReplayAll(tmp.path());
  ASSERT_EQ(clean.ids.size(), 30u);
  const uint64_t bad_offset = clean.positions[17].second;
  std::string seg = SegmentPath(tmp.path(), 0);
  auto bytes = ReadFile(seg);
  bytes[bad_offset + kFrameHeaderSize + 3] ^= 0x40;  // inside record 17's payload
  WriteFile(seg, bytes);

  Replay r = ReplayAll(tmp.path());
  EXPECT_EQ(r.ids, Iota(0, 17));
  ASSERT_FALSE(r.status.ok());
  ASSERT_TRUE(r.corruption);
  EXPECT_EQ(r.corruption->offset, bad_offset);
  EXPECT_EQ(r.corruption->path, seg);
  EXPECT_NE(r.status.message().find(seg), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("offset " + std::to_string(bad_offset)), std::string::npos)
      << r.status.message();

  // The writer refuses to append behind corruption.
  EXPECT_FALSE(WalWriter::Open(tmp.path()).ok());

  ASSERT_TRUE(Repair(tmp.path(), *r.corruption).ok());
  Replay repaired = ReplayAll(tmp.path());
  EXPECT_TRUE(repaired.status.ok()) << repaired.status.message();
  EXPECT_EQ(repaired.ids, Iota(0, 17));
  auto w = MustOpen(tmp.path());
  LogRange(w.get(), 17, 20);
  w.reset();
  EXPECT_EQ(ReplayAll(tmp.path()).ids, Iota(0, 20));
}

TEST(WalTest, TornRecordInOlderSegmentIsCorruption) {
  TempDir tmp;
  {
    auto w = MustOpen(tmp.path(), Small());
    LogRange(w.get(), 0, 100);
  }
  auto segs = ListSegments(tmp.path());
  ASSERT_TRUE(segs.ok());
  ASSERT_GE(segs->size(), 4u);
  const SegmentFile& victim = (*segs)[1];
  // Count the records in segment 0 and cut segment 1 mid-record.
  Replay clean = ReplayAll(tmp.path());
  int64_t in_seg0 = 0;
  uint64_t second_offset = 0;
  bool found = false;
  for (size_t i = 0; i < clean.positions.size(); ++i) {
    if (clean.positions[i].first == segs->front().index) ++in_seg0;
    if (clean.positions[i].first == victim.index && !found && clean.positions[i].second > 8) {
      second_offset = clean.positions[i].second;  // second record of segment 1
      found = true;
    }
  }
  ASSERT_TRUE(found);
  auto bytes = ReadFile(victim.path);
  bytes.resize(second_offset + 5);
  WriteFile(victim.path, bytes);

  Replay r = ReplayAll(tmp.path());
  ASSERT_TRUE(r.corruption);
  EXPECT_EQ(r.corruption->segment, victim.index);
  EXPECT_EQ(r.corruption->offset, second_offset);
  EXPECT_EQ(r.ids, Iota(0, in_seg0 + 1));
  ASSERT_TRUE(Repair(tmp.path(), *r.corruption).ok());
  auto after = ListSegments(tmp.path());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->back().index, victim.index);  // later segments deleted
  Replay repaired = ReplayAll(tmp.path());
  EXPECT_TRUE(repaired.status.ok());
  EXPECT_EQ(repaired.ids, Iota(0, in_seg0 + 1));
}

TEST(WalTest, MissingSegmentIsCorruption) {
  TempDir tmp;
  {
    auto w = MustOpen(tmp.path(), Small());
    LogRange(w.get(), 0, 100);
  }
  std::filesystem::remove(SegmentPath(tmp.path(), 2));
  Replay r = ReplayAll(tmp.path());
  ASSERT_TRUE(r.corruption);
  EXPECT_EQ(r.corruption->segment, 3);
  EXPECT_NE(r.corruption->reason.find(SegmentName(2)), std::string::npos);
  ASSERT_FALSE(r.ids.empty());
  EXPECT_EQ(r.ids, Iota(0, static_cast<int64_t>(r.ids.size())));
  ASSERT_TRUE(Repair(tmp.path(), *r.corruption).ok());
  Replay repaired = ReplayAll(tmp.path());
  EXPECT_TRUE(repaired.status.ok());
  EXPECT_EQ(repaired.ids, r.ids);
}

TEST(WalTest, CorruptRecordFoundByCallerCanBeRepaired) {
  TempDir tmp;
  {
    auto w = MustOpen(tmp.path(), Small());
    LogRange(w.get(), 0, 60);
  }
  Corruption c;
  {
    auto reader = WalReader::Open(tmp.path());
    ASSERT_TRUE(reader.ok());
    for (int i = 0; i <= 33; ++i) ASSERT_TRUE((*reader)->Next());
    c = (*reader)->CorruptionAtRecord("does not decode");
  }
  EXPECT_NE(c.ToString().find("does not decode"), std::string::npos);
  ASSERT_TRUE(Repair(tmp.path(), c).ok());
  EXPECT_EQ(ReplayAll(tmp.path()).ids, Iota(0, 33));
}

TEST(WalTest, TruncateBefore) {
  TempDir tmp;
  auto w = MustOpen(tmp.path(), Small());
  LogRange(w.get(), 0, 200);
  int current = w->CurrentSegment();
  ASSERT_GT(current, 5);
  EXPECT_FALSE(w->TruncateBefore(current + 1).ok());
  ASSERT_TRUE(w->TruncateBefore(4).ok());
  auto segs = ListSegments(tmp.path());
  ASSERT_TRUE(segs.ok());
  EXPECT_EQ(segs->front().index, 4);
  EXPECT_EQ(segs->back().index, current);
  LogRange(w.get(), 200, 210);
  w.reset();
  Replay r = ReplayAll(tmp.path());
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_FALSE(r.ids.empty());
  EXPECT_EQ(r.ids.back(), 209);
  EXPECT_EQ(r.positions.front().first, 4);
  // Reading from segment 4 on (as after a checkpoint) works; from a
  // missing one does not.
  ReaderOptions from4;
  from4.first_segment = 4;
  EXPECT_TRUE(ReplayAll(tmp.path(), from4).status.ok());
  ReaderOptions from2;
  from2.first_segment = 2;
  EXPECT_FALSE(ReplayAll(tmp.path(), from2).status.ok());
}

TEST(WalTest, ReaderRange) {
  TempDir tmp;
  {
    auto w = MustOpen(tmp.path(), Small());
    LogRange(w.get(), 0, 200);
  }
  ReaderOptions o;
  o.first_segment = 2;
  o.last_segment = 3;
  Replay r = ReplayAll(tmp.path(), o);
  EXPECT_TRUE(r.status.ok());
  ASSERT_FALSE(r.ids.empty());
  for (auto& p : r.positions) {
    EXPECT_GE(p.first, 2);
    EXPECT_LE(p.first, 3);
  }
  EXPECT_EQ(r.ids, Iota(r.ids.front(), r.ids.front() + static_cast<int64_t>(r.ids.size())));
}

TEST(WalTest, SyncPolicies) {
  {
    TempDir tmp;
    auto w = MustOpen(tmp.path(), Small(SyncPolicy::kAlways));
    LogRange(w.get(), 0, 20);
    EXPECT_GE(w->stats().syncs, 20u);  // one per Log (single thread)
  }
  {
    TempDir tmp;
    WalOptions o = Small(SyncPolicy::kNever);
    o.segment_size = 1 << 20;
    auto w = MustOpen(tmp.path(), o);
    LogRange(w.get(), 0, 20);
    EXPECT_EQ(w->stats().syncs, 0u);
    ASSERT_TRUE(w->Sync().ok());
    EXPECT_EQ(w->stats().syncs, 1u);
    ASSERT_TRUE(w->Sync().ok());
    EXPECT_EQ(w->stats().syncs, 1u);  // nothing new to sync
  }
  {
    TempDir tmp;
    WalOptions o;
    o.sync_policy = SyncPolicy::kBatch;
    o.sync_interval = std::chrono::milliseconds(10);
    auto w = MustOpen(tmp.path(), o);
    LogRange(w.get(), 0, 20);
    for (int i = 0; i < 500 && w->stats().syncs == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GE(w->stats().syncs, 1u);
    w.reset();
    EXPECT_EQ(ReplayAll(tmp.path()).ids, Iota(0, 20));
  }
}

TEST(WalTest, ConcurrentWritersGroupCommit) {
  TempDir tmp;
  WalOptions o;
  o.segment_size = 64 << 10;
  o.sync_policy = SyncPolicy::kAlways;
  auto w = MustOpen(tmp.path(), o);
  constexpr int kThreads = 4, kPer = 100;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i) {
        auto r = MakeRecord(static_cast<uint64_t>(t * kPer + i));
        if (!w->Log(r).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(w->stats().records, static_cast<uint64_t>(kThreads * kPer));
  w.reset();
  Replay r = ReplayAll(tmp.path());
  EXPECT_TRUE(r.status.ok());
  std::vector<int> seen(kThreads * kPer, 0);
  std::vector<int> last_of_thread(kThreads, -1);
  for (int64_t id : r.ids) {
    ASSERT_GE(id, 0);
    ++seen[id];
    int t = static_cast<int>(id / kPer), i = static_cast<int>(id % kPer);
    EXPECT_GT(i, last_of_thread[t]);  // each thread's records in its order
    last_of_thread[t] = i;
  }
  for (int c : seen) EXPECT_EQ(c, 1);
}

TEST(WalTest, RefusesOversizedRecordAndClosedWriter) {
  TempDir tmp;
  auto w = MustOpen(tmp.path());
  std::vector<uint8_t> huge(static_cast<size_t>(kMaxRecordSize) + 1);
  EXPECT_FALSE(w->Log(huge).ok());
  LogRange(w.get(), 0, 1);
  ASSERT_TRUE(w->Close().ok());
  EXPECT_FALSE(w->Log(MakeRecord(1)).ok());
  EXPECT_EQ(ReplayAll(tmp.path()).ids, Iota(0, 1));
}

TEST(WalTest, ProgressIsReported) {
  TempDir tmp;
  {
    auto w = MustOpen(tmp.path(), Small());
    LogRange(w.get(), 0, 300);
  }
  std::vector<ReplayProgress> seen;
  ReaderOptions o;
  o.progress = [&](const ReplayProgress& p) { seen.push_back(p); };
  Replay r = ReplayAll(tmp.path(), o);
  ASSERT_TRUE(r.status.ok());
  ASSERT_FALSE(seen.empty());
  auto segs = ListSegments(tmp.path());
  ASSERT_TRUE(segs.ok());
  uint64_t total = 0;
  for (auto& s : *segs) total += s.size;
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].bytes_done, seen[i - 1].bytes_done);
    EXPECT_GE(seen[i].segments_done, seen[i - 1].segments_done);
  }
  EXPECT_EQ(seen.back().bytes_done, total);
  EXPECT_EQ(seen.back().bytes_total, total);
  EXPECT_EQ(seen.back().segments_done, static_cast<int>(segs->size()));
  EXPECT_EQ(seen.back().segments_total, static_cast<int>(segs->size()));
}

TEST(WalTest, EmptyOrMissingDirectoryReplaysNothing) {
  TempDir tmp;
  Replay r = ReplayAll(tmp.path() + "/absent");
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.ids.empty());
  // Files that are not segments are ignored.
  WriteFile(tmp.path() + "/notes.txt", {1, 2, 3});
  WriteFile(tmp.path() + "/0000001", {1});
  EXPECT_TRUE(ReplayAll(tmp.path()).ids.empty());
}

TEST(SegmentTest, Names) {
  EXPECT_EQ(SegmentName(0), "00000000");
  EXPECT_EQ(SegmentName(1234), "00001234");
  EXPECT_EQ(ParseSegmentName("00001234"), 1234);
  EXPECT_FALSE(ParseSegmentName("0000123"));
  EXPECT_FALSE(ParseSegmentName("0000123a"));
  EXPECT_FALSE(ParseSegmentName("checkpoint.00000001"));
}

}  // namespace
}  // namespace gpumon::tsdb::wal

namespace gpumon::tsdb::wal {
namespace {

// A segment that cannot be started (here: its name is taken; on a full disk
// its header does not fit) fails that write only: the writer keeps the
// current segment and cuts again on the next write, instead of refusing
// every write until a restart.
TEST(WalTest, FailedSegmentCutIsRetriedNotFatal) {
  TempDir tmp;
  auto w = MustOpen(tmp.path(), Small());
  ASSERT_EQ(w->CurrentSegment(), 0);
  const std::string blocker = SegmentPath(tmp.path(), 1);
  std::filesystem::create_directory(blocker);
  std::vector<int64_t> logged;
  Status failed;
  uint64_t failed_id = 0;
  for (uint64_t i = 0; i < 100 && failed.ok(); ++i) {
    failed = w->Log(MakeRecord(i));
    if (failed.ok()) logged.push_back(static_cast<int64_t>(i));
    failed_id = i;
  }
  ASSERT_FALSE(failed.ok()) << "segment 0 never filled up";
  EXPECT_EQ(w->CurrentSegment(), 0);
  EXPECT_FALSE(w->Log(MakeRecord(failed_id)).ok());  // still blocked, same record

  std::filesystem::remove(blocker);
  for (int64_t i = 2000; i < 2010; ++i) {
    ASSERT_TRUE(w->Log(MakeRecord(static_cast<uint64_t>(i))).ok()) << i;
    logged.push_back(i);
  }
  EXPECT_GE(w->CurrentSegment(), 1);
  ASSERT_TRUE(w->Close().ok());
  Replay r = ReplayAll(tmp.path());
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_FALSE(r.corruption);
  EXPECT_EQ(r.ids, logged);
}

}  // namespace
}  // namespace gpumon::tsdb::wal
