// Remote write out against real receivers: Prometheus (with
// --web.enable-remote-write-receiver) and VictoriaMetrics, each started on
// a free loopback port with a temporary data directory. Samples go through
// WriteStorage's wrapped appenders and are read back over the receiver's
// own query API. Tests skip when a binary is absent; the program exits 77
// (ctest SKIP) when neither is installed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "remote/queue/write_storage.h"
#include "test_receiver.h"

namespace gpumon::remote {
namespace {

namespace fs = std::filesystem;
using testing::WaitFor;

std::string FindBinary(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A child process with its output in a log file; stopped on destruction.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const fs::path& log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Process() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 300; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

 private:
  pid_t pid_ = -1;
};

bool HttpOk(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  auto res = c.Get(path);
  return res && res->status == 200;
}

// The committed samples: series -> (t -> v).
using SampleMap = std::map<std::string, std::map<int64_t, double>>;

// An inner appender that accepts everything (the server's TSDB role).
scrape::AppenderFactory AcceptAll() {
  class App : public scrape::Appender {
   public:
    Status Append(const Labels&, int64_t, double) override { return Status::Ok(); }
    Status Commit() override { return Status::Ok(); }
    void Rollback() override {}
  };
  return [] { return std::make_unique<App>(); };
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class ReceiversTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rwint-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (HasFailure()) {
      for (const auto& e : fs::directory_iterator(dir_)) {
        if (e.path().extension() == ".log") {
          std::ifstream in(e.path());
          std::stringstream ss;
          ss << in.rdbuf();
          std::string text = ss.str();
          if (text.size() > 4000) text = text.substr(text.size() - 4000);
          std::cerr << "--- " << e.path() << "\n" << text << "\n";
        }
      }
    }
    fs::remove_all(dir_);
  }

  std::unique_ptr<Process> StartPrometheus(int port) {
    std::string bin = FindBinary("prometheus");
    std::ofstream(dir_ / "prometheus.yml") << "global:\n  scrape_interval: 1m\n";
    auto p = std::make_unique<Process>(
        std::vector<std::string>{bin, "--config.file=" + (dir_ / "prometheus.yml").string(),
                                 "--storage.tsdb.path=" + (dir_ / "prom-data").string(),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port),
                                 "--web.enable-remote-write-receiver"},
        dir_ / "prometheus.log");
    EXPECT_TRUE(WaitFor([&] { return HttpOk(port, "/-/ready"); })) << "prometheus not ready";
    return p;
  }

  std::unique_ptr<Process> StartVictoriaMetrics(int port) {
    std::string bin = FindBinary("victoria-metrics");
    auto p = std::make_unique<Process>(
        std::vector<std::string>{bin, "-httpListenAddr=127.0.0.1:" + std::to_string(port),
                                 "-storageDataPath=" + (dir_ / "vm-data").string()},
        dir_ / "victoria-metrics.log");
    EXPECT_TRUE(WaitFor([&] { return HttpOk(port, "/health"); })) << "victoria-metrics not ready";
    return p;
  }

  static scrape::RemoteWriteConfig Config(int port, const std::string& name) {
    scrape::RemoteWriteConfig c;
    c.url = "http://127.0.0.1:" + std::to_string(port) + "/api/v1/write";
    c.name = name;
    c.remote_timeout_ms = 5000;
    c.queue.batch_send_deadline_ms = 50;
    c.queue.max_samples_per_send = 100;  // several requests per test
    c.queue.min_backoff_ms = 20;
    c.queue.max_backoff_ms = 200;
    return c;
  }

  // Commits `steps` scrapes of `series` series ending at `end_ms`, 15s
  // apart, through `factory`; records what was committed in `sent`.
  static void CommitSeries(const scrape::AppenderFactory& factory, int series, int steps,
                           int64_t end_ms, const std::string& metric, SampleMap* sent,
                           const Labels& external) {
    for (int k = 0; k < steps; ++k) {
      const int64_t t = end_ms - (steps - 1 - k) * 15000;
      auto app = factory();
      for (int i = 0; i < series; ++i) {
        Labels labels{{"__name__", metric}, {"gpu", std::to_string(i)}, {"job", "rw"}};
        // Values exact in decimal and binary, signs and fractions mixed.
        double v = (i - 2) * 1.5 + k * 0.125;
        ASSERT_TRUE(app->Append(labels, t, v).ok());
        std::vector<Label> full = labels.items();
        for (const Label& e : external) full.push_back(e);
        (*sent)[Labels::FromUnsorted(full).ToString()][t] = v;
      }
      ASSERT_TRUE(app->Commit().ok());
    }
  }

  static Labels LabelsOf(const rapidjson::Value& metric) {
    std::vector<Label> items;
    for (auto it = metric.MemberBegin(); it != metric.MemberEnd(); ++it) {
      items.push_back({it->name.GetString(), it->value.GetString()});
    }
    return Labels::FromUnsorted(std::move(items));
  }

  // Prometheus: a range selector returns the raw samples.
  static SampleMap QueryPrometheus(int port, const std::string& metric, int64_t at_ms) {
    SampleMap got;
    httplib::Client c("127.0.0.1", port);
    httplib::Params params = {{"query", metric + "[1h]"},
                              {"time", std::to_string(at_ms / 1000 + 1)}};
    auto res = c.Post("/api/v1/query", params);
    if (!res || res->status != 200) return got;
    rapidjson::Document doc;
    doc.Parse(res->body.c_str());
    if (doc.HasParseError() || !doc.HasMember("data")) return got;
    for (const auto& series : doc["data"]["result"].GetArray()) {
      std::string key = LabelsOf(series["metric"]).ToString();
      for (const auto& pair : series["values"].GetArray()) {
        int64_t t = std::llround(pair[0].GetDouble() * 1000);
        got[key][t] = std::strtod(pair[1].GetString(), nullptr);
      }
    }
    return got;
  }

  // VictoriaMetrics: /api/v1/export streams one JSON object per series.
  static SampleMap ExportVictoriaMetrics(int port, const std::string& metric) {
    SampleMap got;
    httplib::Client c("127.0.0.1", port);
    c.Get("/internal/force_flush");
    auto res = c.Get("/api/v1/export?match[]=" + metric);
    if (!res || res->status != 200) return got;
    std::stringstream lines(res->body);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      rapidjson::Document doc;
      doc.Parse(line.c_str());
      if (doc.HasParseError()) continue;
      std::string key = LabelsOf(doc["metric"]).ToString();
      const auto& ts = doc["timestamps"].GetArray();
      const auto& vs = doc["values"].GetArray();
      for (rapidjson::SizeType i = 0; i < ts.Size() && i < vs.Size(); ++i) {
        got[key][ts[i].GetInt64()] = vs[i].GetDouble();
      }
    }
    return got;
  }

  static size_t Count(const SampleMap& m) {
    size_t n = 0;
    for (const auto& [k, v] : m) n += v.size();
    return n;
  }

  fs::path dir_;
};

TEST_F(ReceiversTest, PrometheusReceivesExactSamples) {
  if (FindBinary("prometheus").empty()) GTEST_SKIP() << "prometheus not installed";
  const int port = FreePort();
  auto prom = StartPrometheus(port);
  const Labels external{{"cluster", "it"}};
  WriteStorage ws((dir_ / "remote-write").string());
  ASSERT_TRUE(ws.ApplyConfig({Config(port, "prom")}, external).ok());
  auto factory = ws.Wrap(AcceptAll());
  SampleMap sent;
  const int64_t end = NowMs() - 60000;
  CommitSeries(factory, 6, 12, end, "rw_it_prom", &sent, external);
  ASSERT_TRUE(WaitFor([&] { return ws.Stats()[0].samples_pending == 0; }));
  EXPECT_EQ(ws.Stats()[0].samples_sent, 72u);
  EXPECT_EQ(ws.Stats()[0].samples_failed, 0u);
  SampleMap got;
  ASSERT_TRUE(WaitFor([&] {
    got = QueryPrometheus(port, "rw_it_prom", end);
    return Count(got) >= Count(sent);
  })) << "got "
      << Count(got) << " of " << Count(sent);
  EXPECT_EQ(got, sent);
}

TEST_F(ReceiversTest, VictoriaMetricsReceivesExactSamples) {
  if (FindBinary("victoria-metrics").empty()) GTEST_SKIP() << "victoria-metrics not installed";
  const int port = FreePort();
  auto vm = StartVictoriaMetrics(port);
  const Labels external{{"cluster", "it"}};
  WriteStorage ws((dir_ / "remote-write").string());
  ASSERT_TRUE(ws.ApplyConfig({Config(port, "vm")}, external).ok());
  auto factory = ws.Wrap(AcceptAll());
  SampleMap sent;
  CommitSeries(factory, 6, 12, NowMs() - 60000, "rw_it_vm", &sent, external);
  ASSERT_TRUE(WaitFor([&] { return ws.Stats()[0].samples_pending == 0; }));
  EXPECT_EQ(ws.Stats()[0].samples_failed, 0u);
  SampleMap got;
  ASSERT_TRUE(WaitFor([&] {
    got = ExportVictoriaMetrics(port, "rw_it_vm");
    return Count(got) >= Count(sent);
  })) << "got "
      << Count(got) << " of " << Count(sent);
  EXPECT_EQ(got, sent);
}

// The receiver does not exist yet while samples are committed, the sender
// is even restarted in between; once the receiver starts, every sample
// arrives.
TEST_F(ReceiversTest, NothingIsLostWhileReceiverIsDown) {
  const bool have_vm = !FindBinary("victoria-metrics").empty();
  const bool have_prom = !FindBinary("prometheus").empty();
  if (!have_vm && !have_prom) GTEST_SKIP() << "no receiver installed";
  const int port = FreePort();
  const Labels external{{"cluster", "down"}};
  const std::string queues = (dir_ / "remote-write").string();
  auto factory_inner = AcceptAll();
  SampleMap sent;
  const int64_t end = NowMs() - 60000;
  {
    WriteStorage ws(queues);
    ASSERT_TRUE(ws.ApplyConfig({Config(port, "late")}, external).ok());
    auto factory = ws.Wrap(factory_inner);
    CommitSeries(factory, 5, 10, end - 20 * 15000, "rw_it_late", &sent, external);
    ASSERT_TRUE(WaitFor([&] { return ws.Stats()[0].samples_retried > 0; }));
    EXPECT_EQ(ws.Stats()[0].samples_sent, 0u);
  }  // a restart of the server
  WriteStorage ws(queues);
  ASSERT_TRUE(ws.ApplyConfig({Config(port, "late")}, external).ok());
  auto factory = ws.Wrap(factory_inner);
  CommitSeries(factory, 5, 10, end, "rw_it_late", &sent, external);
  ASSERT_TRUE(WaitFor([&] { return ws.Stats()[0].samples_retried > 0; }));
  ASSERT_EQ(Count(sent), 100u);

  auto receiver = have_vm ? StartVictoriaMetrics(port) : StartPrometheus(port);
  ASSERT_TRUE(WaitFor([&] { return ws.Stats()[0].samples_pending == 0; }));
  EXPECT_EQ(ws.Stats()[0].samples_failed, 0u);
  EXPECT_EQ(ws.Stats()[0].samples_dropped_size + ws.Stats()[0].samples_dropped_age, 0u);
  SampleMap got;
  ASSERT_TRUE(WaitFor([&] {
    got = have_vm ? ExportVictoriaMetrics(port, "rw_it_late")
                  : QueryPrometheus(port, "rw_it_late", end);
    return Count(got) >= Count(sent);
  })) << "got "
      << Count(got) << " of " << Count(sent);
  EXPECT_EQ(got, sent);
}

}  // namespace
}  // namespace gpumon::remote

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (gpumon::remote::FindBinary("prometheus").empty() &&
      gpumon::remote::FindBinary("victoria-metrics").empty()) {
    std::printf("SKIP: neither prometheus nor victoria-metrics is installed\n");
    return 77;
  }
  return RUN_ALL_TESTS();
}
