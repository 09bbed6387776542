// WAL replay, truncation, deletion and statistics.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <variant>
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

// Records every sink call in order, as a WAL would.
class LogSink : public WalSink {
 public:
  using Record = std::variant<std::vector<RefSeries>, std::vector<RefSample>,
                              std::vector<record::RefTombstone>>;
  Status LogSeries(std::span<const RefSeries> s) override {
    log.emplace_back(std::vector<RefSeries>(s.begin(), s.end()));
    return Status::Ok();
  }
  Status LogSamples(std::span<const RefSample> s) override {
    log.emplace_back(std::vector<RefSample>(s.begin(), s.end()));
    return Status::Ok();
  }
  Status LogTombstones(std::span<const record::RefTombstone> t) override {
    log.emplace_back(std::vector<record::RefTombstone>(t.begin(), t.end()));
    return Status::Ok();
  }
  std::vector<Record> log;
};

Status Replay(Head* head, const LogSink& sink) {
  for (const auto& rec : sink.log) {
    Status st;
    if (auto* series = std::get_if<std::vector<RefSeries>>(&rec)) {
      for (const auto& s : *series) {
        st = head->ReplaySeries(s.ref, s.labels);
        if (!st.ok()) return st;
      }
    } else if (auto* samples = std::get_if<std::vector<RefSample>>(&rec)) {
      st = head->ReplaySamples(*samples);
    } else {
      st = head->ReplayTombstones(std::get<std::vector<record::RefTombstone>>(rec));
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

struct Dump {
  std::map<uint64_t, Labels> refs;
  std::vector<testing::SeriesSamples> data;
};

Dump DumpHead(const Head& head) {
  Dump d;
  d.data = ReadAll(head, {});
  (void)head.ForEachSeriesInRange(kMinTime, kMaxTime, [&](uint64_t ref, const Labels& l, auto) {
    d.refs[ref] = l;
    return Status::Ok();
  });
  return d;
}

void ExpectSameData(const Dump& a, const Dump& b) {
  EXPECT_EQ(a.refs, b.refs);
  ASSERT_EQ(a.data.size(), b.data.size());
  for (size_t i = 0; i < a.data.size(); ++i) {
    EXPECT_EQ(a.data[i].labels, b.data[i].labels);
    EXPECT_TRUE(SameSamples(a.data[i].samples, b.data[i].samples)) << a.data[i].labels.ToString();
  }
}

TEST(HeadLifecycleTest, ReplayRestoresIdenticalStateAndRefs) {
  HeadOptions opts;
  opts.samples_per_chunk = 7;
  opts.ooo_window_ms = 5000;
  Head head(opts);
  LogSink sink;
  head.SetWalSink(&sink);
  std::mt19937_64 rng(11);
  std::vector<Labels> series;
  for (int i = 0; i < 40; ++i) {
    series.push_back(Labels{{"__name__", "m" + std::to_string(i % 4)}, {"gpu", std::to_string(i)}});
  }
  // Two appenders interleave commits, so WAL order differs from ref order.
  auto a = head.Appender();
  auto b = head.Appender();
  for (int round = 0; round < 30; ++round) {
    const int64_t t = 10000 + round * 1000;
    for (size_t i = 0; i < series.size(); ++i) {
      auto* app = (i + static_cast<size_t>(round)) % 2 ? a.get() : b.get();
      double v = i % 3 == 0 ? StaleNaN() : static_cast<double>(rng() % 1000) / 10;
      (void)app->Append(0, series[i], t, v);
      if (rng() % 10 == 0) (void)app->Append(0, series[i], t - 2500, -0.0);  // out of order
    }
    if (round % 2) {
      ASSERT_TRUE(a->Commit().ok());
      ASSERT_TRUE(b->Commit().ok());
    } else {
      ASSERT_TRUE(b->Commit().ok());
      ASSERT_TRUE(a->Commit().ok());
    }
    if (round == 20) {
      ASSERT_TRUE(
          head.Delete(std::vector<Matcher>{M(MatchType::kEqual, "__name__", "m1")}, 12000, 14000)
              .ok());
    }
  }
  // A commit rejected at commit time leaves no trace in the log's effect.
  auto c = head.Appender();
  AppendOk(c.get(), series[0], 60000, 1);
  AppendOk(c.get(), series[1], 60000, 1);
  AppendOk(a.get(), series[0], 70000, 2);
  ASSERT_TRUE(a->Commit().ok());
  EXPECT_FALSE(c->Commit().ok());

  Head replayed(opts);
  ASSERT_TRUE(Replay(&replayed, sink).ok());
  ExpectSameData(DumpHead(head), DumpHead(replayed));
  auto s1 = head.Stats(), s2 = replayed.Stats();
  EXPECT_EQ(s1.series, s2.series);
  EXPECT_EQ(s1.samples, s2.samples);
  EXPECT_EQ(s1.chunks, s2.chunks);
  EXPECT_EQ(s1.ooo_samples, s2.ooo_samples);
  EXPECT_GT(s1.ooo_samples, 0u);
  EXPECT_EQ(s2.replay_unknown_refs, 0u);
  EXPECT_EQ(head.MinTime(), replayed.MinTime());
  EXPECT_EQ(head.MaxTime(), replayed.MaxTime());
  // New series get refs above every replayed one; old labels keep theirs.
  auto app = replayed.Appender();
  auto old_ref = app->Append(0, series[5], 100000, 1);
  auto orig_ref = head.Appender()->Append(0, series[5], 100000, 1);
  ASSERT_TRUE(old_ref.ok() && orig_ref.ok());
  EXPECT_EQ(*old_ref, *orig_ref);
  auto new_ref = app->Append(0, Labels{{"__name__", "new"}}, 100000, 1);
  ASSERT_TRUE(new_ref.ok());
  for (const auto& [ref, l] : DumpHead(head).refs) EXPECT_GT(*new_ref, ref);
}

TEST(HeadLifecycleTest, ReplayAliasesDuplicateSeriesAndCountsUnknownRefs) {
  Head head;
  Labels l{{"__name__", "a"}};
  ASSERT_TRUE(head.ReplaySeries(5, l).ok());
  ASSERT_TRUE(head.ReplaySeries(5, l).ok());  // idempotent
  ASSERT_TRUE(head.ReplaySeries(9, l).ok());  // same labels, another ref
  EXPECT_FALSE(head.ReplaySeries(5, Labels{{"__name__", "b"}}).ok());
  EXPECT_FALSE(head.ReplaySeries(0, l).ok());
  std::vector<RefSample> samples = {{5, 1000, 1}, {9, 2000, 2}, {77, 3000, 3}, {5, 500, 0}};
  ASSERT_TRUE(head.ReplaySamples(samples).ok());
  auto got = ReadAll(head, {});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(SameSamples(got[0].samples, {{1000, 1}, {2000, 2}}));
  auto st = head.Stats();
  EXPECT_EQ(st.replay_unknown_refs, 1u);
  EXPECT_EQ(st.replay_skipped_samples, 1u);
  EXPECT_EQ(st.series, 1u);
  EXPECT_TRUE(head.HasSeries(5));
  EXPECT_FALSE(head.HasSeries(9));
  auto app = head.Appender();
  auto r = app->Append(0, Labels{{"__name__", "c"}}, 1, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 10u);
}

TEST(HeadLifecycleTest, TruncateDropsOldChunksAndEmptySeries) {
  HeadOptions opts;
  opts.samples_per_chunk = 10;
  Head head(opts);
  Labels keep{{"__name__", "keep"}, {"uuid", "GPU-keep"}};
  Labels gone{{"__name__", "gone"}, {"uuid", "GPU-gone"}};
  auto app = head.Appender();
  for (int64_t t = 0; t < 100; ++t) AppendOk(app.get(), keep, t * 100, static_cast<double>(t));
  for (int64_t t = 0; t < 20; ++t) AppendOk(app.get(), gone, t * 100, 1);
  auto gone_ref = app->Append(0, gone, 2000, 1);
  ASSERT_TRUE(gone_ref.ok());
  ASSERT_TRUE(app->Commit().ok());
  // A series created by an uncommitted appender survives truncation.
  auto pending = head.Appender();
  Labels fresh{{"__name__", "fresh"}};
  AppendOk(pending.get(), fresh, 9000, 1);

  // A querier's snapshot taken before truncation stays readable after it.
  auto set = head.Querier(kMinTime, kMaxTime)
                 ->Select(std::vector<Matcher>{M(MatchType::kEqual, "__name__", "keep")});
  ASSERT_TRUE(set->Next());
  auto it = set->Iterator();

  const size_t symbols_before = head.Stats().symbols;
  ASSERT_TRUE(head.Truncate(5000).ok());
  EXPECT_EQ(head.MinValidTime(), 5000);
  EXPECT_EQ(head.NumSeries(), 2u);  // keep + fresh
  EXPECT_FALSE(head.HasSeries(*gone_ref));
  EXPECT_EQ(head.MinTime(), 5000);
  EXPECT_EQ(head.MaxTime(), 9900);
  EXPECT_LT(head.Stats().symbols, symbols_before);

  int n = 0;
  while (it->Next()) ++n;
  EXPECT_EQ(n, 100);

  ASSERT_TRUE(pending->Commit().ok());
  auto got = ReadAll(head, {M(MatchType::kRegexMatch, "__name__", ".+")});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].labels, fresh);
  EXPECT_EQ(got[1].samples.size(), 50u);
  EXPECT_EQ(got[1].samples.front().t, 5000);
  auto q = head.Querier(kMinTime, kMaxTime);
  EXPECT_EQ(q->LabelValues("uuid", {}).value(), (std::vector<std::string>{"GPU-keep"}));
  // Out of bounds now; the dropped series comes back with a new ref.
  EXPECT_FALSE(app->Append(0, keep, 4000, 1).ok());
  auto again = app->Append(0, gone, 6000, 1);
  ASSERT_TRUE(again.ok());
  EXPECT_GT(*again, *gone_ref);
  ASSERT_TRUE(app->Commit().ok());
  // Truncating everything empties the head.
  ASSERT_TRUE(head.Truncate(1000000).ok());
  EXPECT_EQ(head.NumSeries(), 0u);
  EXPECT_EQ(head.MinTime(), kMaxTime);
  EXPECT_EQ(head.Stats().symbols, 0u);
}

TEST(HeadLifecycleTest, DeleteRemovesSamplesInRangeAndLogsTombstones) {
  HeadOptions opts;
  opts.samples_per_chunk = 4;
  Head head(opts);
  LogSink sink;
  head.SetWalSink(&sink);
  Labels a{{"__name__", "a"}, {"gpu", "0"}};
  Labels b{{"__name__", "a"}, {"gpu", "1"}};
  auto app = head.Appender();
  for (int64_t t = 0; t < 10; ++t) {
    AppendOk(app.get(), a, t * 10, static_cast<double>(t));
    AppendOk(app.get(), b, t * 10, static_cast<double>(t));
  }
  ASSERT_TRUE(app->Commit().ok());
  ASSERT_TRUE(head.Delete(std::vector<Matcher>{M(MatchType::kEqual, "gpu", "0")}, 25, 75).ok());
  auto got = ReadAll(head, {M(MatchType::kEqual, "__name__", "a")});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(SameSamples(got[0].samples, {{0, 0}, {10, 1}, {20, 2}, {80, 8}, {90, 9}}));
  EXPECT_EQ(got[1].samples.size(), 10u);
  auto* ts = std::get_if<std::vector<record::RefTombstone>>(&sink.log.back());
  ASSERT_NE(ts, nullptr);
  ASSERT_EQ(ts->size(), 1u);
  EXPECT_EQ((*ts)[0].mint, 25);
  EXPECT_EQ((*ts)[0].maxt, 75);
  // Appending continues after the last committed sample.
  AppendOk(app.get(), a, 100, 10);
  ASSERT_TRUE(app->Commit().ok());
  // Deleting everything of a series lets truncation collect it.
  ASSERT_TRUE(
      head.Delete(std::vector<Matcher>{M(MatchType::kEqual, "gpu", "1")}, kMinTime, kMaxTime).ok());
  EXPECT_EQ(ReadAll(head, {M(MatchType::kEqual, "gpu", "1")}).size(), 0u);
  ASSERT_TRUE(head.Truncate(0).ok());
  EXPECT_EQ(head.NumSeries(), 1u);
  EXPECT_EQ(head.MaxTime(), 100);
}

TEST(HeadLifecycleTest, StatsCountSeriesSamplesAndCardinalities) {
  Head head;
  auto app = head.Appender();
  for (int node = 0; node < 3; ++node) {
    for (int gpu = 0; gpu < 8; ++gpu) {
      for (const char* metric : {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"}) {
        Labels l{{"__name__", metric},
                 {"gpu", std::to_string(gpu)},
                 {"Hostname", "node" + std::to_string(node)},
                 {"UUID", "GPU-" + std::to_string(node * 8 + gpu)}};
        for (int64_t t = 0; t < 3; ++t) AppendOk(app.get(), l, t * 15000, 40.0 + t);
      }
    }
  }
  ASSERT_TRUE(app->Commit().ok());
  auto st = head.Stats(3);
  EXPECT_EQ(st.series, 48u);
  EXPECT_EQ(st.samples, 144u);
  EXPECT_EQ(st.chunks, 48u);
  EXPECT_EQ(st.min_time, 0);
  EXPECT_EQ(st.max_time, 30000);
  ASSERT_EQ(st.top_labels.size(), 3u);
  EXPECT_EQ(st.top_labels[0].name, "UUID");
  EXPECT_EQ(st.top_labels[0].values, 24u);
  EXPECT_EQ(st.top_labels[0].series, 48u);
  EXPECT_EQ(st.top_labels[1].name, "gpu");
  EXPECT_EQ(st.top_labels[1].values, 8u);
  EXPECT_EQ(st.top_labels[2].name, "Hostname");
  // Symbols: 4 names + 2 metrics + 8 gpus + 3 hosts + 24 uuids.
  EXPECT_EQ(st.symbols, 41u);
  EXPECT_GT(st.memory_bytes, st.series * 100);
  EXPECT_EQ(st.memory_bytes, st.series_bytes + st.index_bytes);
}

}  // namespace
}  // namespace gpumon::tsdb::head
