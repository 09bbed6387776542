// Limits inside the evaluation: deadlines and cancellation polled in the
// loops that can run long (subquery and range-query steps, range-function
// windows, series iteration, the concurrency queue), the sample budget
// charged while results are produced, and no exception escaping the engine.
//
// The runaway queries below would run for hours, or until memory runs out,
// if a limit were only checked between operations. Each runs on its own
// thread under a hang guard far above what the query needs, so a
// regression fails the test instead of stalling the suite; no test asserts
// how fast anything is.
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <thread>

#include "common/cancellation.h"
#include "common/process_stats.h"
#include "engine_test_util.h"

namespace gpumon::promql::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// What a query thread needs, shared so that a thread left behind by the
// hang guard never outlives it.
struct World {
  tsdb::head::Head head;
  Queryable queryable = [this](int64_t mint, int64_t maxt) { return head.Querier(mint, maxt); };
};

// Runs `fn` on a thread of its own. Gives up after `guard` (a hang guard
// for regressions, far above the time the query needs) and leaves the
// thread running detached; `fn` must hold what it uses by shared_ptr.
std::optional<QueryResult> RunGuarded(std::function<QueryResult()> fn,
                                      seconds guard = seconds(30)) {
  auto done = std::make_shared<std::promise<QueryResult>>();
  std::future<QueryResult> f = done->get_future();
  std::thread([done, fn = std::move(fn)] { done->set_value(fn()); }).detach();
  if (f.wait_for(guard) != std::future_status::ready) return std::nullopt;
  return f.get();
}

class QueryLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A gauge sampled every 15 s for an hour: sparse under a 1 ms grid.
    auto app = world_->head.Appender();
    for (int64_t t = 0; t <= 3600 * 1000; t += 15000) {
      ASSERT_TRUE(app->Append(0, Labels{{"__name__", "m"}}, kStart + t, 1).ok());
    }
    ASSERT_TRUE(app->Commit().ok());
  }

  // An instant query on a thread of its own, over world_.
  std::optional<QueryResult> Instant(std::shared_ptr<Engine> e, std::string q, int64_t ts,
                                     QueryOptions qopts = {}) {
    auto w = world_;
    return RunGuarded([w, e, q, ts, qopts] { return e->Instant(w->queryable, q, ts, qopts); });
  }

  static constexpr int64_t kStart = 1'700'000'000'000;  // data start (ms)
  static constexpr int64_t kEnd = kStart + 3600 * 1000;
  std::shared_ptr<World> world_ = std::make_shared<World>();
};

std::shared_ptr<Engine> MakeEngine(int64_t timeout_ms, int64_t max_samples = 50'000'000) {
  EngineOptions o;
  o.timeout_ms = timeout_ms;
  o.max_samples = max_samples;
  return std::make_shared<Engine>(o);
}

TEST_F(QueryLimitsTest, RequestTimeoutStopsSubqueryStepLoop) {
  // 3e12 inner steps whose windows are almost all empty: no memory grows,
  // only the step loop of rate() runs.
  auto e = MakeEngine(10 * 60 * 1000);
  QueryOptions qopts;
  qopts.timeout_ms = 200;
  auto r = Instant(e, "max_over_time(rate(m[1m])[100y:1ms])", kEnd, qopts);
  ASSERT_TRUE(r.has_value()) << "query still running after the hang guard";
  EXPECT_EQ(r->error_type, ErrorType::kTimeout) << r->error;
  EXPECT_EQ(r->error, "query timed out in expression evaluation");
}

TEST_F(QueryLimitsTest, EngineTimeoutStopsSubqueryStepLoop) {
  // --query.timeout alone, no request timeout.
  auto e = MakeEngine(200);
  auto r = Instant(e, "max_over_time(rate(m[1m])[100y:1ms])", kEnd);
  ASSERT_TRUE(r.has_value()) << "query still running after the hang guard";
  EXPECT_EQ(r->error_type, ErrorType::kTimeout) << r->error;
}

TEST_F(QueryLimitsTest, TimeoutStopsRangeQueryStepLoop) {
  // A range query straight through the engine (the API's 11,000-point
  // check is not the engine's): 100 years at 1 ms.
  auto e = MakeEngine(200);
  auto w = world_;
  auto r = RunGuarded([w, e] {
    return e->Range(w->queryable, "rate(m[1m])", kStart, kStart + 100LL * 365 * 86400 * 1000, 1);
  });
  ASSERT_TRUE(r.has_value()) << "query still running after the hang guard";
  EXPECT_EQ(r->error_type, ErrorType::kTimeout) << r->error;
}

TEST_F(QueryLimitsTest, SparseSelectorUnderFineSubqueryAnswers) {
  // rate(up[30d:1ms]): the inner selector has values only near its
  // samples; the answer is a normal result, not an error.
  auto e = MakeEngine(60 * 1000);
  auto r = Instant(e, "count_over_time(m[30d:1ms])", kEnd + 60 * 1000);
  ASSERT_TRUE(r.has_value()) << "query still running after the hang guard";
  ASSERT_TRUE(r->ok()) << r->error;
  const auto& v = std::get<Vector>(r->value);
  ASSERT_EQ(v.size(), 1u);
  // One point per ms from the first sample to the end: an hour and a minute.
  EXPECT_EQ(v[0].f, 3660.0 * 1000 + 1);
}

TEST_F(QueryLimitsTest, CancellationStopsRunningQuery) {
  auto e = MakeEngine(10 * 60 * 1000);
  auto cancel = std::make_shared<Cancellation>();
  auto w = world_;
  auto started = std::make_shared<std::promise<void>>();
  auto started_f = started->get_future();
  auto done = std::make_shared<std::promise<QueryResult>>();
  auto f = done->get_future();
  std::thread([w, e, cancel, started, done] {
    QueryOptions qopts;
    qopts.cancel = cancel.get();
    started->set_value();
    done->set_value(e->Instant(w->queryable, "max_over_time(rate(m[1m])[100y:1ms])", kEnd, qopts));
  }).detach();
  started_f.wait();
  // Not finished on its own: the query needs hours.
  EXPECT_EQ(f.wait_for(milliseconds(100)), std::future_status::timeout);
  cancel->Cancel();
  ASSERT_EQ(f.wait_for(seconds(30)), std::future_status::ready) << "cancel did not stop the query";
  QueryResult r = f.get();
  EXPECT_EQ(r.error_type, ErrorType::kCanceled) << r.error;
  EXPECT_EQ(r.error, "query was canceled in expression evaluation");
}

TEST_F(QueryLimitsTest, CancelledBeforeStartDoesNotRun) {
  Cancellation cancel;
  cancel.Cancel();
  Engine e;
  QueryOptions qopts;
  qopts.cancel = &cancel;
  QueryResult r = e.Instant(world_->queryable, "m", kEnd, qopts);
  EXPECT_EQ(r.error_type, ErrorType::kCanceled) << r.error;
}

// A querier whose series never end (each empty), or that throws.
class EndlessSeriesSet : public tsdb::SeriesSet {
 public:
  bool Next() override {
    labels_ = Labels{{"__name__", "x"}, {"i", std::to_string(i_++)}};
    return true;
  }
  const Labels& labels() const override { return labels_; }
  std::unique_ptr<tsdb::SeriesIterator> Iterator() const override { return nullptr; }

 private:
  Labels labels_;
  int64_t i_ = 0;
};

class FakeQuerier : public tsdb::Querier {
 public:
  enum class Mode { kEndless, kThrowRuntime, kThrowBadAlloc };
  explicit FakeQuerier(Mode mode) : mode_(mode) {}
  std::unique_ptr<tsdb::SeriesSet> Select(std::span<const tsdb::Matcher>,
                                          const tsdb::SelectHints&) const override {
    switch (mode_) {
      case Mode::kThrowRuntime:
        throw std::runtime_error("disk on fire");
      case Mode::kThrowBadAlloc:
        throw std::bad_alloc();
      case Mode::kEndless:
        break;
    }
    return std::make_unique<EndlessSeriesSet>();
  }
  Result<std::vector<std::string>> LabelNames(std::span<const tsdb::Matcher>) const override {
    return std::vector<std::string>{};
  }
  Result<std::vector<std::string>> LabelValues(const std::string&,
                                               std::span<const tsdb::Matcher>) const override {
    return std::vector<std::string>{};
  }

 private:
  Mode mode_;
};

Queryable FakeQueryable(FakeQuerier::Mode mode) {
  return [mode](int64_t, int64_t) { return std::make_unique<FakeQuerier>(mode); };
}

TEST_F(QueryLimitsTest, TimeoutStopsSeriesIteration) {
  auto e = MakeEngine(200);
  for (const char* q : {"x", "rate(x[5m])"}) {
    auto r =
        RunGuarded([e, q] { return e->Instant(FakeQueryable(FakeQuerier::Mode::kEndless), q, 0); });
    ASSERT_TRUE(r.has_value()) << q << ": still running after the hang guard";
    EXPECT_EQ(r->error_type, ErrorType::kTimeout) << q << ": " << r->error;
  }
}

TEST_F(QueryLimitsTest, CancelStopsSeriesIteration) {
  auto e = MakeEngine(10 * 60 * 1000);
  auto cancel = std::make_shared<Cancellation>();
  std::thread canceller([cancel] {
    std::this_thread::sleep_for(milliseconds(50));
    cancel->Cancel();
  });
  auto r = RunGuarded([e, cancel] {
    QueryOptions qopts;
    qopts.cancel = cancel.get();
    return e->Instant(FakeQueryable(FakeQuerier::Mode::kEndless), "x", 0, qopts);
  });
  canceller.join();
  ASSERT_TRUE(r.has_value()) << "still running after the hang guard";
  EXPECT_EQ(r->error_type, ErrorType::kCanceled) << r->error;
}

TEST_F(QueryLimitsTest, CancellationEndsWaitInQueue) {
  EngineOptions o;
  o.max_concurrent = 1;
  o.timeout_ms = 10 * 60 * 1000;
  auto e = std::make_shared<Engine>(o);
  // The first query holds the only slot until released.
  auto gate = std::make_shared<std::promise<void>>();
  std::shared_future<void> open = gate->get_future().share();
  auto entered = std::make_shared<std::promise<void>>();
  auto w = world_;
  Queryable blocking = [w, open, entered](int64_t mint, int64_t maxt) {
    entered->set_value();
    open.wait();
    return w->head.Querier(mint, maxt);
  };
  auto first =
      std::async(std::launch::async, [e, blocking] { return e->Instant(blocking, "m", kEnd); });
  entered->get_future().wait();

  auto cancel = std::make_shared<Cancellation>();
  auto second = std::make_shared<std::promise<QueryResult>>();
  auto second_f = second->get_future();
  std::thread([e, w, cancel, second] {
    QueryOptions qopts;
    qopts.cancel = cancel.get();
    second->set_value(e->Instant(w->queryable, "m", kEnd, qopts));
  }).detach();
  EXPECT_EQ(second_f.wait_for(milliseconds(50)), std::future_status::timeout);
  cancel->Cancel();
  const bool ready = second_f.wait_for(seconds(30)) == std::future_status::ready;
  gate->set_value();
  ASSERT_TRUE(ready) << "cancel did not end the wait in the queue";
  QueryResult r = second_f.get();
  EXPECT_EQ(r.error_type, ErrorType::kCanceled) << r.error;
  EXPECT_EQ(r.error, "query was canceled in query queue");
  EXPECT_TRUE(first.get().ok());
}

// Highest RSS seen while `fn` runs, above the RSS before it, sampled by a
// second thread: a loose bound on the memory a query takes.
template <typename Fn>
int64_t RssGrowthDuring(Fn fn) {
  auto rss = [] {
    auto s = ReadProcessStats();
    return s ? static_cast<int64_t>(s->resident_bytes) : 0;
  };
  const int64_t base = rss();
  std::atomic<bool> stop{false};
  std::atomic<int64_t> peak{base};
  std::thread sampler([&] {
    while (!stop.load()) {
      const int64_t now = rss();
      if (now > peak.load()) peak.store(now);
      std::this_thread::sleep_for(milliseconds(2));
    }
  });
  fn();
  stop.store(true);
  sampler.join();
  return std::max<int64_t>(peak.load(), rss()) - base;
}

TEST_F(QueryLimitsTest, SampleLimitBoundsPeakOfFineSubquery) {
  // 86.4 M inner steps against the default 50 M budget.
  auto e = MakeEngine(10 * 60 * 1000);
  std::optional<QueryResult> r;
  const int64_t growth =
      RssGrowthDuring([&] { r = Instant(e, "count_over_time(vector(1)[1d:1ms])", kEnd); });
  ASSERT_TRUE(r.has_value()) << "query still running after the hang guard";
  EXPECT_EQ(r->error_type, ErrorType::kExecution) << r->error;
  EXPECT_EQ(r->error,
            "query processing would load too many samples into memory in query execution");
  EXPECT_LE(r->stats.peak_samples, e->options().max_samples);
  EXPECT_LT(growth, 500LL << 20) << "RSS grew by " << (growth >> 20) << " MiB";
}

TEST_F(QueryLimitsTest, SampleLimitIsCheckedWhilePointsAreProduced) {
  // Outputs whose size is not known up front: absent() per inner step, a
  // selector filling a fine grid, raw samples loaded for a range.
  struct Case {
    const char* query;
    int64_t max_samples;
  };
  for (const Case& c : {Case{"count_over_time(absent(nothing)[1d:1ms])", 1'000'000},
                        Case{"count_over_time(vector(time())[1d:1ms])", 1'000'000},
                        Case{"count_over_time(m[1d:1ms])", 1'000'000},
                        // 241 raw samples loaded against a budget of 100.
                        Case{"count_over_time(m[1d])", 100}}) {
    auto e = MakeEngine(10 * 60 * 1000, c.max_samples);
    std::optional<QueryResult> r;
    const int64_t growth = RssGrowthDuring([&] { r = Instant(e, c.query, kEnd); });
    ASSERT_TRUE(r.has_value()) << c.query << ": still running after the hang guard";
    EXPECT_EQ(r->error_type, ErrorType::kExecution) << c.query << ": " << r->error;
    EXPECT_LE(r->stats.peak_samples, c.max_samples) << c.query;
    EXPECT_LT(growth, 500LL << 20) << c.query << ": RSS grew by " << (growth >> 20) << " MiB";
  }
}

TEST_F(QueryLimitsTest, PeakWithinLimitAnswers) {
  // Just under the budget: the same query answers, and the peak says how
  // close it came.
  auto e = MakeEngine(60 * 1000, 200'000);
  auto r = Instant(e, "count_over_time(vector(1)[50s:1ms])", kEnd);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->ok()) << r->error;
  EXPECT_EQ(std::get<Vector>(r->value)[0].f, 50000.0);
  EXPECT_GE(r->stats.peak_samples, 50000);
  EXPECT_LE(r->stats.peak_samples, 200'000);
}

TEST_F(QueryLimitsTest, CoarseRangeQueryLoadsOnlyWindows) {
  // A day at 15 s, queried at a 1 h step: range selectors read the windows
  // the steps see, not the whole day, and answer as instant queries do.
  auto w = std::make_shared<World>();
  auto app = w->head.Appender();
  for (int64_t t = 0; t <= 86400 * 1000; t += 15000) {
    ASSERT_TRUE(app->Append(0, Labels{{"__name__", "c"}}, t, static_cast<double>(t) / 1000).ok());
  }
  ASSERT_TRUE(app->Commit().ok());
  Engine e;
  const int64_t step = 3600 * 1000, start = 2 * step, end = 23 * step;
  for (const char* q : {"rate(c[5m])", "count_over_time(c[10m] offset 7m)", "timestamp(c)",
                        "sum_over_time(c[2h])"}) {
    QueryResult r = e.Range(w->queryable, q, start, end, step);
    ASSERT_TRUE(r.ok()) << q << ": " << r.error;
    const auto& m = std::get<Matrix>(r.value);
    ASSERT_EQ(m.size(), 1u) << q;
    ASSERT_EQ(m[0].points.size(), 22u) << q;
    for (const FPoint& p : m[0].points) {
      QueryResult i = e.Instant(w->queryable, q, p.t);
      ASSERT_TRUE(i.ok()) << q << ": " << i.error;
      const auto& v = std::get<Vector>(i.value);
      ASSERT_EQ(v.size(), 1u) << q << " at " << p.t;
      EXPECT_EQ(v[0].f, p.f) << q << " at " << p.t;
    }
    if (std::string_view(q) != "sum_over_time(c[2h])") {
      // 22 windows of at most 41 samples, far from the day's 5,761.
      EXPECT_LE(r.stats.samples_loaded, 22 * 41) << q;
    }
  }
}

TEST_F(QueryLimitsTest, NoExceptionLeavesTheEngine) {
  Engine e;
  QueryResult r = e.Instant(FakeQueryable(FakeQuerier::Mode::kThrowRuntime), "rate(x[5m])", 0);
  EXPECT_EQ(r.error_type, ErrorType::kInternal);
  EXPECT_NE(r.error.find("disk on fire"), std::string::npos) << r.error;
  r = e.Range(FakeQueryable(FakeQuerier::Mode::kThrowBadAlloc), "sum(x)", 0, 60000, 1000);
  EXPECT_EQ(r.error_type, ErrorType::kExecution) << r.error;
  EXPECT_EQ(r.error, "query processing ran out of memory in query execution");
  // The queryable itself throwing.
  Queryable throwing = [](int64_t, int64_t) -> std::unique_ptr<tsdb::Querier> {
    throw std::runtime_error("no storage");
  };
  r = e.Instant(throwing, "up", 0);
  EXPECT_EQ(r.error_type, ErrorType::kInternal);
  EXPECT_NE(r.error.find("no storage"), std::string::npos) << r.error;
  // The engine still works afterwards (the gate slot was given back).
  EXPECT_TRUE(e.Instant(world_->queryable, "m", kEnd).ok());
}

}  // namespace
}  // namespace gpumon::promql::testing
