// Query limits as /api/v1/query and /api/v1/query_range answer them: the
// runaway queries found by probing the server (a fine-grained subquery
// under a request timeout, one past the sample limit, one whose step count
// overflowed an int) end with Prometheus's error JSON and status, a raised
// request cancellation stops a running query, and no exception from a
// backend or storage escapes as anything but a JSON error.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include "common/cancellation.h"
#include "test_util.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "web/api/query_api.h"

namespace gpumon::web::api {
namespace {

using testing::Encode;
using testing::Str;

constexpr int64_t kStart = 1'700'000'000'000;  // data start (ms)
constexpr int64_t kNow = kStart + 3600 * 1000;

Params P(std::initializer_list<std::pair<std::string, std::string>> kv) {
  Params p;
  for (const auto& [k, v] : kv) p.Add(k, v);
  return p;
}

// The engine, head and API a query thread uses, shared so that a thread
// left running by a hang guard never outlives them.
struct Server {
  Server() {
    // `up` sampled every 15 s for an hour before kNow.
    auto app = head.Appender();
    for (int64_t t = kStart; t <= kNow; t += 15000) {
      EXPECT_TRUE(app->Append(0, Labels{{"__name__", "up"}, {"job", "node"}}, t, 1).ok());
    }
    EXPECT_TRUE(app->Commit().ok());
  }
  tsdb::head::Head head;
  promql::Engine engine;
  StorageBackend backend{[this](int64_t mint, int64_t maxt) { return head.Querier(mint, maxt); },
                         engine, nullptr};
  QueryApi api{backend, [] { return kNow; }};
};

// Runs the instant query endpoint on a thread of its own and gives up after
// a hang guard far above what the query needs (a regression then fails
// instead of stalling the suite; nothing here asserts speed).
std::optional<ApiResponse> QueryGuarded(std::shared_ptr<Server> s, Params p,
                                        std::shared_ptr<Cancellation> cancel = nullptr) {
  auto done = std::make_shared<std::promise<ApiResponse>>();
  auto f = done->get_future();
  std::thread([s, p, cancel, done] { done->set_value(s->api.Query(p, cancel.get())); }).detach();
  if (f.wait_for(std::chrono::seconds(30)) != std::future_status::ready) return std::nullopt;
  return f.get();
}

void ExpectJsonError(const ApiResponse& r, int status, const std::string& type) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.HttpStatus(), status);
  auto d = Encode(r);
  ASSERT_TRUE(d.IsObject()) << EncodeToString(r);
  EXPECT_EQ(Str(d["status"]), "error");
  EXPECT_EQ(Str(d["errorType"]), type) << Str(d["error"]);
  EXPECT_FALSE(Str(d["error"]).empty());
}

TEST(QueryLimitsApiTest, RequestTimeoutStopsFineSubquery) {
  auto s = std::make_shared<Server>();
  auto r = QueryGuarded(s, P({{"query", "max_over_time(rate(up[1m])[100y:1ms])"},
                              {"time", std::to_string(kNow / 1000)},
                              {"timeout", "200ms"}}));
  ASSERT_TRUE(r.has_value()) << "query still running after the hang guard";
  ExpectJsonError(*r, 503, "timeout");
  EXPECT_EQ(r->error->message, "query timed out in expression evaluation");
}

TEST(QueryLimitsApiTest, ConstantUnderFineSubqueryHitsSampleLimit) {
  auto s = std::make_shared<Server>();
  for (const char* q :
       {"count_over_time(vector(1)[1d:1ms])", "max_over_time(vector(1)[100y:1ms])"}) {
    auto r = QueryGuarded(s, P({{"query", q}, {"timeout", "2s"}}));
    ASSERT_TRUE(r.has_value()) << q << ": still running after the hang guard";
    ExpectJsonError(*r, 422, "execution");
    EXPECT_EQ(r->error->message,
              "query processing would load too many samples into memory in query execution");
  }
}

TEST(QueryLimitsApiTest, SparseSeriesUnderFineSubqueryAnswers) {
  // Its step count (2.6e9) once overflowed an int and threw out of the
  // handler; it is an ordinary query.
  auto s = std::make_shared<Server>();
  auto r = QueryGuarded(s, P({{"query", "rate(up[30d:1ms])"}}));
  ASSERT_TRUE(r.has_value()) << "query still running after the hang guard";
  ASSERT_TRUE(r->ok()) << r->error->message;
  auto d = Encode(*r);
  EXPECT_EQ(Str(d["status"]), "success");
  EXPECT_EQ(d["data"]["result"].Size(), 1u);
}

TEST(QueryLimitsApiTest, CancelledRequestStopsQuery) {
  auto s = std::make_shared<Server>();
  auto cancel = std::make_shared<Cancellation>();
  std::thread hang_up([cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel->Cancel();
  });
  auto r = QueryGuarded(s,
                        P({{"query", "max_over_time(rate(up[1m])[100y:1ms])"},
                           {"time", std::to_string(kNow / 1000)}}),
                        cancel);
  hang_up.join();
  ASSERT_TRUE(r.has_value()) << "cancel did not stop the query";
  // Prometheus answers a cancelled query with 499 (client closed request).
  ExpectJsonError(*r, 499, "canceled");
  EXPECT_EQ(r->error->message, "query was canceled in expression evaluation");

  // QueryRange takes the same cancellation.
  Cancellation raised;
  raised.Cancel();
  ApiResponse rr = s->api.QueryRange(P({{"query", "up"},
                                        {"start", std::to_string(kStart / 1000)},
                                        {"end", std::to_string(kNow / 1000)},
                                        {"step", "60"}}),
                                     &raised);
  ExpectJsonError(rr, 499, "canceled");
}

// Storage whose reads throw.
class ThrowingQuerier : public tsdb::Querier {
 public:
  explicit ThrowingQuerier(bool bad_alloc) : bad_alloc_(bad_alloc) {}
  std::unique_ptr<tsdb::SeriesSet> Select(std::span<const tsdb::Matcher>,
                                          const tsdb::SelectHints&) const override {
    if (bad_alloc_) throw std::bad_alloc();
    throw std::runtime_error("block index unreadable");
  }
  Result<std::vector<std::string>> LabelNames(std::span<const tsdb::Matcher>) const override {
    return std::vector<std::string>{};
  }
  Result<std::vector<std::string>> LabelValues(const std::string&,
                                               std::span<const tsdb::Matcher>) const override {
    return std::vector<std::string>{};
  }

 private:
  bool bad_alloc_;
};

TEST(QueryLimitsApiTest, StorageExceptionIsJsonError) {
  promql::Engine engine;
  for (bool bad_alloc : {false, true}) {
    StorageBackend backend(
        [bad_alloc](int64_t, int64_t) { return std::make_unique<ThrowingQuerier>(bad_alloc); },
        engine, nullptr);
    QueryApi api(backend, [] { return kNow; });
    ApiResponse r = api.Query(P({{"query", "rate(up[5m])"}}));
    if (bad_alloc) {
      ExpectJsonError(r, 422, "execution");
    } else {
      ExpectJsonError(r, 500, "internal");
      EXPECT_NE(r.error->message.find("block index unreadable"), std::string::npos)
          << r.error->message;
    }
    r = api.QueryRange(P({{"query", "up"}, {"start", "0"}, {"end", "600"}, {"step", "15"}}));
    ExpectJsonError(r, bad_alloc ? 422 : 500, bad_alloc ? "execution" : "internal");
  }
}

// A backend that throws itself, past the engine's own guard.
class ThrowingBackend : public ApiBackend {
 public:
  explicit ThrowingBackend(bool bad_alloc) : bad_alloc_(bad_alloc) {}
  std::unique_ptr<tsdb::Querier> Querier(int64_t, int64_t) override { return nullptr; }
  promql::QueryResult InstantQuery(const promql::Expr&, int64_t,
                                   const promql::QueryOptions&) override {
    Throw();
  }
  promql::QueryResult RangeQuery(const promql::Expr&, int64_t, int64_t, int64_t,
                                 const promql::QueryOptions&) override {
    Throw();
  }
  HeadSummary Head() override { return {}; }

 private:
  [[noreturn]] void Throw() {
    if (bad_alloc_) throw std::bad_alloc();
    throw std::logic_error("backend bug");
  }
  bool bad_alloc_;
};

TEST(QueryLimitsApiTest, BackendExceptionIsJsonError) {
  for (bool bad_alloc : {false, true}) {
    ThrowingBackend backend(bad_alloc);
    QueryApi api(backend, [] { return kNow; });
    ApiResponse r = api.Query(P({{"query", "up"}}));
    ExpectJsonError(r, bad_alloc ? 422 : 500, bad_alloc ? "execution" : "internal");
    r = api.QueryRange(P({{"query", "up"}, {"start", "0"}, {"end", "600"}, {"step", "15"}}));
    ExpectJsonError(r, bad_alloc ? 422 : 500, bad_alloc ? "execution" : "internal");
    if (!bad_alloc) {
      EXPECT_NE(r.error->message.find("backend bug"), std::string::npos) << r.error->message;
    }
  }
}

TEST(QueryLimitsApiTest, ExtremeRangeIsBadDataNotOverflow) {
  // Prometheus's boundary times: their span overflows int64 milliseconds.
  auto s = std::make_shared<Server>();
  ApiResponse r = s->api.QueryRange(P({{"query", "up"},
                                       {"start", "-292273086-05-16T16:47:06Z"},
                                       {"end", "292277025-08-18T07:12:54.999999999Z"},
                                       {"step", "1"}}));
  ExpectJsonError(r, 400, "bad_data");
  EXPECT_NE(r.error->message.find("exceeded maximum resolution of 11,000 points"),
            std::string::npos)
      << r.error->message;
}

}  // namespace
}  // namespace gpumon::web::api
