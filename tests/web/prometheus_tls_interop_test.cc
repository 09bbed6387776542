// Interoperability with a real Prometheus (2.42, Go's TLS stack):
// - Prometheus serves its own endpoints under a web config file we also
//   accept (TLS + basic auth), and our scraper (HttpFetchWith) fetches its
//   /metrics with a CA file and basic auth;
// - Prometheus scrapes our HttpServer under RequireAndVerifyClientCert +
//   basic auth with its tls_config/basic_auth, and reports the target up.
// Skips when the prometheus binary is absent.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "scrape/http_fetch.h"
#include "test_certs.h"
#include "web/http_server.h"
#include "web/web_config.h"

extern char** environ;

namespace gpumon::web {
namespace {

// A loopback port nobody listens on right now.
int UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// A child process, stopped (SIGTERM, then SIGKILL) when destroyed.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& log) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Child() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  bool exited() {
    int status = 0;
    return pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_ && (pid_ = -1, true);
  }

 private:
  pid_t pid_ = -1;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(PrometheusTlsInteropTest, BothDirections) {
  const std::string prometheus = testing::FindOnPath("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed";
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  testing::TestCerts certs;
  ASSERT_TRUE(testing::MakeTestCerts(dir.path(), &certs));

  // Our target: mTLS + basic auth.
  WebConfig ours;
  ours.tls.cert_file = certs.server_cert;
  ours.tls.key_file = certs.server_key;
  ours.tls.client_auth = ClientAuth::kRequireAndVerifyClientCert;
  ours.tls.client_ca_file = certs.ca_cert;
  ours.basic_auth_users["prometheus"] = testing::BcryptHash("scrape-pw");
  HttpServer target(HttpServerOptions{.threads = 2}, ours);
  target.router().Get("/metrics", [](const http::HttpRequest&, http::HttpResponse& res) {
    res.SetContent("# TYPE interop_gauge gauge\ninterop_gauge 42\n", "text/plain; version=0.0.4");
  });
  ASSERT_TRUE(target.Bind("127.0.0.1:0").ok());
  std::thread serving([&] { (void)target.Run(); });
  struct StopOnExit {
    HttpServer& s;
    std::thread& t;
    ~StopOnExit() {
      s.Stop();
      t.join();
    }
  } stop{target, serving};

  // Prometheus's own web config (loaded by both of us) and scrape config.
  const std::string web_yml =
      dir.Write("web.yml",
                "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
                "basic_auth_users:\n  admin: " +
                    testing::BcryptHash("admin-pw") + "\n");
  auto loaded = LoadWebConfig(web_yml);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const std::string prom_yml =
      dir.Write("prometheus.yml",
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n- job_name: gpumon\n  scheme: https\n"
                "  tls_config:\n    ca_file: ca.pem\n    cert_file: client.pem\n"
                "    key_file: client.key\n"
                "  basic_auth:\n    username: prometheus\n    password: scrape-pw\n"
                "  static_configs:\n  - targets: ['127.0.0.1:" +
                    std::to_string(target.port()) + "']\n");
  const int port = UnusedPort();
  ASSERT_GT(port, 0);
  Child prom({prometheus, "--config.file=" + prom_yml, "--web.config.file=" + web_yml,
              "--storage.tsdb.path=" + dir.path() + "/data",
              "--web.listen-address=127.0.0.1:" + std::to_string(port)},
             dir.path() + "/prometheus.log");
  ASSERT_TRUE(prom.started());

  scrape::HttpClientConfig http;
  http.tls_ca_file = certs.ca_cert;
  http.basic_auth_username = "admin";
  http.basic_auth_password = "admin-pw";
  const std::string base = "https://127.0.0.1:" + std::to_string(port);
  // Wait (bounded) for Prometheus to listen and report our target up.
  bool fetched = false;
  bool target_up = false;
  std::string last;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up && !prom.exited()) {
    auto metrics = scrape::HttpFetchWith(base + "/metrics", 5000, 0, http);
    if (metrics.ok()) {
      fetched = metrics->body.find("prometheus_build_info") != std::string::npos;
      auto up = scrape::HttpFetchWith(base + "/api/v1/query?query=interop_gauge", 5000, 0, http);
      last = up.ok() ? up->body : up.status().message();
      if (up.ok() && up->body.find("\"42\"") != std::string::npos) {
        target_up = true;
        break;
      }
    } else {
      last = metrics.status().message();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(fetched) << "our scraper could not fetch Prometheus's /metrics: " << last << "\n"
                       << ReadFile(dir.path() + "/prometheus.log");
  EXPECT_TRUE(target_up) << "Prometheus did not scrape our TLS target: " << last << "\n"
                         << ReadFile(dir.path() + "/prometheus.log");

  // Without credentials Prometheus (Go's exporter-toolkit) answers 401.
  http.basic_auth_username.clear();
  auto denied = scrape::HttpFetchWith(base + "/metrics", 5000, 0, http);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().message(), "server returned HTTP status 401 Unauthorized");
}

}  // namespace
}  // namespace gpumon::web
