#include "sim/workload.h"

#include <gtest/gtest.h>

#include <map>

namespace gpumon::sim {
namespace {

TEST(WorkloadTest, PhasesAreContiguousAndLastTensOfSecondsToMinutes) {
  WorkloadSchedule s(WorkloadMix::kDatacenter, 42);
  Phase prev = s.PhaseAt(0);
  EXPECT_EQ(prev.start_ms, 0);
  std::map<PhaseKind, int> kinds;
  for (int i = 0; i < 500; ++i) {
    Phase next = s.PhaseAt(prev.end_ms);
    EXPECT_EQ(next.start_ms, prev.end_ms);
    const int64_t d = next.end_ms - next.start_ms;
    EXPECT_GE(d, 20000);
    EXPECT_LE(d, 600000);
    ++kinds[next.kind];
    prev = next;
  }
  EXPECT_GT(kinds[PhaseKind::kTraining], 100);
  EXPECT_GT(kinds[PhaseKind::kIdle], 20);
  EXPECT_EQ(kinds[PhaseKind::kMedia], 0);  // data-center mix has no video work
}

TEST(WorkloadTest, SameSeedSameSequenceRegardlessOfQueryPattern) {
  WorkloadSchedule a(WorkloadMix::kConsumer, 7);
  WorkloadSchedule b(WorkloadMix::kConsumer, 7);
  for (int64_t t = 0; t < 3600000; t += 100) a.PhaseAt(t);  // fine-grained walk
  const Phase& pa = a.PhaseAt(3600000);
  const Phase& pb = b.PhaseAt(3600000);  // one jump
  EXPECT_EQ(pa.start_ms, pb.start_ms);
  EXPECT_EQ(pa.end_ms, pb.end_ms);
  EXPECT_EQ(pa.kind, pb.kind);
  EXPECT_EQ(pa.util, pb.util);
}

TEST(WorkloadTest, DifferentSeedsDiffer) {
  WorkloadSchedule a(WorkloadMix::kDatacenter, 1);
  WorkloadSchedule b(WorkloadMix::kDatacenter, 2);
  EXPECT_NE(a.PhaseAt(0).end_ms, b.PhaseAt(0).end_ms);
}

TEST(WorkloadTest, TrainingSamplesAreBusyAndBounded) {
  WorkloadSchedule s(WorkloadMix::kDatacenter, 3);
  int busy = 0, samples = 0;
  for (int64_t t = 0; t < 4 * 3600000LL; t += 100) {
    const Phase& p = s.PhaseAt(t);
    WorkloadSample w = SampleAt(p, t);
    ASSERT_GE(w.util, 0.0);
    ASSERT_LE(w.util, 1.0);
    ASSERT_GE(w.mem_util, 0.0);
    ASSERT_LE(w.mem_util, 1.0);
    if (p.kind == PhaseKind::kIdle) {
      ASSERT_EQ(w.util, 0.0);
    }
    if (p.kind == PhaseKind::kTraining) {
      ++samples;
      if (w.util >= 0.85) ++busy;
    }
  }
  ASSERT_GT(samples, 0);
  EXPECT_GT(static_cast<double>(busy) / samples, 0.9);
}

TEST(WorkloadTest, RegimesReplaceTheMixBetweenTheirBoundaries) {
  constexpr int64_t kMin = 60000;
  WorkloadRegime r;
  r.kind = RegimeKind::kTraining;
  r.from_ms = 10 * kMin;
  r.until_ms = 130 * kMin;
  r.util = 0.97;
  r.checkpoint_every_ms = 15 * kMin;
  r.checkpoint_ms = kMin;
  r.checkpoint_offset_ms = 3 * kMin;
  r.seed = 99;
  WorkloadSchedule a(WorkloadMix::kDatacenter, 5);
  WorkloadSchedule b(WorkloadMix::kDatacenter, 5);
  a.AddRegime(r);
  b.AddRegime(r);
  Phase prev = a.PhaseAt(0);
  bool cut_at_start = false, cut_at_end = false, mix_after = false;
  int training = 0;
  while (prev.end_ms < 300 * kMin) {
    Phase next = a.PhaseAt(prev.end_ms);
    EXPECT_EQ(next.start_ms, prev.end_ms);
    cut_at_start |= next.start_ms == r.from_ms;
    cut_at_end |= next.start_ms == r.until_ms;
    if (next.start_ms >= r.from_ms && next.start_ms < r.until_ms) {
      EXPECT_LE(next.end_ms, r.until_ms);
      if (next.kind == PhaseKind::kTraining) {
        ++training;
        EXPECT_NEAR(next.util, 0.97, 0.011);
        EXPECT_EQ(next.checkpoint_every_ms, r.checkpoint_every_ms);
      } else {
        EXPECT_EQ(next.kind, PhaseKind::kIdle);  // a job restart
      }
    } else if (next.start_ms >= r.until_ms && next.kind != PhaseKind::kTraining) {
      mix_after = true;
    }
    prev = next;
  }
  EXPECT_TRUE(cut_at_start);
  EXPECT_TRUE(cut_at_end);
  EXPECT_TRUE(mix_after);
  EXPECT_GE(training, 2);
  // Checkpoints fall on the job's schedule, in absolute time.
  const Phase& p = b.PhaseAt(33 * kMin + 30000);
  ASSERT_EQ(p.kind, PhaseKind::kTraining);
  EXPECT_LT(SampleAt(p, 33 * kMin + 30000).util, 0.2);  // 3m + 2 x 15m + 30 s
  EXPECT_GT(SampleAt(p, 33 * kMin + 70000).util, 0.9);
}

}  // namespace
}  // namespace gpumon::sim
