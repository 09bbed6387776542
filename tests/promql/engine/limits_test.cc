// Limits: max_samples, timeout, the concurrency gate, and query errors.
#include <atomic>
#include <thread>

#include "engine_test_util.h"

namespace gpumon::promql::testing {
namespace {

using LimitsTest = EngineTest;

TEST_F(LimitsTest, TooManySamples) {
  for (int i = 0; i < 10; ++i) {
    Add(Labels{{"__name__", "m"}, {"i", std::to_string(i)}}, 0, kMin, {1, 2, 3, 4, 5});
  }
  EngineOptions o;
  o.max_samples = 20;
  Engine small(o);
  QueryResult r = small.Instant(queryable_, "m", 0);
  EXPECT_TRUE(r.ok()) << r.error;  // 10 samples
  r = small.Range(queryable_, "m", 0, 4 * kMin, kMin);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error_type, ErrorType::kExecution);
  EXPECT_EQ(r.error, "query processing would load too many samples into memory in query execution");
  r = small.Instant(queryable_, "m[5m]", 4 * kMin);
  EXPECT_FALSE(r.ok());
  // The charge that would go over is refused, not counted: the peak is
  // what the query really held.
  EXPECT_GT(r.stats.peak_samples, 0);
  EXPECT_LE(r.stats.peak_samples, 20);
}

TEST_F(LimitsTest, Timeout) {
  for (int i = 0; i < 50; ++i) {
    Add(Labels{{"__name__", "m"}, {"i", std::to_string(i)}}, 0, 15000,
        std::vector<double>(2000, 1));
  }
  EngineOptions o;
  o.timeout_ms = 0;
  Engine e(o);
  QueryResult r = e.Range(queryable_, "sum(rate(m[5m]))", 0, 30000 * 1000, 15000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error_type, ErrorType::kTimeout);
  EXPECT_EQ(r.error, "query timed out in expression evaluation");
}

TEST_F(LimitsTest, ConcurrencyGateQueuesQueries) {
  Add(Labels{{"__name__", "m"}}, 0, kMin, {1});
  EngineOptions o;
  o.max_concurrent = 1;
  o.timeout_ms = 10000;
  Engine e(o);
  std::atomic<int> inside{0}, max_inside{0};
  // A queryable that records how many queries use it at once.
  Queryable slow = [&](int64_t mint, int64_t maxt) {
    int now = ++inside;
    int prev = max_inside.load();
    while (now > prev && !max_inside.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --inside;
    return head_.Querier(mint, maxt);
  };
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    ts.emplace_back([&] {
      if (e.Instant(slow, "m", 0).ok()) ++ok;
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(max_inside.load(), 1);
}

TEST_F(LimitsTest, ErrorTypes) {
  QueryResult r = Instant("sum(", 0);
  EXPECT_EQ(r.error_type, ErrorType::kBadData);
  r = Range("m[5m]", 0, 10, 1);
  EXPECT_EQ(r.error_type, ErrorType::kBadData);
  EXPECT_STREQ(ErrorTypeName(ErrorType::kTimeout), "timeout");
  EXPECT_STREQ(ErrorTypeName(ErrorType::kExecution), "execution");
  EXPECT_STREQ(ErrorTypeName(ErrorType::kBadData), "bad_data");
}

TEST_F(LimitsTest, StatsCountLoadedSamples) {
  Add(Labels{{"__name__", "m"}}, 0, kMin, {1, 2, 3, 4, 5});
  QueryResult r = Instant("sum_over_time(m[10m])", 4 * kMin);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.stats.samples_loaded, 5);
}

}  // namespace
}  // namespace gpumon::promql::testing
