// HA deduplication over an in-memory head holding two (or more) replicas
// of the same series, with gaps.
#include "tsdb/dedup/dedup_querier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::tsdb::dedup {
namespace {

using Points = std::vector<std::pair<int64_t, double>>;

Points Drain(SeriesIterator& it) {
  Points out;
  while (it.Next()) out.emplace_back(it.At().t, it.At().v);
  EXPECT_TRUE(it.status().ok());
  return out;
}

Matcher Eq(std::string name, std::string value) {
  return std::move(Matcher::Make(MatchType::kEqual, std::move(name), std::move(value))).value();
}

class DedupQuerierTest : public ::testing::Test {
 protected:
  void Add(const Labels& l, const Points& pts) {
    auto app = head_.Appender();
    for (auto [t, v] : pts) ASSERT_TRUE(app->Append(0, l, t, v).ok());
    ASSERT_TRUE(app->Commit().ok());
  }
  std::unique_ptr<Querier> Dedup(std::vector<std::string> replica_labels) {
    return NewDedupQuerier(head_.Querier(0, 10'000'000), std::move(replica_labels));
  }
  head::Head head_;
};

// Replica A scrapes every 15 s at 0 s, 15 s, ... but is down from 300 s to
// 600 s; replica B scrapes every 15 s offset by 5 s without a gap. Values
// say which replica a sample came from (1 or 2).
TEST_F(DedupQuerierTest, StaysOnOneReplicaAndSwitchesOnGap) {
  Points a, b;
  for (int64_t t = 0; t <= 900000; t += 15000) {
    if (t < 300000 || t >= 600000) a.emplace_back(t, 1);
  }
  for (int64_t t = 5000; t <= 900000; t += 15000) b.emplace_back(t, 2);
  Add(Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}, {"replica", "a"}}, a);
  Add(Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}, {"replica", "b"}}, b);

  auto q = Dedup({"replica"});
  std::vector<Matcher> ms{Eq("__name__", "gpu_temp")};
  auto set = q->Select(ms);
  ASSERT_TRUE(set->Next());
  EXPECT_EQ(set->labels(), (Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}}));
  auto it = set->Iterator();
  Points got = Drain(*it);
  EXPECT_FALSE(set->Next());

  // A until its gap; B is sought beyond A's last sample plus two intervals
  // (285 s + 1 ms + 30 s → 320 s) and kept from then on, even after A is
  // back: A would have to be ahead of B by more than two intervals.
  Points want;
  for (int64_t t = 0; t <= 285000; t += 15000) want.emplace_back(t, 1);
  for (int64_t t = 320000; t <= 900000; t += 15000) want.emplace_back(t, 2);
  EXPECT_EQ(got, want);
}

// Both replicas every second in the same phase; A stops at 6 s. After the
// first sample the other replica is skipped by the initial penalty (5 s)
// only, so B takes over at 9 s (6 s + 1 ms + two 1 s intervals → 8.001 s).
TEST_F(DedupQuerierTest, InitialPenaltyIsNotDoubled) {
  Points a, b;
  for (int64_t t = 0; t <= 6000; t += 1000) a.emplace_back(t, 1);
  for (int64_t t = 0; t <= 20000; t += 1000) b.emplace_back(t, 2);
  Add(Labels{{"__name__", "m"}, {"replica", "a"}}, a);
  Add(Labels{{"__name__", "m"}, {"replica", "b"}}, b);
  auto q = Dedup({"replica"});
  std::vector<Matcher> ms{Eq("__name__", "m")};
  auto set = q->Select(ms);
  ASSERT_TRUE(set->Next());
  auto it = set->Iterator();
  Points got = Drain(*it);
  Points want;
  for (int64_t t = 0; t <= 6000; t += 1000) want.emplace_back(t, 1);
  for (int64_t t = 9000; t <= 20000; t += 1000) want.emplace_back(t, 2);
  EXPECT_EQ(got, want);
}

TEST_F(DedupQuerierTest, SwitchesBackWhenTheOtherReplicaHasAGap) {
  Points a, b;
  for (int64_t t = 0; t <= 600000; t += 10000) {
    if (t < 200000) a.emplace_back(t, 1);  // A stops at 190 s for good
  }
  for (int64_t t = 3000; t <= 600000; t += 10000) {
    if (t < 300000 || t > 400000) b.emplace_back(t, 2);  // B has a gap
  }
  // A comes back at 350 s, inside B's gap.
  for (int64_t t = 350000; t <= 600000; t += 10000) a.emplace_back(t, 1);
  Add(Labels{{"__name__", "m"}, {"replica", "a"}}, a);
  Add(Labels{{"__name__", "m"}, {"replica", "b"}}, b);

  auto q = Dedup({"replica"});
  auto set = q->Select(std::vector<Matcher>{Eq("__name__", "m")});
  ASSERT_TRUE(set->Next());
  Points got = Drain(*set->Iterator());
  Points want;
  // A to 190 s; B's next sample beyond 190 s + 1 ms + 20 s is 213 s.
  for (int64_t t = 0; t <= 190000; t += 10000) want.emplace_back(t, 1);
  for (int64_t t = 213000; t <= 293000; t += 10000) want.emplace_back(t, 2);
  // B stops at 293 s; A is back at 350 s (its penalty ended at 314 s).
  for (int64_t t = 350000; t <= 600000; t += 10000) want.emplace_back(t, 1);
  EXPECT_EQ(got, want);
}

TEST_F(DedupQuerierTest, MergesOnlyEqualSeriesAndKeepsOrder) {
  // Dropping the replica label reorders these two: zone 2 sorts before
  // zone 1 by replica, after it without.
  Add(Labels{{"__name__", "up"}, {"replica", "a"}, {"zone", "2"}}, {{1000, 1}});
  Add(Labels{{"__name__", "up"}, {"replica", "b"}, {"zone", "1"}}, {{1000, 2}});
  Add(Labels{{"__name__", "up"}, {"replica", "c"}, {"zone", "2"}}, {{2000, 3}});
  // No replica label: passes through, merging with nothing.
  Add(Labels{{"__name__", "up"}, {"zone", "3"}}, {{1000, 4}});

  auto q = Dedup({"replica"});
  auto set = q->Select(std::vector<Matcher>{Eq("__name__", "up")});
  std::vector<std::pair<std::string, Points>> got;
  while (set->Next()) got.emplace_back(set->labels().ToString(), Drain(*set->Iterator()));
  ASSERT_TRUE(set->status().ok());
  std::vector<std::pair<std::string, Points>> want{
      {"up{zone=\"1\"}", {{1000, 2}}},
      // a's sample, then c's (c is 1 s later: under the 5 s initial
      // penalty, so it is skipped).
      {"up{zone=\"2\"}", {{1000, 1}}},
      {"up{zone=\"3\"}", {{1000, 4}}},
  };
  EXPECT_EQ(got, want);
}

TEST_F(DedupQuerierTest, SeveralReplicaLabels) {
  Add(Labels{{"__name__", "x"}, {"prom", "p1"}, {"replica", "a"}}, {{0, 1}, {15000, 1}});
  Add(Labels{{"__name__", "x"}, {"prom", "p2"}, {"replica", "a"}}, {{60000, 2}});
  auto q = Dedup({"replica", "prom"});
  auto set = q->Select(std::vector<Matcher>{Eq("__name__", "x")});
  ASSERT_TRUE(set->Next());
  EXPECT_EQ(set->labels(), (Labels{{"__name__", "x"}}));
  // p2 takes over after p1's last sample plus two intervals.
  EXPECT_EQ(Drain(*set->Iterator()), (Points{{0, 1}, {15000, 1}, {60000, 2}}));
  EXPECT_FALSE(set->Next());

  // Matchers still apply to the stored replica labels.
  set = q->Select(std::vector<Matcher>{Eq("__name__", "x"), Eq("prom", "p2")});
  ASSERT_TRUE(set->Next());
  EXPECT_EQ(Drain(*set->Iterator()), (Points{{60000, 2}}));
}

TEST_F(DedupQuerierTest, LabelNamesAndValuesHideReplicaLabels) {
  Add(Labels{{"__name__", "x"}, {"gpu", "0"}, {"replica", "a"}}, {{0, 1}});
  Add(Labels{{"__name__", "x"}, {"gpu", "0"}, {"replica", "b"}}, {{0, 1}});
  auto q = Dedup({"replica"});
  auto names = q->LabelNames({});
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"__name__", "gpu"}));
  auto values = q->LabelValues("replica", {});
  ASSERT_TRUE(values.ok());
  EXPECT_TRUE(values->empty());
  values = q->LabelValues("gpu", {});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<std::string>{"0"}));
}

TEST_F(DedupQuerierTest, SeekMatchesAScanAndIteratorCanBeRequestedTwice) {
  Points a, b;
  for (int64_t t = 0; t <= 300000; t += 15000) {
    if (t < 100000 || t > 200000) a.emplace_back(t, 1);
  }
  for (int64_t t = 7000; t <= 300000; t += 15000) b.emplace_back(t, 2);
  Add(Labels{{"__name__", "m"}, {"replica", "a"}}, a);
  Add(Labels{{"__name__", "m"}, {"replica", "b"}}, b);
  auto q = Dedup({"replica"});
  auto set = q->Select(std::vector<Matcher>{Eq("__name__", "m")});
  ASSERT_TRUE(set->Next());
  Points full = Drain(*set->Iterator());
  ASSERT_FALSE(full.empty());
  // The second iterator re-selects the replicas and sees the same data.
  EXPECT_EQ(Drain(*set->Iterator()), full);
  for (int64_t target : {int64_t{0}, int64_t{100000}, int64_t{150000}, int64_t{250000}}) {
    auto it = set->Iterator();
    ASSERT_TRUE(it->Seek(target));
    auto first = std::find_if(full.begin(), full.end(), [&](auto& p) { return p.first >= target; });
    ASSERT_NE(first, full.end());
    EXPECT_EQ(it->At().t, first->first) << target;
    EXPECT_EQ(it->At().v, first->second) << target;
  }
  auto it = set->Iterator();
  EXPECT_FALSE(it->Seek(400000));
}

TEST_F(DedupQuerierTest, NoReplicaLabelsIsTheInnerQuerier) {
  auto inner = head_.Querier(0, 1);
  Querier* raw = inner.get();
  EXPECT_EQ(NewDedupQuerier(std::move(inner), {}).get(), raw);
}

}  // namespace
}  // namespace gpumon::tsdb::dedup
