// Checkpoint: filtering, atomic replacement, and replay from checkpoint
// plus the segments after it.
#include "tsdb/wal/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <vector>

#include "tsdb/record/record.h"
#include "tsdb/wal/segment.h"
#include "tsdb/wal/wal_reader.h"
#include "tsdb/wal/wal_writer.h"
#include "wal_test_util.h"

namespace gpumon::tsdb::wal {
namespace {

using record::RefSample;
using record::RefSeries;
using record::RefTombstone;
using testing::TempDir;

struct State {
  std::map<uint64_t, Labels> series;
  std::vector<RefSample> samples;
  std::vector<RefTombstone> stones;
};

Status ReplayInto(const std::string& dir, ReaderOptions options, State* st) {
  auto reader = WalReader::Open(dir, std::move(options));
  if (!reader.ok()) return reader.status();
  std::vector<RefSeries> series;
  std::vector<RefSample> samples;
  std::vector<RefTombstone> stones;
  while ((*reader)->Next()) {
    auto rec = (*reader)->record();
    switch (record::PeekType(rec)) {
      case record::RecordType::kSeries:
        if (Status s = record::DecodeSeries(rec, &series); !s.ok()) return s;
        for (auto& s : series) st->series[s.ref] = s.labels;
        break;
      case record::RecordType::kSamples:
        if (Status s = record::DecodeSamples(rec, &samples); !s.ok()) return s;
        st->samples.insert(st->samples.end(), samples.begin(), samples.end());
        break;
      case record::RecordType::kTombstones:
        if (Status s = record::DecodeTombstones(rec, &stones); !s.ok()) return s;
        st->stones.insert(st->stones.end(), stones.begin(), stones.end());
        break;
      default:
        return Status::Error("unknown record");
    }
  }
  return (*reader)->status();
}

// The recipe the DB follows at start-up.
State ReplayWithCheckpoint(const std::string& dir) {
  State st;
  auto cp = LastCheckpoint(dir);
  EXPECT_TRUE(cp.ok());
  ReaderOptions rest;
  if (*cp) {
    EXPECT_TRUE(ReplayInto((*cp)->dir, {}, &st).ok());
    rest.first_segment = (*cp)->index + 1;
  }
  Status s = ReplayInto(dir, rest, &st);
  EXPECT_TRUE(s.ok()) << s.message();
  return st;
}

Labels SeriesLabels(uint64_t ref) {
  return Labels{{"__name__", "gpu_util"}, {"gpu", std::to_string(ref)}};
}

// Series 1..10; samples of every series at t = 0, 10, ..., 90 (one record per
// timestamp); a tombstone per series.
void WriteHistory(WalWriter* w) {
  std::vector<RefSeries> series;
  for (uint64_t ref = 1; ref <= 10; ++ref) series.push_back({ref, SeriesLabels(ref)});
  ASSERT_TRUE(w->Log(record::EncodeSeries(series)).ok());
  for (int64_t t = 0; t < 100; t += 10) {
    std::vector<RefSample> samples;
    for (uint64_t ref = 1; ref <= 10; ++ref)
      samples.push_back({ref, t, static_cast<double>(t + ref)});
    ASSERT_TRUE(w->Log(record::EncodeSamples(samples)).ok());
    if (t % 30 == 0) {
      ASSERT_TRUE(w->Cut().ok());
    }
  }
  std::vector<RefTombstone> stones;
  for (uint64_t ref = 1; ref <= 10; ++ref)
    stones.push_back({ref, 0, static_cast<int64_t>(ref * 10)});
  ASSERT_TRUE(w->Log(record::EncodeTombstones(stones)).ok());
}

TEST(CheckpointTest, KeepsLiveSeriesAndRecentSamples) {
  TempDir tmp;
  auto w =
      std::move(WalWriter::Open(tmp.path(), WalOptions{.sync_policy = SyncPolicy::kNever})).value();
  WriteHistory(w.get());
  ASSERT_TRUE(w->Cut().ok());
  const int last = w->CurrentSegment() - 1;
  // A sample logged after the checkpointed range must survive untouched.
  ASSERT_TRUE(w->Log(record::EncodeSamples(std::vector<RefSample>{{2, 100, 7.0}})).ok());

  auto keep = [](uint64_t ref) { return ref % 2 == 0; };
  auto stats = Checkpoint(tmp.path(), 0, last, keep, /*mint=*/50);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->series_kept, 5u);
  EXPECT_EQ(stats->series_dropped, 5u);
  EXPECT_EQ(stats->samples_kept, 25u);  // 5 series x t in {50..90}
  EXPECT_EQ(stats->samples_dropped, 75u);
  EXPECT_EQ(stats->tombstones_kept, 3u);  // even refs with maxt >= 50: 6, 8, 10
  ASSERT_TRUE(w->TruncateBefore(last + 1).ok());
  ASSERT_TRUE(DeleteCheckpoints(tmp.path(), last).ok());
  ASSERT_TRUE(w->Close().ok());

  State st = ReplayWithCheckpoint(tmp.path());
  ASSERT_EQ(st.series.size(), 5u);
  for (auto& [ref, labels] : st.series) {
    EXPECT_EQ(ref % 2, 0u);
    EXPECT_EQ(labels, SeriesLabels(ref));
  }
  ASSERT_EQ(st.samples.size(), 26u);
  for (const auto& s : st.samples) {
    EXPECT_EQ(s.ref % 2, 0u);
    EXPECT_GE(s.t, 50);
  }
  EXPECT_EQ(st.samples.back().t, 100);  // the sample after the checkpoint
  EXPECT_EQ(st.stones.size(), 3u);
}

TEST(CheckpointTest, NextCheckpointBuildsOnThePrevious) {
  TempDir tmp;
  auto w =
      std::move(WalWriter::Open(tmp.path(), WalOptions{.sync_policy = SyncPolicy::kNever})).value();
  WriteHistory(w.get());
  ASSERT_TRUE(w->Cut().ok());
  int last1 = w->CurrentSegment() - 1;
  auto all = [](uint64_t) { return true; };
  ASSERT_TRUE(Checkpoint(tmp.path(), 0, last1, all, 0).ok());
  ASSERT_TRUE(w->TruncateBefore(last1 + 1).ok());

  ASSERT_TRUE(w->Log(record::EncodeSeries(std::vector<RefSeries>{{11, SeriesLabels(11)}})).ok());
  ASSERT_TRUE(w->Log(record::EncodeSamples(std::vector<RefSample>{{11, 95, 1.0}})).ok());
  ASSERT_TRUE(w->Cut().ok());
  int last2 = w->CurrentSegment() - 1;
  // Checkpoint again, dropping series 1..5; the old checkpoint is input.
  auto keep = [](uint64_t ref) { return ref > 5; };
  auto stats = Checkpoint(tmp.path(), last1 + 1, last2, keep, 0);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->series_kept, 6u);  // 6..10 from the old checkpoint, and 11
  ASSERT_TRUE(w->TruncateBefore(last2 + 1).ok());
  ASSERT_TRUE(DeleteCheckpoints(tmp.path(), last2).ok());
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/" + CheckpointName(last1)));
  ASSERT_TRUE(w->Close().ok());

  State st = ReplayWithCheckpoint(tmp.path());
  EXPECT_EQ(st.series.size(), 6u);
  EXPECT_EQ(st.samples.size(), 5u * 10 + 1);
  EXPECT_FALSE(Checkpoint(tmp.path(), 0, last2, keep, 0).ok());  // already covered
}

TEST(CheckpointTest, LeftoverTemporaryIsIgnoredAndCleaned) {
  TempDir tmp;
  {
    auto w = std::move(WalWriter::Open(tmp.path())).value();
    WriteHistory(w.get());
  }
  std::string stale = tmp.path() + "/" + CheckpointName(3) + ".tmp";
  std::filesystem::create_directories(stale);
  auto cp = LastCheckpoint(tmp.path());
  ASSERT_TRUE(cp.ok());
  EXPECT_FALSE(*cp);
  ASSERT_TRUE(DeleteCheckpoints(tmp.path(), 0).ok());
  EXPECT_FALSE(std::filesystem::exists(stale));
}

TEST(CheckpointTest, CorruptInputFailsAndChangesNothing) {
  TempDir tmp;
  int last;
  {
    auto w = std::move(WalWriter::Open(tmp.path())).value();
    WriteHistory(w.get());
    ASSERT_TRUE(w->Log(std::vector<uint8_t>{99, 1, 2}).ok());  // unknown record type
    ASSERT_TRUE(w->Cut().ok());
    last = w->CurrentSegment() - 1;
  }
  auto stats = Checkpoint(
      tmp.path(), 0, last, [](uint64_t) { return true; }, 0);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("unknown record type"), std::string::npos)
      << stats.status().message();
  EXPECT_NE(stats.status().message().find(SegmentName(last)), std::string::npos)
      << stats.status().message();
  auto cp = LastCheckpoint(tmp.path());
  ASSERT_TRUE(cp.ok());
  EXPECT_FALSE(*cp);
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    EXPECT_FALSE(e.is_directory()) << e.path();
  }
}

}  // namespace
}  // namespace gpumon::tsdb::wal
