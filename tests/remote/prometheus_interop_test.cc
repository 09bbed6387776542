// Interop with a real Prometheus (2.42 or later), both directions:
// - Prometheus scrapes itself and remote-writes to our receiver; the
//   series it sends (up, prometheus_build_info) must land in our head.
// - Our encoder's body is POSTed to Prometheus's own receiver
//   (--web.enable-remote-write-receiver) and read back with PromQL,
//   stale marker and special values included.
// Exits 77 (ctest SKIP) when no prometheus binary is on PATH.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"
#include "remote/receiver.h"
#include "remote/write_request.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/matcher.h"

extern char** environ;

namespace gpumon::remote {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    fs::path p = fs::path(dir) / name;
    if (!dir.empty() && access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// A port nothing listens on right now (the kernel's pick for port 0).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class PrometheusInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    binary_ = FindOnPath("prometheus");
    ASSERT_FALSE(binary_.empty());
    char tmpl[] = "/tmp/gpumon-remote-interop-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;

    http::Router router;
    RegisterRemoteWriteReceiver(
        router, scrape::HeadAppenderFactory([this] { return head_.Appender(); }), &stats_);
    server_ = std::make_unique<http::Server>(std::move(router), http::ServerOptions{});
    Status bound = server_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(bound.ok()) << bound.message();
    port_ = server_->port();
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_->Run(); });

    prom_port_ = FreePort();
    ASSERT_GT(prom_port_, 0);
    std::ofstream cfg(dir_ / "prometheus.yml");
    cfg << "global:\n"
           "  scrape_interval: 1s\n"
           "  evaluation_interval: 1s\n"
           "scrape_configs:\n"
           "  - job_name: prometheus\n"
           "    static_configs:\n"
           "      - targets: ['127.0.0.1:"
        << prom_port_
        << "']\n"
           "remote_write:\n"
           "  - url: http://127.0.0.1:"
        << port_ << kRemoteWritePath
        << "\n"
           "    queue_config:\n"
           "      batch_send_deadline: 1s\n"
           "    metadata_config:\n"
           "      send_interval: 1s\n";
    cfg.close();

    std::vector<std::string> args = {binary_,
                                     "--config.file=" + (dir_ / "prometheus.yml").string(),
                                     "--storage.tsdb.path=" + (dir_ / "data").string(),
                                     "--web.listen-address=127.0.0.1:" + std::to_string(prom_port_),
                                     "--web.enable-remote-write-receiver",
                                     "--log.level=info"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string log = (dir_ / "prometheus.log").string();
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    int rc = posix_spawn(&pid_, binary_.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(rc, 0) << "cannot start " << binary_;
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (waitpid(pid_, &status, WNOHANG) == 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
    }
    if (HasFailure()) {
      std::ifstream log(dir_ / "prometheus.log");
      std::cerr << "--- prometheus log ---\n" << log.rdbuf() << "\n";
    }
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  bool PrometheusExited() {
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = 0;
      return true;
    }
    return false;
  }

  // Series named `name` in our head, with their newest sample.
  std::vector<std::pair<Labels, tsdb::Sample>> Received(const std::string& name) {
    std::vector<std::pair<Labels, tsdb::Sample>> out;
    auto m = tsdb::Matcher::Make(tsdb::MatchType::kEqual, "__name__", name);
    auto q = head_.Querier(tsdb::kMinTime, tsdb::kMaxTime);
    auto set = q->Select({&m.value(), 1});
    while (set->Next()) {
      auto it = set->Iterator();
      bool any = false;
      tsdb::Sample last;
      while (it->Next()) {
        last = it->At();
        any = true;
      }
      if (any) out.emplace_back(set->labels(), last);
    }
    return out;
  }

  std::string binary_;
  fs::path dir_;
  tsdb::head::Head head_;
  ReceiverStats stats_;
  std::unique_ptr<http::Server> server_;
  int port_ = 0;
  int prom_port_ = 0;
  std::thread thread_;
  pid_t pid_ = 0;
};

TEST_F(PrometheusInteropTest, PrometheusRemoteWritesIntoOurReceiver) {
  auto deadline = Clock::now() + std::chrono::seconds(90);
  std::vector<std::pair<Labels, tsdb::Sample>> up, build;
  while (Clock::now() < deadline) {
    ASSERT_FALSE(PrometheusExited()) << "prometheus exited early";
    up = Received("up");
    build = Received("prometheus_build_info");
    if (!up.empty() && !build.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_EQ(up.size(), 1u) << "no up series after 90 s; requests=" << stats_.requests.load()
                           << " errors=" << stats_.errors.load();
  std::string target = "127.0.0.1:" + std::to_string(prom_port_);
  EXPECT_EQ(up[0].first.Get("job"), "prometheus");
  EXPECT_EQ(up[0].first.Get("instance"), target);
  EXPECT_EQ(up[0].second.v, 1.0);
  // Prometheus timestamps are wall-clock milliseconds.
  EXPECT_LT(std::abs(up[0].second.t - NowMs()), 5 * 60 * 1000);
  ASSERT_EQ(build.size(), 1u);
  EXPECT_FALSE(build[0].first.Get("version").empty());
  EXPECT_EQ(build[0].first.Get("instance"), target);
  EXPECT_GT(stats_.samples.load(), 0u);
  // Every request Prometheus sent, data and metadata-only alike, was taken.
  EXPECT_EQ(stats_.errors.load(), 0u);
}

// Parses a PromQL instant-vector answer into (metric labels JSON, value).
std::vector<std::pair<std::string, std::string>> QueryPrometheus(int port,
                                                                 const std::string& query) {
  std::vector<std::pair<std::string, std::string>> out;
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/api/v1/query", httplib::Params{{"query", query}}, httplib::Headers{});
  if (!r || r->status != 200) return out;
  rapidjson::Document d;
  d.Parse(r->body.c_str());
  if (!d.IsObject() || !d.HasMember("data")) return out;
  for (const auto& e : d["data"]["result"].GetArray()) {
    std::string labels;
    for (const auto& m : e["metric"].GetObject()) {
      labels += std::string(m.name.GetString()) + "=" + m.value.GetString() + ",";
    }
    out.emplace_back(labels, e["value"][1].GetString());
  }
  return out;
}

TEST_F(PrometheusInteropTest, PrometheusAcceptsOurEncoding) {
  // Wait for Prometheus to be ready.
  httplib::Client c("127.0.0.1", prom_port_);
  auto deadline = Clock::now() + std::chrono::seconds(60);
  bool ready = false;
  while (!ready && Clock::now() < deadline) {
    ASSERT_FALSE(PrometheusExited()) << "prometheus exited early";
    auto r = c.Get("/-/ready");
    ready = r && r->status == 200;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(ready);

  int64_t t0 = NowMs() - 60'000;
  std::vector<TimeSeries> in;
  in.push_back(
      {Labels{{"__name__", "gpumon_interop"}, {"gpu", "0"}, {"zone", "b\xc3\xa9ta"}},
       {{t0, 1.5}, {t0 + 1000, 2.5}, {t0 + 2000, -std::numeric_limits<double>::infinity()}}});
  in.push_back({Labels{{"__name__", "gpumon_interop"}, {"gpu", "1"}, {"zone", "a"}},
                {{t0, 7}, {t0 + 1000, tsdb::StaleNaN()}}});
  std::string body = EncodeWriteRequest(in);
  httplib::Headers h{{"Content-Encoding", "snappy"},
                     {"X-Prometheus-Remote-Write-Version", "0.1.0"}};
  auto r = c.Post("/api/v1/write", h, body, "application/x-protobuf");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 204) << r->body;

  // At t0+2s: gpu 0 is -Inf, gpu 1 is stale (absent from the result).
  std::string at = "@" + std::to_string((t0 + 2000) / 1000.0);
  auto got = QueryPrometheus(prom_port_, "gpumon_interop " + at);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].first.find("gpu=0,"), std::string::npos) << got[0].first;
  EXPECT_NE(got[0].first.find("zone=b\xc3\xa9ta,"), std::string::npos) << got[0].first;
  EXPECT_EQ(got[0].second, "-Inf");
  got = QueryPrometheus(prom_port_, "count_over_time(gpumon_interop[10s] " + at + ")");
  ASSERT_EQ(got.size(), 2u);
  for (auto& [labels, value] : got) {
    // Stale markers are not counted: gpu 1 has one real sample.
    EXPECT_EQ(value, labels.find("gpu=0,") != std::string::npos ? "3" : "1") << labels;
  }
  got = QueryPrometheus(prom_port_, "sum_over_time(gpumon_interop{gpu=\"0\"}[1500ms] @ " +
                                        std::to_string((t0 + 1000) / 1000.0) + ")");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second, "4");

  // A body Prometheus must refuse, as we do.
  r = c.Post("/api/v1/write", h, std::string("garbage"), "application/x-protobuf");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
}

}  // namespace
}  // namespace gpumon::remote

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (gpumon::remote::FindOnPath("prometheus").empty()) {
    std::cout << "SKIP: no prometheus binary on PATH\n";
    return 77;
  }
  return RUN_ALL_TESTS();
}
