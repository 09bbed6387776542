// The scrape loop: samples, report series, staleness, limits, label
// handling, and real HTTP scrapes against a local server.
#include "scrape/scrape_loop.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "scrape/http_fetch.h"
#include "test_util.h"
#include "tsdb/head/head.h"
#include "tsdb/matcher.h"
#include "tsdb/sample.h"

namespace gpumon::scrape {
namespace {

using testing::Store;

Target MakeTarget(const std::string& url = "http://h:1/metrics") {
  Target t;
  t.labels = Labels{{"instance", "h:1"}, {"job", "j"}};
  t.url = url;
  t.scrape_pool = "j";
  t.interval_ms = 1000;
  t.timeout_ms = 500;
  return t;
}

// A fetcher serving whatever `body` holds (or failing when it is "!fail").
struct FakeTarget {
  std::string body;
  Fetcher Fetch() {
    return [this](const std::string&, int64_t, uint64_t) -> Result<FetchResult> {
      if (body == "!fail") return Status::Error("connection refused");
      return FetchResult{body, "text/plain; version=0.0.4"};
    };
  }
};

const char* kUp = "up{instance=\"h:1\", job=\"j\"}";

TEST(ScrapeLoopTest, AppendsSamplesWithTargetLabelsAndReport) {
  Store store;
  FakeTarget ft{"# TYPE a gauge\na{x=\"1\"} 5\nb 7\n"};
  ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  auto a = store.Of("a{instance=\"h:1\", job=\"j\", x=\"1\"}");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].t, 1000);
  EXPECT_EQ(a[0].v, 5);
  ASSERT_EQ(store.Of(kUp).size(), 1u);
  EXPECT_EQ(store.Of(kUp)[0].v, 1);
  EXPECT_EQ(store.Of("scrape_samples_scraped{instance=\"h:1\", job=\"j\"}")[0].v, 2);
  EXPECT_EQ(store.Of("scrape_samples_post_metric_relabeling{instance=\"h:1\", job=\"j\"}")[0].v, 2);
  EXPECT_EQ(store.Of("scrape_series_added{instance=\"h:1\", job=\"j\"}")[0].v, 2);
  EXPECT_EQ(store.Of("scrape_duration_seconds{instance=\"h:1\", job=\"j\"}").size(), 1u);
  EXPECT_EQ(store.commits(), 1);
  EXPECT_EQ(loop.Status().health, Health::kUp);

  loop.ScrapeOnce(2000);  // same series: none added
  EXPECT_EQ(store.Of("scrape_series_added{instance=\"h:1\", job=\"j\"}")[1].v, 0);
}

// Counts how samples reach storage: by ref alone, or with labels.
class CountingAppender : public Appender {
 public:
  CountingAppender(std::unique_ptr<Appender> inner, int* by_ref, int* by_labels)
      : inner_(std::move(inner)), by_ref_(by_ref), by_labels_(by_labels) {}
  Status Append(const Labels& l, int64_t t, double v) override { return inner_->Append(l, t, v); }
  Result<uint64_t> AppendRef(uint64_t ref, const Labels& l, int64_t t, double v) override {
    ++*(l.empty() ? by_ref_ : by_labels_);
    return inner_->AppendRef(ref, l, t, v);
  }
  Status Commit() override { return inner_->Commit(); }
  void Rollback() override { inner_->Rollback(); }

 private:
  std::unique_ptr<Appender> inner_;
  int* by_ref_;
  int* by_labels_;
};

// Samples of one series in a head, in time order.
std::vector<tsdb::Sample> HeadSamples(const tsdb::head::Head& head, const std::string& name) {
  auto q = head.Querier(0, 1'000'000);
  std::vector<tsdb::Matcher> m = {
      tsdb::Matcher::Make(tsdb::MatchType::kEqual, "__name__", name).value()};
  auto set = q->Select(m, {});
  std::vector<tsdb::Sample> out;
  while (set->Next()) {
    auto it = set->Iterator();
    while (it->Next()) out.push_back(it->At());
  }
  return out;
}

TEST(ScrapeLoopTest, SteadyStateScrapesAppendByRefIntoTheHead) {
  tsdb::head::Head head;
  int by_ref = 0, by_labels = 0;
  AppenderFactory inner = HeadAppenderFactory([&head] { return head.Appender(); });
  AppenderFactory counting = [&]() -> std::unique_ptr<Appender> {
    return std::make_unique<CountingAppender>(inner(), &by_ref, &by_labels);
  };
  FakeTarget ft{"a{x=\"1\"} 1\na{x=\"2\"} 2\nb 3\n"};
  LoopOptions opts;
  RelabelConfig drop_b;
  drop_b.source_labels = {"__name__"};
  drop_b.regex = "b";
  drop_b.action = RelabelAction::kDrop;
  ASSERT_TRUE(drop_b.Compile().ok());
  opts.metric_relabel_configs.push_back(drop_b);
  ScrapeLoop loop(MakeTarget(), opts, counting, ft.Fetch());
  loop.ScrapeOnce(1000);
  EXPECT_EQ(by_labels, 2 + 5);  // two new series and the report series
  EXPECT_EQ(by_ref, 0);
  by_labels = 0;
  loop.ScrapeOnce(2000);
  EXPECT_EQ(by_labels, 0);
  EXPECT_EQ(by_ref, 2 + 5);
  // A series leaving gets its stale marker through its ref.
  ft.body = "a{x=\"1\"} 10\nb 3\n";
  loop.ScrapeOnce(3000);
  EXPECT_EQ(by_labels, 0);
  auto a = HeadSamples(head, "a");
  ASSERT_EQ(a.size(), 6u);  // x=1 at 1000, 2000, 3000; x=2 at 1000, 2000, stale at 3000
  auto b = HeadSamples(head, "b");
  EXPECT_TRUE(b.empty()) << "dropped by metric_relabel_configs";
  auto q = head.Querier(0, 10'000);
  std::vector<tsdb::Matcher> m = {tsdb::Matcher::Make(tsdb::MatchType::kEqual, "x", "2").value()};
  auto set = q->Select(m, {});
  ASSERT_TRUE(set->Next());
  auto it = set->Iterator();
  std::vector<tsdb::Sample> x2;
  while (it->Next()) x2.push_back(it->At());
  ASSERT_EQ(x2.size(), 3u);
  EXPECT_EQ(x2[1].v, 2);
  EXPECT_EQ(x2[2].t, 3000);
  EXPECT_TRUE(tsdb::IsStaleNaN(x2[2].v));
}

TEST(ScrapeLoopTest, DisappearedSeriesGetsStaleMarker) {
  Store store;
  FakeTarget ft{"a 1\nb 2\n"};
  ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  ft.body = "a 1\n";
  loop.ScrapeOnce(2000);
  auto b = store.Of("b{instance=\"h:1\", job=\"j\"}");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1].t, 2000);
  EXPECT_TRUE(tsdb::IsStaleNaN(b[1].v));
  auto a = store.Of("a{instance=\"h:1\", job=\"j\"}");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_FALSE(tsdb::IsStaleNaN(a[1].v));
  // Gone series are not marked again on the next scrape.
  loop.ScrapeOnce(3000);
  EXPECT_EQ(store.Of("b{instance=\"h:1\", job=\"j\"}").size(), 2u);
}

TEST(ScrapeLoopTest, FailedScrapeIsUpZeroAndMarksEverythingStale) {
  Store store;
  FakeTarget ft{"a 1\nb 2\n"};
  ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  ft.body = "!fail";
  loop.ScrapeOnce(2000);
  EXPECT_EQ(store.Of(kUp).back().v, 0);
  EXPECT_TRUE(tsdb::IsStaleNaN(store.Of("a{instance=\"h:1\", job=\"j\"}").back().v));
  EXPECT_TRUE(tsdb::IsStaleNaN(store.Of("b{instance=\"h:1\", job=\"j\"}").back().v));
  EXPECT_EQ(loop.Status().health, Health::kDown);
  EXPECT_EQ(loop.Status().last_error, "connection refused");
  // A parse error fails the scrape too.
  ft.body = "a{ 1\n";
  loop.ScrapeOnce(3000);
  EXPECT_EQ(store.Of(kUp).back().v, 0);
  EXPECT_NE(loop.Status().last_error.find("line 1"), std::string::npos);
}

TEST(ScrapeLoopTest, SampleLimitFailsTheScrape) {
  Store store;
  FakeTarget ft{"a 1\nb 2\nc 3\n"};
  LoopOptions o;
  o.sample_limit = 2;
  ScrapeLoop loop(MakeTarget(), o, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  EXPECT_EQ(store.Of(kUp).back().v, 0);
  EXPECT_TRUE(store.Of("a{instance=\"h:1\", job=\"j\"}").empty());
  EXPECT_EQ(loop.Status().last_error, "sample limit exceeded");
  ft.body = "a 1\nb 2\n";
  loop.ScrapeOnce(2000);
  EXPECT_EQ(store.Of(kUp).back().v, 1);
}

TEST(ScrapeLoopTest, LabelLimitFailsTheScrape) {
  Store store;
  FakeTarget ft{"a{x=\"1\",y=\"2\"} 1\n"};
  LoopOptions o;
  o.label_limit = 4;  // __name__, instance, job, x, y = 5
  ScrapeLoop loop(MakeTarget(), o, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  EXPECT_EQ(store.Of(kUp).back().v, 0);
  EXPECT_NE(loop.Status().last_error.find("label_limit exceeded"), std::string::npos);
}

TEST(ScrapeLoopTest, HonorLabels) {
  FakeTarget ft{"a{job=\"theirs\",instance=\"\"} 1\n"};
  {
    Store store;
    ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch());
    loop.ScrapeOnce(1000);
    EXPECT_EQ(store.Of("a{exported_job=\"theirs\", instance=\"h:1\", job=\"j\"}").size(), 1u);
  }
  {
    Store store;
    LoopOptions o;
    o.honor_labels = true;
    ScrapeLoop loop(MakeTarget(), o, store.Factory(), ft.Fetch());
    loop.ScrapeOnce(1000);
    // Scraped job wins; the empty scraped instance takes the target's.
    EXPECT_EQ(store.Of("a{instance=\"h:1\", job=\"theirs\"}").size(), 1u);
  }
}

TEST(ScrapeLoopTest, HonorTimestampsAndMetricRelabeling) {
  FakeTarget ft{"a 1 500\ndrop_me 2\n"};
  RelabelConfig drop;
  drop.action = RelabelAction::kDrop;
  drop.source_labels = {"__name__"};
  drop.regex = "drop_.*";
  ASSERT_TRUE(drop.Compile().ok());
  LoopOptions o;
  o.metric_relabel_configs = {drop};
  Store store;
  ScrapeLoop loop(MakeTarget(), o, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  EXPECT_EQ(store.Of("a{instance=\"h:1\", job=\"j\"}")[0].t, 500);
  EXPECT_TRUE(store.Of("drop_me{instance=\"h:1\", job=\"j\"}").empty());
  EXPECT_EQ(store.Of("scrape_samples_scraped{instance=\"h:1\", job=\"j\"}")[0].v, 2);
  EXPECT_EQ(store.Of("scrape_samples_post_metric_relabeling{instance=\"h:1\", job=\"j\"}")[0].v, 1);

  o.honor_timestamps = false;
  Store store2;
  ScrapeLoop loop2(MakeTarget(), o, store2.Factory(), ft.Fetch());
  loop2.ScrapeOnce(1000);
  EXPECT_EQ(store2.Of("a{instance=\"h:1\", job=\"j\"}")[0].t, 1000);
}

TEST(ScrapeLoopTest, StopMarksSeriesAndReportStale) {
  Store store;
  FakeTarget ft{"a 1\n"};
  ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch(), [] { return int64_t{5000}; });
  loop.ScrapeOnce(1000);
  loop.Stop(true);
  EXPECT_TRUE(tsdb::IsStaleNaN(store.Of("a{instance=\"h:1\", job=\"j\"}").back().v));
  EXPECT_TRUE(tsdb::IsStaleNaN(store.Of(kUp).back().v));
  EXPECT_EQ(store.Of(kUp).back().t, 5000);
}

// --- Real HTTP ----------------------------------------------------------

class HttpTarget {
 public:
  HttpTarget() {
    server_.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      accept_ = req.get_header_value("Accept");
      std::string b;
      {
        std::lock_guard<std::mutex> lock(mu_);
        b = body_;
      }
      if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
      if (status_ != 200) {
        res.status = status_;
        return;
      }
      res.set_content(b, openmetrics_ ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                      : "text/plain; version=0.0.4");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HttpTarget() { Close(); }
  void Close() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  void Set(std::string b) {
    std::lock_guard<std::mutex> lock(mu_);
    body_ = std::move(b);
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }
  std::string accept_;
  std::atomic<int> delay_ms_{0};
  std::atomic<int> status_{200};
  bool openmetrics_ = false;

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::string body_;
};

TEST(HttpFetchTest, GetsBodyNegotiatesAndReportsErrors) {
  HttpTarget t;
  std::string big(100000, ' ');
  t.Set("# big body compresses well\n#" + big + "\nm 1\n");
  auto r = HttpFetch(t.Url(), 2000, 0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->body.find("m 1"), std::string::npos);
  EXPECT_NE(t.accept_.find("application/openmetrics-text"), std::string::npos);
  EXPECT_NE(t.accept_.find("text/plain;version=0.0.4"), std::string::npos);
  auto limited = HttpFetch(t.Url(), 2000, 1000);
  ASSERT_FALSE(limited.ok());
  EXPECT_NE(limited.status().message().find("body size limit exceeded"), std::string::npos);
  t.status_ = 500;
  auto e = HttpFetch(t.Url(), 2000, 0);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "server returned HTTP status 500 Internal Server Error");
  t.status_ = 200;
  t.delay_ms_ = 600;
  auto start = std::chrono::steady_clock::now();
  auto slow = HttpFetch(t.Url(), 200, 0);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(slow.ok());
  EXPECT_LT(took, std::chrono::milliseconds(550));
  t.delay_ms_ = 0;
}

TEST(ScrapeLoopHttpTest, ChangingExpositionAndDeadTarget) {
  HttpTarget t;
  t.openmetrics_ = true;
  t.Set("# TYPE g gauge\ng{gpu=\"0\"} 1\ng{gpu=\"1\"} 2\n# EOF\n");
  Store store;
  Target target = MakeTarget(t.Url());
  ScrapeLoop loop(target, {}, store.Factory());
  loop.ScrapeOnce(1000);
  EXPECT_EQ(store.Of(kUp).back().v, 1) << loop.Status().last_error;
  EXPECT_EQ(store.Of("g{gpu=\"1\", instance=\"h:1\", job=\"j\"}").back().v, 2);
  t.Set("# TYPE g gauge\ng{gpu=\"0\"} 3\n# EOF\n");
  loop.ScrapeOnce(2000);
  EXPECT_TRUE(tsdb::IsStaleNaN(store.Of("g{gpu=\"1\", instance=\"h:1\", job=\"j\"}").back().v));
  EXPECT_EQ(store.Of("g{gpu=\"0\", instance=\"h:1\", job=\"j\"}").back().v, 3);
  t.Close();
  loop.ScrapeOnce(3000);
  EXPECT_EQ(store.Of(kUp).back().v, 0);
  EXPECT_TRUE(tsdb::IsStaleNaN(store.Of("g{gpu=\"0\", instance=\"h:1\", job=\"j\"}").back().v));
}

}  // namespace
}  // namespace gpumon::scrape
