// The notifier against a real Alertmanager (Debian's prometheus-
// alertmanager 0.25): alerts posted through Notifier are read back from
// Alertmanager's GET /api/v2/alerts with their labels, annotations,
// startsAt and active state; a resolved update removes the alert from the
// active list. Skips when the binary is absent.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "notifier/notifier.h"
#include "test_util.h"

extern char** environ;

namespace gpumon::notifier {
namespace {

using testing::UnusedPort;
using testing::WaitFor;

std::string FindAlertmanager() {
  if (const char* env = std::getenv("GPUMON_ALERTMANAGER")) return env;
  for (const char* p : {"/usr/bin/prometheus-alertmanager", "/usr/local/bin/alertmanager"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

// The Alertmanager process, stopped (SIGTERM, then SIGKILL) when destroyed.
class AlertmanagerProcess {
 public:
  AlertmanagerProcess(const std::string& binary, const std::filesystem::path& dir, int port) {
    std::ofstream(dir / "am.yml") << "route:\n  receiver: blackhole\n  group_wait: 1s\n"
                                     "receivers:\n  - name: blackhole\n";
    std::vector<std::string> args = {
        binary, "--config.file=" + (dir / "am.yml").string(), "--storage.path=" + dir.string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port), "--cluster.listen-address="};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log = (dir / "am.log").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~AlertmanagerProcess() {
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

 private:
  pid_t pid_ = -1;
};

// "2024-05-01T10:00:00.123Z" (or without fraction, or with more digits)
// to Unix milliseconds; -1 when malformed. Written independently of the
// notifier's formatter so the comparison means something.
int64_t ParseRfc3339Millis(const std::string& s) {
  std::tm tm{};
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) return -1;
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  if (*rest == '.') {
    ++rest;
    int digits = 0;
    int64_t frac = 0;
    while (*rest >= '0' && *rest <= '9') {
      if (digits < 3) frac = frac * 10 + (*rest - '0');
      ++digits;
      ++rest;
    }
    for (int d = digits; d < 3; ++d) frac *= 10;
    ms += frac;
  }
  return std::string(rest) == "Z" ? ms : -1;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(AlertmanagerInteropTest, AlertsRoundTripAndResolve) {
  const std::string binary = FindAlertmanager();
  if (binary.empty()) GTEST_SKIP() << "prometheus-alertmanager not installed";
  const auto dir =
      std::filesystem::temp_directory_path() / ("notifier_am_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const int port = UnusedPort();
  ASSERT_GT(port, 0);
  {
    AlertmanagerProcess am(binary, dir, port);
    ASSERT_TRUE(am.started());
    httplib::Client client("127.0.0.1", port);
    ASSERT_TRUE(WaitFor(
        [&] {
          auto r = client.Get("/-/ready");
          return r && r->status == 200;
        },
        60))
        << "Alertmanager did not become ready";

    Options options;
    options.retry_min_backoff_ms = 100;
    Notifier notifier(options);
    scrape::AlertingConfig cfg;
    scrape::AlertmanagerConfig am_cfg;
    scrape::TargetGroup tg;
    tg.targets = {"127.0.0.1:" + std::to_string(port)};
    am_cfg.static_configs.push_back(tg);
    cfg.alertmanagers.push_back(am_cfg);
    ASSERT_TRUE(notifier.ApplyConfig(cfg, Labels{{"cluster", "lab"}}).ok());

    // Alertmanager keeps millisecond precision; a whole second makes the
    // comparison independent of rounding on either side.
    const int64_t starts = (NowMs() / 1000 - 120) * 1000 + 250;
    Alert alert;
    alert.labels = Labels{{"alertname", "GpuTooHot"}, {"gpu", "3"}, {"severity", "critical"}};
    alert.annotations = Labels{{"summary", "GPU 3 above 90C"}, {"runbook", "http://wiki/gpu"}};
    alert.starts_at_ms = starts;
    alert.ends_at_ms = NowMs() + 3600 * 1000;
    alert.generator_url = "http://gpumon:9090/graph?g0.expr=gpu_temp%3E90";
    notifier.Send({alert});

    // Reads the alerts Alertmanager reports as active.
    auto active = [&](rapidjson::Document& d) {
      auto r = client.Get("/api/v2/alerts?active=true&silenced=false&inhibited=false");
      if (!r || r->status != 200) return false;
      d.Parse(r->body.c_str());
      return d.IsArray();
    };
    rapidjson::Document d;
    ASSERT_TRUE(WaitFor([&] { return active(d) && d.Size() == 1; }, 30))
        << "alert did not arrive in Alertmanager";
    const auto& got = d[0];
    EXPECT_STREQ(got["labels"]["alertname"].GetString(), "GpuTooHot");
    EXPECT_STREQ(got["labels"]["gpu"].GetString(), "3");
    EXPECT_STREQ(got["labels"]["severity"].GetString(), "critical");
    EXPECT_STREQ(got["labels"]["cluster"].GetString(), "lab");  // external label added
    EXPECT_EQ(got["labels"].MemberCount(), 4u);
    EXPECT_STREQ(got["annotations"]["summary"].GetString(), "GPU 3 above 90C");
    EXPECT_STREQ(got["annotations"]["runbook"].GetString(), "http://wiki/gpu");
    EXPECT_EQ(ParseRfc3339Millis(got["startsAt"].GetString()), starts);
    EXPECT_STREQ(got["generatorURL"].GetString(), alert.generator_url.c_str());
    EXPECT_STREQ(got["status"]["state"].GetString(), "active");

    // The rule side resolves the alert by sending it with endsAt now.
    Alert resolved = alert;
    resolved.ends_at_ms = NowMs() - 1000;
    notifier.Send({resolved});
    ASSERT_TRUE(WaitFor([&] { return active(d) && d.Size() == 0; }, 30))
        << "resolved alert still active";

    const Stats s = notifier.stats();
    EXPECT_EQ(s.sent, 2u);
    EXPECT_EQ(s.errors, 0u);
    EXPECT_EQ(s.dropped, 0u);
    notifier.Stop();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumon::notifier
