// Interoperability: /federate over the same data answers byte for byte
// what Prometheus's /federate answers. The data is written as OpenMetrics,
// turned into a block by `promtool tsdb create-blocks-from openmetrics` and
// served by a Prometheus started on loopback; our side loads the same
// samples into a head. Skips when prometheus or promtool is not installed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "web/api/federate.h"

namespace gpumon::web::api {
namespace {
namespace fs = std::filesystem;

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string p(path);
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    fs::path cand = fs::path(p.substr(start, end - start)) / name;
    if (::access(cand.c_str(), X_OK) == 0) return cand.string();
    start = end + 1;
  }
  return "";
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

struct Point {
  Labels labels;
  int64_t t_s;  // whole seconds, as OpenMetrics timestamps are written
  double v;
  std::string text;  // the value as written in OpenMetrics
};

class FederatePrometheusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prometheus_ = FindOnPath("prometheus");
    promtool_ = FindOnPath("promtool");
    if (prometheus_.empty() || promtool_.empty()) {
      GTEST_SKIP() << "prometheus or promtool not installed";
    }
    char tmpl[] = "/tmp/gpumon-federate-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string prometheus_, promtool_, dir_;
  pid_t pid_ = -1;
};

TEST_F(FederatePrometheusTest, SameExpositionAsPrometheus) {
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  // Grouped by metric family, each series' samples in time order.
  std::vector<std::pair<std::string, std::vector<Point>>> families = {
      {"gpu_temp",
       {
           {Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}, {"job", "dcgm"}}, now - 90, 61.5,
            "61.5"},
           {Labels{{"__name__", "gpu_temp"}, {"gpu", "0"}, {"job", "dcgm"}}, now - 30, 62, "62"},
           {Labels{{"__name__", "gpu_temp"}, {"gpu", "1"}, {"job", "dcgm"}}, now - 240, 70, "70"},
           // Only older than the 5m lookback.
           {Labels{{"__name__", "gpu_temp"}, {"gpu", "2"}, {"job", "dcgm"}}, now - 1200, 80, "80"},
       }},
      {"gpu_fb_used_bytes",
       {
           {Labels{{"__name__", "gpu_fb_used_bytes"}, {"cluster", "own"}, {"job", "dcgm"}},
            now - 20, 1234567890, "1234567890"},
           {Labels{{"__name__", "gpu_fb_used_bytes"}, {"instance", "n1:9400"}, {"job", "dcgm"}},
            now - 20, 0.00001, "0.00001"},
       }},
      {"up",
       {
           {Labels{{"__name__", "up"}, {"job", "dcgm"}, {"path", "a\\b\"c"}}, now - 10, 1, "1"},
           {Labels{{"__name__", "up"}, {"job", "node"}}, now - 10, 0.1, "0.1"},
       }},
  };
  std::string om;
  tsdb::head::Head head;
  auto app = head.Appender();
  for (const auto& [name, points] : families) {
    om += "# TYPE " + name + " gauge\n";
    for (const auto& p : points) {
      om += name;
      std::string labels;
      for (const auto& l : p.labels) {
        if (l.name == "__name__") continue;
        std::string v;
        for (char c : l.value) {
          if (c == '\\' || c == '"') v.push_back('\\');
          v.push_back(c);
        }
        labels += (labels.empty() ? "" : ",") + l.name + "=\"" + v + "\"";
      }
      om += "{" + labels + "} " + p.text + " " + std::to_string(p.t_s) + "\n";
      ASSERT_TRUE(app->Append(0, p.labels, p.t_s * 1000, p.v).ok());
    }
  }
  om += "# EOF\n";
  ASSERT_TRUE(app->Commit().ok());

  const std::string om_file = dir_ + "/data.om", data = dir_ + "/data", cfg = dir_ + "/p.yml";
  std::ofstream(om_file) << om;
  std::ofstream(cfg) << "global:\n  external_labels:\n    cluster: c1\n    dc: east\n";
  const std::string cmd = "'" + promtool_ + "' tsdb create-blocks-from openmetrics '" + om_file +
                          "' '" + data + "' >'" + dir_ + "/promtool.log' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "promtool failed, see its log";

  const int port = FreePort();
  ASSERT_GT(port, 0);
  pid_ = ::fork();
  ASSERT_GE(pid_, 0);
  if (pid_ == 0) {
    const std::string log = dir_ + "/prometheus.log";
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    const std::string a1 = "--config.file=" + cfg, a2 = "--storage.tsdb.path=" + data,
                      a3 = "--web.listen-address=127.0.0.1:" + std::to_string(port);
    ::execl(prometheus_.c_str(), "prometheus", a1.c_str(), a2.c_str(), a3.c_str(), nullptr);
    ::_exit(127);
  }
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  bool ready = false;
  for (int i = 0; i < 300 && !ready; ++i) {
    auto r = c.Get("/-/ready");
    ready = r && r->status == 200;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(ready) << "prometheus did not become ready";

  struct NullBackend : ApiBackend {
    explicit NullBackend(tsdb::head::Head& h) : head(h) {}
    std::unique_ptr<tsdb::Querier> Querier(int64_t mint, int64_t maxt) override {
      return head.Querier(mint, maxt);
    }
    promql::QueryResult InstantQuery(const promql::Expr&, int64_t,
                                     const promql::QueryOptions&) override {
      return {};
    }
    promql::QueryResult RangeQuery(const promql::Expr&, int64_t, int64_t, int64_t,
                                   const promql::QueryOptions&) override {
      return {};
    }
    HeadSummary Head() override { return {}; }
    tsdb::head::Head& head;
  } backend(head);
  Federate ours(backend, Labels{{"cluster", "c1"}, {"dc", "east"}}, [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  });

  for (std::vector<std::string> matches : std::vector<std::vector<std::string>>{
           {"{job=\"dcgm\"}"}, {"up", "{__name__=~\"gpu_.*\"}"}, {"gpu_temp{gpu!=\"0\"}"}}) {
    httplib::Params query;
    Params p;
    for (const auto& m : matches) {
      query.emplace("match[]", m);
      p.Add("match[]", m);
    }
    auto theirs = c.Get("/federate", query, httplib::Headers{});
    ASSERT_TRUE(theirs);
    ASSERT_EQ(theirs->status, 200) << theirs->body;
    FederateReply mine = ours.Handle(p);
    EXPECT_EQ(mine.status, 200);
    EXPECT_EQ(mine.content_type, theirs->get_header_value("Content-Type"));
    EXPECT_FALSE(mine.body.empty());
    EXPECT_EQ(mine.body, theirs->body) << "match[] " << matches[0];
  }

  // A selector that does not parse is 400 on both sides.
  auto theirs = c.Get("/federate?match[]=up%7B");
  ASSERT_TRUE(theirs);
  Params bad;
  bad.Add("match[]", "up{");
  EXPECT_EQ(ours.Handle(bad).status, theirs->status);
}

}  // namespace
}  // namespace gpumon::web::api
