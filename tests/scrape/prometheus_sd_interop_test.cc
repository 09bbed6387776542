// Differential check against the real Prometheus: both discover targets
// from the same http_sd endpoint with the same relabel rules, and
// /api/v1/targets must agree on every active target's labels and
// discovered labels and on the dropped targets' discovered labels. Skips
// when prometheus is not installed.
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "scrape/manager.h"
#include "scrape/targets_json.h"
#include "test_util.h"

namespace gpumon::scrape {
namespace {

std::string FindOnPath(const std::string& name) {
  FILE* p = popen(("command -v " + name + " 2>/dev/null").c_str(), "r");
  if (!p) return "";
  char buf[512] = {0};
  std::string out = fgets(buf, sizeof buf, p) ? buf : "";
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
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

// One label set rendered canonically (sorted by name), for set comparison.
std::string Canonical(const rapidjson::Value& obj) {
  std::map<std::string, std::string> m;
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    m[it->name.GetString()] = it->value.GetString();
  }
  std::string out;
  for (const auto& [k, v] : m) out += k + "=" + v + ",";
  return out;
}

struct Listing {
  std::multiset<std::string> active;   // labels | discoveredLabels
  std::multiset<std::string> dropped;  // discoveredLabels
};

Listing Parse(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  Listing out;
  if (doc.HasParseError() || !doc.HasMember("data")) return out;
  for (const auto& t : doc["data"]["activeTargets"].GetArray()) {
    out.active.insert(Canonical(t["labels"]) + " | " + Canonical(t["discoveredLabels"]));
  }
  for (const auto& t : doc["data"]["droppedTargets"].GetArray()) {
    out.dropped.insert(Canonical(t["discoveredLabels"]));
  }
  return out;
}

TEST(PrometheusSdInteropTest, HttpSdTargetsAndRelabelingAgree) {
  const std::string prometheus = FindOnPath("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed";

  // The http_sd endpoint both ask.
  httplib::Server sd;
  const int sd_port = sd.bind_to_any_port("127.0.0.1");
  sd.Get("/sd", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"([
      {"targets": ["127.0.0.1:1", "127.0.0.2:2"],
       "labels": {"rack": "r1", "__meta_gpu_model": "H100"}},
      {"targets": ["127.0.0.3:3"], "labels": {"role": "cpu"}},
      {"targets": ["127.0.0.4:4"], "labels": {"role": "gpu", "__meta_gpu_model": "A100"}}
    ])",
                    "application/json");
  });
  std::thread sd_thread([&] { sd.listen_after_bind(); });
  while (!sd.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  const std::string yaml =
      "scrape_configs:\n  - job_name: gpus\n    scrape_interval: 1h\n"
      "    scrape_timeout: 1s\n    http_sd_configs:\n"
      "      - url: http://127.0.0.1:" +
      std::to_string(sd_port) +
      "/sd\n"
      "        refresh_interval: 1s\n"
      "    relabel_configs:\n"
      "      - source_labels: [role]\n        regex: cpu\n"
      "        action: drop\n"
      "      - regex: __meta_gpu_(.*)\n        action: labelmap\n"
      "      - source_labels: [__meta_url]\n        regex: '.*:(\\d+)/sd'\n"
      "        target_label: sd_port\n"
      "      - source_labels: [__address__]\n        regex: '([^:]+):.*'\n"
      "        target_label: host\n";
  auto dir = std::filesystem::temp_directory_path() / ("sd_interop_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string cfg = (dir / "prometheus.yml").string();
  std::ofstream(cfg) << yaml;

  // Ours.
  auto config = LoadConfig(cfg);
  ASSERT_TRUE(config.ok()) << config.status().message();
  testing::Store store;
  Manager ours(store.Factory(), [](const std::string&, int64_t, uint64_t) {
    return Result<FetchResult>(Status::Error("not scraped"));
  });
  ASSERT_TRUE(ours.ApplyConfig(*config).ok());

  // Theirs.
  const int port = FreePort();
  ASSERT_GT(port, 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string log = (dir / "prometheus.log").string();
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    const std::string a1 = "--config.file=" + cfg,
                      a2 = "--storage.tsdb.path=" + (dir / "data").string(),
                      a3 = "--web.listen-address=127.0.0.1:" + std::to_string(port);
    ::execl(prometheus.c_str(), "prometheus", a1.c_str(), a2.c_str(), a3.c_str(), nullptr);
    ::_exit(127);
  }
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  Listing theirs, mine;
  // Prometheus applies discovered targets every 5 s; wait until both list
  // all four targets (three active, one dropped).
  for (int i = 0; i < 300; ++i) {
    auto r = client.Get("/api/v1/targets");
    if (r && r->status == 200) theirs = Parse(r->body);
    mine = Parse(
        TargetsJson(ours.Targets(), ours.DroppedTargets(), ours.DroppedTargetCounts(), "", ""));
    if (theirs.active.size() == 3 && theirs.dropped.size() == 1 && mine.active.size() == 3 &&
        mine.dropped.size() == 1) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ours.Stop();
  sd.stop();
  sd_thread.join();

  ASSERT_EQ(theirs.active.size(), 3u) << "prometheus did not discover the targets";
  EXPECT_EQ(mine.active, theirs.active);
  EXPECT_EQ(mine.dropped, theirs.dropped);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumon::scrape
