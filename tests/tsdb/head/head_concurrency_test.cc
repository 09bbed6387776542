// Appenders, queriers and truncation running at once: queries must see
// whole commits (never part of one) and never a torn sample.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "head_test_util.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::tsdb::head {
namespace {

using testing::M;

constexpr int kWriters = 3;
constexpr int kSeriesPerWriter = 50;

// Each writer commits all its series at one timestamp per batch, with a
// value derived from (series, t), so a reader can check atomicity and
// integrity.
double ValueFor(int series, int64_t t) { return static_cast<double>(t) * 1000 + series; }

TEST(HeadConcurrencyTest, QueriesSeeWholeCommitsWhileAppendingAndTruncating) {
  HeadOptions opts;
  opts.samples_per_chunk = 16;  // frequent chunk cuts and re-encoding
  opts.chunk_range_ms = 1000;
  Head head(opts);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> committed_batches{0};
  std::atomic<int> failures{0};
  std::atomic<int> selects{0};
  std::atomic<int64_t> writer_t[kWriters] = {};

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::vector<Labels> series;
      std::vector<uint64_t> refs(kSeriesPerWriter, 0);
      for (int i = 0; i < kSeriesPerWriter; ++i) {
        series.push_back(Labels{
            {"__name__", "m"}, {"writer", std::to_string(w)}, {"series", std::to_string(i)}});
      }
      auto app = head.Appender();
      for (int64_t t = 1; !stop.load(); ++t) {
        for (int i = 0; i < kSeriesPerWriter; ++i) {
          auto r = app->Append(refs[i], series[i], t * 10, ValueFor(i, t * 10));
          if (!r.ok()) {
            ADD_FAILURE() << r.status().message();
            failures.fetch_add(1);
            return;
          }
          refs[i] = *r;
        }
        Status st = app->Commit();
        if (!st.ok()) {
          ADD_FAILURE() << st.message();
          failures.fetch_add(1);
          return;
        }
        committed_batches.fetch_add(1);
        writer_t[w].store(t * 10);
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      while (!stop.load()) {
        auto q = head.Querier(kMinTime, kMaxTime);
        const std::string writer = std::to_string(r % kWriters);
        auto set = q->Select(std::vector<Matcher>{M(MatchType::kEqual, "writer", writer)});
        int64_t group_max = -1;
        int n = 0;
        while (set->Next()) {
          const int idx = std::stoi(std::string(set->labels().Get("series")));
          auto it = set->Iterator();
          int64_t prev = kMinTime;
          while (it->Next()) {
            Sample s = it->At();
            if (s.t <= prev || s.v != ValueFor(idx, s.t)) {
              ADD_FAILURE() << "bad sample t=" << s.t << " v=" << s.v;
              failures.fetch_add(1);
              return;
            }
            prev = s.t;
          }
          // Every series of a writer ends at the same commit.
          if (group_max == -1) group_max = prev;
          if (prev != group_max) {
            ADD_FAILURE() << "partial commit visible: " << prev << " vs " << group_max;
            failures.fetch_add(1);
            return;
          }
          ++n;
        }
        if (n != 0 && n != kSeriesPerWriter) {
          ADD_FAILURE() << "saw " << n << " series of a writer";
          failures.fetch_add(1);
          return;
        }
        (void)q->LabelValues("series",
                             std::vector<Matcher>{M(MatchType::kEqual, "writer", writer)});
        selects.fetch_add(1);
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      // Keep the newest second of data of the slowest writer.
      int64_t slowest = kMaxTime;
      for (const auto& t : writer_t) slowest = std::min(slowest, t.load());
      if (slowest > 1000) {
        Status st = head.Truncate(slowest - 1000);
        if (!st.ok()) ADD_FAILURE() << st.message();
      }
      (void)head.Stats();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop.store(true);
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(committed_batches.load(), 10);
  EXPECT_GT(selects.load(), 2);
  EXPECT_EQ(head.NumSeries(), static_cast<size_t>(kWriters * kSeriesPerWriter));
}

// Series churn: writers move to new series every few batches while old ones
// are truncated away (freeing directory blocks) and stale refs are retried.
TEST(HeadConcurrencyTest, SeriesChurnWithTruncationAndStaleRefs) {
  HeadOptions opts;
  opts.samples_per_chunk = 8;
  Head head(opts);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<int64_t> writer_t[2] = {};
  std::atomic<uint64_t> created{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      auto app = head.Appender();
      std::vector<uint64_t> refs(600, 0);
      int gen = -1;
      for (int64_t t = 1; !stop.load(); ++t) {
        if (static_cast<int>(t / 5) != gen) {
          gen = static_cast<int>(t / 5);
          created.fetch_add(refs.size());
        }
        for (size_t i = 0; i < refs.size(); ++i) {
          // Refs of the previous generation stay in use: the head falls back
          // to the labels once a ref is gone.
          Labels l{{"__name__", "churn"},
                   {"w", std::to_string(w)},
                   {"gen", std::to_string(gen)},
                   {"i", std::to_string(i)}};
          auto r = app->Append(refs[i], l, t * 10, static_cast<double>(t));
          if (!r.ok()) {
            ADD_FAILURE() << r.status().message();
            failures.fetch_add(1);
            return;
          }
          refs[i] = *r;
        }
        if (Status st = app->Commit(); !st.ok()) {
          ADD_FAILURE() << st.message();
          failures.fetch_add(1);
          return;
        }
        writer_t[w].store(t * 10);
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const int64_t slowest = std::min(writer_t[0].load(), writer_t[1].load());
      if (slowest > 30) {
        if (Status st = head.Truncate(slowest - 30); !st.ok()) ADD_FAILURE() << st.message();
      }
    }
  });
  threads.emplace_back([&] {
    while (!stop.load()) {
      auto q = head.Querier(kMinTime, kMaxTime);
      auto set = q->Select(std::vector<Matcher>{M(MatchType::kEqual, "w", "1")});
      while (set->Next()) {
        auto it = set->Iterator();
        int64_t prev = kMinTime;
        while (it->Next()) {
          if (it->At().t <= prev || it->At().v * 10 != static_cast<double>(it->At().t)) {
            ADD_FAILURE() << "bad sample at " << it->At().t;
            failures.fetch_add(1);
            return;
          }
          prev = it->At().t;
        }
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  stop.store(true);
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  // Old generations were collected: far fewer series than were created.
  EXPECT_GT(created.load(), 2400u);
  EXPECT_LT(head.NumSeries(), created.load());
}

TEST(HeadConcurrencyTest, ConcurrentCreationOfTheSameSeriesYieldsOneRef) {
  Head head;
  constexpr int kThreads = 4;
  std::vector<std::vector<uint64_t>> refs(kThreads);
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      auto app = head.Appender();
      for (int i = 0; i < 500; ++i) {
        auto r = app->Append(0, Labels{{"__name__", "x"}, {"i", std::to_string(i)}}, 1000, 1);
        refs[w].push_back(r.ok() ? *r : 0);
      }
      (void)app->Commit();
    });
  }
  for (auto& t : threads) t.join();
  for (int w = 1; w < kThreads; ++w) EXPECT_EQ(refs[w], refs[0]);
  EXPECT_EQ(head.NumSeries(), 500u);
  EXPECT_EQ(head.Stats().samples, 500u);
}

}  // namespace
}  // namespace gpumon::tsdb::head
