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

}  // namespace
}  // namespace gpumon::sim
