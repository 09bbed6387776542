// The Pushgateway receiver through a real HTTP server on loopback.
#include "ingest/pushgateway_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "web/gzip.h"
#include "web/http_server.h"

namespace gpumon::ingest {
namespace {

// A resolver that places every peer on one GPU, recording who asked.
class FixedResolver : public JobGpuResolver {
 public:
  JobPlacement ForPeer(std::string_view remote_address) override {
    peers.emplace_back(remote_address);
    JobPlacement p;
    if (place) p.gpus = {{2, "GPU-two"}};
    return p;
  }
  JobPlacement ForPid(int) override { return {}; }
  std::vector<std::string> peers;
  bool place = false;
};

class PushgatewayRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterPushgatewayRoutes(server_.router(), store_, &resolver_,
                              {.max_body_bytes = 4096, .max_decoded_bytes = 8192});
    ASSERT_TRUE(server_.Bind("127.0.0.1:0").ok());
    thread_ = std::thread([this] { (void)server_.Run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_.port());
  }
  void TearDown() override {
    server_.Stop();
    thread_.join();
  }
  std::string Metrics() const {
    std::string out;
    store_.AppendText({}, exposition::Format::kText004, &out);
    return out;
  }

  PushStore store_;
  FixedResolver resolver_;
  web::HttpServer server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

constexpr char kText[] = "text/plain; version=0.0.4";

TEST_F(PushgatewayRoutesTest, PutPostDeleteStatusCodesAndSemantics) {
  auto put = client_->Put("/metrics/job/train/rank/0", "a 1\nb 2\n", kText);
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 200);
  EXPECT_EQ(put->body, "");
  auto post = client_->Post("/metrics/job/train/rank/0", "b 3\n", kText);
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 200);
  std::string m = Metrics();
  EXPECT_NE(m.find("a{job=\"train\",rank=\"0\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("b{job=\"train\",rank=\"0\"} 3\n"), std::string::npos) << m;
  ASSERT_EQ(resolver_.peers.size(), 2u);  // asked on each push
  EXPECT_EQ(resolver_.peers[0].rfind("127.0.0.1:", 0), 0u);
  // Placement from the resolver: one GPU, so the samples carry it.
  resolver_.place = true;
  ASSERT_TRUE(client_->Post("/metrics/job/train/rank/0", "b 3\n", kText));
  {
    std::string with_gpu;
    store_.AppendText({"hostname", "gpu", "uuid", "h1"}, exposition::Format::kText004, &with_gpu);
    EXPECT_NE(
        with_gpu.find("a{gpu=\"2\",hostname=\"h1\",job=\"train\",rank=\"0\",uuid=\"GPU-two\"}"),
        std::string::npos)
        << with_gpu;
  }
  // PUT with an empty body: no metrics, push_time_seconds stays.
  auto empty = client_->Put("/metrics/job/train/rank/0", "", kText);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->status, 200);
  m = Metrics();
  EXPECT_EQ(m.find("a{"), std::string::npos) << m;
  EXPECT_NE(m.find("push_time_seconds{job=\"train\",rank=\"0\"}"), std::string::npos) << m;
  auto del = client_->Delete("/metrics/job/train/rank/0");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 202);
  EXPECT_EQ(Metrics(), "");
  // Deleting a group that does not exist is no error.
  auto again = client_->Delete("/metrics/job/train/rank/0");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 202);
}

TEST_F(PushgatewayRoutesTest, OpenMetricsAndGzipBodies) {
  auto om = client_->Put("/metrics/job/om", "# TYPE c counter\nc_total 4\nc_created 1.7e9\n# EOF\n",
                         "application/openmetrics-text; version=1.0.0");
  ASSERT_TRUE(om);
  EXPECT_EQ(om->status, 200) << om->body;
  EXPECT_NE(Metrics().find("c_total{job=\"om\"} 4\n"), std::string::npos) << Metrics();
  // Text 0.0.4 has no _created samples in a counter: a gauge of its own.
  EXPECT_NE(Metrics().find("# TYPE c_created gauge\nc_created{job=\"om\"} 1.7e+09\n"),
            std::string::npos)
      << Metrics();
  httplib::Headers gz{{"Content-Encoding", "gzip"}};
  auto zipped = client_->Put("/metrics/job/gz", gz, web::GzipCompress("z 9\n"), kText);
  ASSERT_TRUE(zipped);
  EXPECT_EQ(zipped->status, 200) << zipped->body;
  EXPECT_NE(Metrics().find("z{job=\"gz\"} 9\n"), std::string::npos);
  // Inflating past max_decoded_bytes is 413.
  std::string big(9000, '\n');
  auto bomb = client_->Put("/metrics/job/gz", gz, web::GzipCompress("z 1\n" + big), kText);
  ASSERT_TRUE(bomb);
  EXPECT_EQ(bomb->status, 413) << bomb->body;
}

TEST_F(PushgatewayRoutesTest, ErrorsAreClear) {
  struct Case {
    std::string method, path, body, content_type;
    int status;
    std::string mentions;
  };
  const Case cases[] = {
      {"PUT", "/metrics/job/", "a 1\n", kText, 400, "must not end in"},
      {"PUT", "/metrics/job/x/rank/1/rank/2", "a 1\n", kText, 400, "appears twice"},
      {"PUT", "/metrics/job/x", "a 1 1700000000000\n", kText, 400, "timestamp"},
      {"PUT", "/metrics/job/x", "a{job=\"y\"} 1\n", kText, 400, "conflicts with the grouping"},
      {"PUT", "/metrics/job/x", "a{\n", kText, 400, "line 1"},
      {"PUT", "/metrics/job/x", "a 1\n",
       "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
       "encoding=delimited",
       415, "protobuf"},
      {"POST", "/metrics/job/x", std::string(5000, '#'), kText, 413, ""},
      {"DELETE", "/metrics/job/x/rank", "", kText, 400, "no value"},
  };
  uint64_t rejected = 0;
  for (const auto& c : cases) {
    httplib::Result r = c.method == "PUT"    ? client_->Put(c.path, c.body, c.content_type)
                        : c.method == "POST" ? client_->Post(c.path, c.body, c.content_type)
                                             : client_->Delete(c.path);
    ASSERT_TRUE(r) << c.path;
    EXPECT_EQ(r->status, c.status) << c.method << " " << c.path << ": " << r->body;
    EXPECT_NE(r->body.find(c.mentions), std::string::npos) << r->body;
    if (c.method != "DELETE" && c.status != 413) ++rejected;
    // A fresh connection after errors the server closes on.
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_.port());
  }
  EXPECT_EQ(store_.stats().pushes_rejected, rejected);
  EXPECT_EQ(store_.stats().groups, 0u);
  // GET on a push path is not a push.
  auto get = client_->Get("/metrics/job/x");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
}

}  // namespace
}  // namespace gpumon::ingest
