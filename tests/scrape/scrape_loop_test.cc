// The scrape loop: samples, report series, staleness, limits, label
// handling, and real HTTP scrapes against a local server.
#include "scrape/scrape_loop.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <set>
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

// The cache follows the exposition's order but does not depend on it:
// insertions, reordering and a series written with its labels in another
// order keep every sample, and only series that really left go stale.
TEST(ScrapeLoopTest, CacheSurvivesReorderingAndInsertions) {
  tsdb::head::Head head;
  FakeTarget ft{"a 1\nb 2\nc 3\n"};
  ScrapeLoop loop(MakeTarget(), {}, HeadAppenderFactory([&head] { return head.Appender(); }),
                  ft.Fetch());
  loop.ScrapeOnce(1000);
  ft.body = "a 1\nx 9\nb 2\nc 3\n";
  loop.ScrapeOnce(2000);
  ft.body = "c 3\nb 2\na 1\n";
  loop.ScrapeOnce(3000);
  for (const char* name : {"a", "b", "c"}) {
    auto got = HeadSamples(head, name);
    ASSERT_EQ(got.size(), 3u) << name;
    EXPECT_EQ(got[2].t, 3000) << name;
    EXPECT_FALSE(tsdb::IsStaleNaN(got[2].v)) << name;
  }
  auto x = HeadSamples(head, "x");
  ASSERT_EQ(x.size(), 2u);
  EXPECT_TRUE(tsdb::IsStaleNaN(x[1].v));

  ft.body = "m{p=\"1\",q=\"2\"} 1\n";
  loop.ScrapeOnce(4000);
  ft.body = "m{q=\"2\",p=\"1\"} 2\n";
  loop.ScrapeOnce(5000);
  auto m = HeadSamples(head, "m");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].t, 5000);
  EXPECT_EQ(m[1].v, 2) << "the same series under other text is not marked stale";
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
  // The counters self-monitoring reads.
  const TargetStatus st = loop.Status();
  EXPECT_EQ(st.scrapes_total, 2u);
  EXPECT_EQ(st.scrape_failures_total, 1u);
  EXPECT_EQ(st.sample_limit_exceeded_total, 1u);
  EXPECT_EQ(st.samples_appended_total, 2u);
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
  // keep_alive_requests: requests per connection before the server closes
  // it (cpp-httplib's default is 5).
  explicit HttpTarget(size_t keep_alive_requests = 5) {
    server_.set_keep_alive_max_count(keep_alive_requests);
    // Stopping the server waits for idle kept-alive connections to time
    // out; keep that short.
    server_.set_keep_alive_timeout(1);
    server_.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      accept_ = req.get_header_value("Accept");
      std::string b;
      {
        std::lock_guard<std::mutex> lock(mu_);
        b = body_;
        accept_encoding_ = req.get_header_value("Accept-Encoding");
        // A connection is its client port: each new one gets a new port.
        ports_.insert(req.remote_port);
        ++requests_;
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
  size_t connections() {
    std::lock_guard<std::mutex> lock(mu_);
    return ports_.size();
  }
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::string accept_encoding() {
    std::lock_guard<std::mutex> lock(mu_);
    return accept_encoding_;
  }
  httplib::Server& server() { return server_; }
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
  std::string accept_encoding_;
  std::set<int> ports_;
  int requests_ = 0;
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

// --- Connection reuse ----------------------------------------------------

TEST(KeepAliveFetchTest, ReusesOneConnectionAcrossScrapes) {
  HttpTarget t(100);
  t.Set("# TYPE m gauge\nm 1\n");
  Store store;
  ScrapeLoop loop(MakeTarget(t.Url()), {}, store.Factory());  // default fetcher
  for (int i = 1; i <= 6; ++i) loop.ScrapeOnce(i * 1000);
  EXPECT_EQ(loop.Status().health, Health::kUp) << loop.Status().last_error;
  EXPECT_EQ(store.Of(kUp).size(), 6u);
  EXPECT_EQ(t.requests(), 6);
  EXPECT_EQ(t.connections(), 1u);
}

TEST(KeepAliveFetchTest, RedialsWhenTheServerClosesTheConnection) {
  // The server answers one request per connection ("Connection: close").
  HttpTarget t(1);
  t.Set("m 1\n");
  KeepAliveFetcher f(HttpClientConfig{});
  for (int i = 0; i < 4; ++i) {
    auto r = f.Fetch(t.Url(), 2000, 0);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->body, "m 1\n");
  }
  EXPECT_EQ(t.connections(), 4u);
}

TEST(KeepAliveFetchTest, RedialsAfterAnIdleTimeoutClose) {
  // A zero keep-alive timeout: the server drops the connection without
  // notice as soon as it is idle.
  HttpTarget t(100);
  t.server().set_keep_alive_timeout(0);
  t.Set("m 1\n");
  KeepAliveFetcher f(HttpClientConfig{});
  for (int i = 0; i < 3; ++i) {
    auto r = f.Fetch(t.Url(), 2000, 0);
    ASSERT_TRUE(r.ok()) << r.status().message();
    // Let the server notice the idle connection and close it.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(t.requests(), 3);
  EXPECT_EQ(t.connections(), 3u);
}

// A target that keeps its first connection open after the first response,
// then reads the next request on it and closes without answering: the
// race of a server closing an idle connection just as a scrape reuses it.
class DroppingTarget {
 public:
  DroppingTarget() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 8);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~DroppingTarget() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }
  std::atomic<int> accepted{0};
  std::atomic<int> answered{0};

 private:
  // Reads one request head; false when the peer closed first.
  static bool ReadRequest(int c) {
    std::string buf;
    char chunk[1024];
    while (buf.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = read(c, chunk, sizeof chunk);
      if (n <= 0) return false;
      buf.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }
  void Answer(int c) {
    static const std::string kResponse =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
        "Content-Length: 4\r\n\r\nm 1\n";
    if (write(c, kResponse.data(), kResponse.size()) > 0) ++answered;
  }
  void Serve() {
    for (;;) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      const int n = ++accepted;
      if (ReadRequest(c)) {
        Answer(c);
        // The first connection takes a second request and drops it.
        if (n == 1 && ReadRequest(c)) {
          close(c);
          continue;
        }
        while (ReadRequest(c)) Answer(c);
      }
      close(c);
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(KeepAliveFetchTest, RetriesOnceWhenAReusedConnectionDrops) {
  DroppingTarget t;
  KeepAliveFetcher f(HttpClientConfig{});
  auto first = f.Fetch(t.Url(), 2000, 0);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = f.Fetch(t.Url(), 2000, 0);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->body, "m 1\n");
  EXPECT_EQ(t.accepted.load(), 2);
  EXPECT_EQ(t.answered.load(), 2);
  // The new connection is kept for the next fetch.
  ASSERT_TRUE(f.Fetch(t.Url(), 2000, 0).ok());
  EXPECT_EQ(t.accepted.load(), 2);
}

TEST(KeepAliveFetchTest, ErrorsAndLimitsStillApply) {
  HttpTarget t(100);
  t.Set("m 1\n" + std::string(5000, '#') + "\n");
  KeepAliveFetcher f(HttpClientConfig{});
  auto limited = f.Fetch(t.Url(), 2000, 1000);
  ASSERT_FALSE(limited.ok());
  EXPECT_NE(limited.status().message().find("body size limit exceeded"), std::string::npos);
  t.status_ = 503;
  auto e = f.Fetch(t.Url(), 2000, 0);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "server returned HTTP status 503 Service Unavailable");
  t.status_ = 200;
  auto ok = f.Fetch(t.Url(), 2000, 0);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->body.substr(0, 4), "m 1\n");
  t.Close();
  EXPECT_FALSE(f.Fetch(t.Url(), 2000, 0).ok());
}

TEST(KeepAliveFetchTest, GzipWhenAskedIdentityOnLoopbackByDefault) {
  HttpTarget t(100);
  // cpp-httplib's server compresses text bodies for clients that accept
  // gzip.
  std::string body = "# TYPE m gauge\n";
  for (int i = 0; i < 2000; ++i) body += "m{i=\"" + std::to_string(i) + "\"} 1\n";
  t.Set(body);
  KeepAliveFetcher gzip(HttpClientConfig{}, Compression::kGzip);
  auto z = gzip.Fetch(t.Url(), 2000, 0);
  ASSERT_TRUE(z.ok()) << z.status().message();
  EXPECT_EQ(t.accept_encoding(), "gzip");
  EXPECT_EQ(z->body, body);
  // The limit applies to the decompressed body.
  EXPECT_FALSE(gzip.Fetch(t.Url(), 2000, body.size() - 1).ok());
  KeepAliveFetcher plain(HttpClientConfig{});
  auto p = plain.Fetch(t.Url(), 2000, 0);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(t.accept_encoding(), "identity");
  EXPECT_EQ(p->body, body);
}

TEST(KeepAliveFetchTest, CopiesOfAFetcherShareConnectionsPerOrigin) {
  HttpTarget a(100), b(100);
  a.Set("a 1\n");
  b.Set("b 1\n");
  Fetcher f = HttpFetcherFor(HttpClientConfig{});
  Fetcher copy = f;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(f(a.Url(), 2000, 0).ok());
    ASSERT_TRUE(copy(b.Url(), 2000, 0).ok());
    ASSERT_TRUE(copy(a.Url(), 2000, 0).ok());
  }
  EXPECT_EQ(a.requests(), 6);
  EXPECT_EQ(a.connections(), 1u);
  EXPECT_EQ(b.connections(), 1u);
}

}  // namespace
}  // namespace gpumon::scrape
