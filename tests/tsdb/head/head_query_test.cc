// Querier semantics: matcher evaluation against a brute-force model, label
// names and values, time ranges and iterator seeking.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
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

struct Fixture {
  Head head;
  std::vector<Labels> series;
};

// Series with overlapping label sets; some lack `job` or `model`.
void Populate(Fixture* f, std::mt19937_64* rng) {
  const std::vector<std::string> names = {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "up"};
  const std::vector<std::string> models = {"NVIDIA H100 80GB HBM3", "NVIDIA H200", "L40S"};
  std::set<Labels> seen;
  auto app = f->head.Appender();
  for (int i = 0; i < 300; ++i) {
    std::vector<Label> ls = {{"__name__", names[(*rng)() % names.size()]},
                             {"gpu", std::to_string((*rng)() % 8)},
                             {"Hostname", "node" + std::to_string((*rng)() % 5)}};
    if ((*rng)() % 4 != 0) ls.push_back({"job", (*rng)() % 2 ? "dcgm" : "gpumon"});
    if ((*rng)() % 3 != 0) ls.push_back({"modelName", models[(*rng)() % models.size()]});
    Labels l = Labels::FromUnsorted(ls);
    if (!seen.insert(l).second) continue;
    f->series.push_back(l);
    for (int64_t t = 0; t < 5; ++t) AppendOk(app.get(), l, 1000 * t, static_cast<double>(i + t));
  }
  ASSERT_TRUE(app->Commit().ok());
}

std::vector<Matcher> RandomMatchers(std::mt19937_64* rng) {
  const std::vector<std::string> names = {"__name__",  "gpu",      "job",
                                          "modelName", "Hostname", "absent"};
  const std::vector<std::string> values = {"",     "up",     "0",     "3",
                                           "dcgm", "gpumon", "node1", "NVIDIA H200"};
  const std::vector<std::string> regexes = {
      ".*", ".+", "", "0|1|2", "NVIDIA.*", "dcgm|", "x|y", "node[0-2]", "DCGM_.*", "(?i)UP", "a.b"};
  std::vector<Matcher> ms;
  const int n = 1 + static_cast<int>((*rng)() % 3);
  for (int i = 0; i < n; ++i) {
    const auto type = static_cast<MatchType>((*rng)() % 4);
    const std::string& name = names[(*rng)() % names.size()];
    const bool re = type == MatchType::kRegexMatch || type == MatchType::kRegexNoMatch;
    const std::string& value =
        re ? regexes[(*rng)() % regexes.size()] : values[(*rng)() % values.size()];
    ms.push_back(M(type, name, value));
  }
  return ms;
}

bool MatchesAll(const Labels& l, const std::vector<Matcher>& ms) {
  return std::all_of(ms.begin(), ms.end(), [&](const Matcher& m) { return m.Matches(l); });
}

std::string Describe(const std::vector<Matcher>& ms) {
  std::string s = "{";
  for (const auto& m : ms) s += m.ToString() + ",";
  return s + "}";
}

TEST(HeadQueryTest, SelectMatchesBruteForceForAllMatcherKinds) {
  std::mt19937_64 rng(42);
  Fixture f;
  Populate(&f, &rng);
  auto q = f.head.Querier(kMinTime, kMaxTime);
  int nonempty = 0;
  for (int round = 0; round < 400; ++round) {
    auto ms = RandomMatchers(&rng);
    std::vector<Labels> want;
    for (const auto& l : f.series) {
      if (MatchesAll(l, ms)) want.push_back(l);
    }
    std::sort(want.begin(), want.end());
    std::vector<Labels> got;
    for (const auto& s : ReadAll(*q, ms)) got.push_back(s.labels);
    ASSERT_EQ(got, want) << Describe(ms);
    if (!want.empty()) ++nonempty;

    // Label names and values restricted by the same matchers.
    std::set<std::string> want_names;
    std::set<std::string> want_gpus;
    for (const auto& l : want) {
      for (const auto& lab : l) want_names.insert(lab.name);
      if (l.Has("gpu")) want_gpus.insert(std::string(l.Get("gpu")));
    }
    auto names = q->LabelNames(ms);
    ASSERT_TRUE(names.ok());
    EXPECT_EQ(*names, std::vector<std::string>(want_names.begin(), want_names.end()))
        << Describe(ms);
    auto gpus = q->LabelValues("gpu", ms);
    ASSERT_TRUE(gpus.ok());
    EXPECT_EQ(*gpus, std::vector<std::string>(want_gpus.begin(), want_gpus.end())) << Describe(ms);
  }
  EXPECT_GT(nonempty, 100);  // the random matchers exercise real selections
}

TEST(HeadQueryTest, OnlyEmptyMatchingMatchersSelectSeriesWithoutTheLabel) {
  std::mt19937_64 rng(1);
  Fixture f;
  Populate(&f, &rng);
  auto got = ReadAll(f.head, {M(MatchType::kEqual, "job", "")});
  size_t want = 0;
  for (const auto& l : f.series) want += l.Has("job") ? 0 : 1;
  EXPECT_EQ(got.size(), want);
  EXPECT_GT(want, 0u);
  EXPECT_EQ(ReadAll(f.head, {M(MatchType::kRegexMatch, "job", ".*")}).size(), f.series.size());
  EXPECT_EQ(ReadAll(f.head, {}).size(), f.series.size());
  EXPECT_TRUE(ReadAll(f.head, {M(MatchType::kRegexNoMatch, "job", ".*")}).empty());
}

TEST(HeadQueryTest, LabelNamesAndValuesWithoutMatchers) {
  Head head;
  auto app = head.Appender();
  AppendOk(app.get(), Labels{{"__name__", "a"}, {"gpu", "1"}}, 1000, 1);
  AppendOk(app.get(), Labels{{"__name__", "b"}, {"gpu", "0"}, {"uuid", "GPU-1"}}, 1000, 1);
  ASSERT_TRUE(app->Commit().ok());
  auto q = head.Querier(0, 5000);
  EXPECT_EQ(q->LabelNames({}).value(), (std::vector<std::string>{"__name__", "gpu", "uuid"}));
  EXPECT_EQ(q->LabelValues("gpu", {}).value(), (std::vector<std::string>{"0", "1"}));
  EXPECT_TRUE(q->LabelValues("nope", {})->empty());
  // A range that misses the head entirely.
  auto late = head.Querier(10000, 20000);
  EXPECT_TRUE(late->LabelNames({})->empty());
  EXPECT_TRUE(late->LabelValues("gpu", {})->empty());
}

TEST(HeadQueryTest, TimeRangeRestrictsSamplesAndSeries) {
  HeadOptions opts;
  opts.samples_per_chunk = 4;  // several chunks
  Head head(opts);
  auto app = head.Appender();
  Labels a{{"__name__", "a"}};
  Labels b{{"__name__", "b"}};
  for (int64_t t = 0; t < 20; ++t) AppendOk(app.get(), a, t * 10, static_cast<double>(t));
  AppendOk(app.get(), b, 500, 1);
  ASSERT_TRUE(app->Commit().ok());
  auto got = ReadAll(head, {M(MatchType::kRegexMatch, "__name__", ".+")}, 45, 95);
  ASSERT_EQ(got.size(), 1u);  // b has nothing in range
  EXPECT_TRUE(SameSamples(got[0].samples, {{50, 5}, {60, 6}, {70, 7}, {80, 8}, {90, 9}}));
  // Inclusive bounds.
  got = ReadAll(head, {M(MatchType::kEqual, "__name__", "a")}, 50, 50);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(SameSamples(got[0].samples, {{50, 5}}));
}

TEST(HeadQueryTest, IteratorSeekNeverGoesBackwards) {
  HeadOptions opts;
  opts.samples_per_chunk = 3;
  Head head(opts);
  auto app = head.Appender();
  Labels a{{"__name__", "a"}};
  for (int64_t t = 1; t <= 10; ++t) AppendOk(app.get(), a, t * 100, static_cast<double>(t));
  ASSERT_TRUE(app->Commit().ok());
  auto set = head.Querier(kMinTime, kMaxTime)
                 ->Select(std::vector<Matcher>{M(MatchType::kEqual, "__name__", "a")});
  ASSERT_TRUE(set->Next());
  auto it = set->Iterator();
  ASSERT_TRUE(it->Seek(450));
  EXPECT_EQ(it->At().t, 500);
  ASSERT_TRUE(it->Seek(100));  // behind: stays
  EXPECT_EQ(it->At().t, 500);
  ASSERT_TRUE(it->Next());
  EXPECT_EQ(it->At().t, 600);
  ASSERT_TRUE(it->Seek(1000));
  EXPECT_EQ(it->At().t, 1000);
  EXPECT_FALSE(it->Next());
  EXPECT_FALSE(it->Seek(2000));
  // Seek past the end on a fresh iterator.
  auto it2 = set->Iterator();
  EXPECT_FALSE(it2->Seek(5000));
  EXPECT_FALSE(set->Next());
}

TEST(HeadQueryTest, SelectIsASnapshotAndIteratorsOutliveTheSet) {
  Head head;
  auto app = head.Appender();
  Labels a{{"__name__", "a"}};
  AppendOk(app.get(), a, 1000, 1);
  ASSERT_TRUE(app->Commit().ok());
  auto q = head.Querier(kMinTime, kMaxTime);
  std::unique_ptr<SeriesIterator> it;
  {
    auto set = q->Select(std::vector<Matcher>{M(MatchType::kEqual, "__name__", "a")});
    ASSERT_TRUE(set->Next());
    // Appended after Select: not part of this snapshot.
    AppendOk(app.get(), a, 2000, 2);
    ASSERT_TRUE(app->Commit().ok());
    it = set->Iterator();
  }
  std::vector<Sample> got;
  while (it->Next()) got.push_back(it->At());
  EXPECT_TRUE(SameSamples(got, {{1000, 1}}));
  // The same querier selects again and sees the new commit.
  auto again = ReadAll(*q, {M(MatchType::kEqual, "__name__", "a")});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].samples.size(), 2u);
}

}  // namespace
}  // namespace gpumon::tsdb::head
