// The server command's HTTP self-monitoring and its shutdown watchdog.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include "cli/http_request_recorder.h"
#include "cli/http_server_metrics.h"
#include "cli/shutdown_watchdog.h"
#include "selfmon/server_metrics.h"

namespace gpumon::cli {
namespace {

std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

// First: fork() while this process has no other threads.
TEST(ShutdownWatchdogTest, EndsAProcessThatDoesNotFinish) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ArmShutdownWatchdog(std::chrono::milliseconds(10), "--test");
    sleep(60);  // a component that hangs
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST(HttpServerMetricsTest, ReportTheServersCounters) {
  web::HttpServer server(web::HttpServerOptions{.threads = 1});
  server.router().Get("/ok", [](const http::HttpRequest&, http::HttpResponse& res) {
    res.SetContent("ok", "text/plain");
  });
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  selfmon::Registry registry;
  ASSERT_TRUE(RegisterHttpServerMetrics(registry, server).ok());
  std::thread serving([&] { (void)server.Run(); });
  httplib::Client client("127.0.0.1", server.port());
  client.set_keep_alive(true);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.Get("/ok"));
  // The client keeps its connection after a 200.
  EXPECT_EQ(Samples(registry.Render())["gpumon_http_connections_open"], 1);
  ASSERT_TRUE(client.Get("/missing"));
  auto s = Samples(registry.Render());
  server.Stop();
  serving.join();
  EXPECT_GE(s["gpumon_http_requests_received_total"], 4);
  EXPECT_GE(s["gpumon_http_rejected_requests_total"], 1);
  EXPECT_GE(s["gpumon_http_connections_accepted_total"], 1);
  EXPECT_EQ(s.count("gpumon_http_connections_open"), 1u);
  EXPECT_EQ(s.count("gpumon_http_timeouts_total"), 1u);
  EXPECT_EQ(s.count("gpumon_http_canceled_requests_total"), 1u);
  EXPECT_EQ(s.count("gpumon_http_connections_refused_total"), 1u);

  // Documented with the other self-monitoring families.
  std::ifstream in(std::string(GPUMON_SOURCE_DIR) + "/docs/formats/selfmon-metrics.md");
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [name, value] : s) {
    EXPECT_NE(doc.find("| `" + name + "` |"), std::string::npos) << name << " is not documented";
  }
  // A second registration collides instead of silently doubling.
  EXPECT_FALSE(RegisterHttpServerMetrics(registry, server).ok());
}

TEST(HttpRequestRecorderTest, HandlerLabelsAreBounded) {
  EXPECT_EQ(HandlerLabel("/api/v1/query"), "/api/v1/query");
  EXPECT_EQ(HandlerLabel(R"(/api/v1/label/([^/]+)/values)"), "/api/v1/label/*/values");
  EXPECT_EQ(HandlerLabel("/assets/(.+)"), "/assets/*");
  EXPECT_EQ(HandlerLabel(R"(/a/((x)|(y))/b\.c)"), "/a/*/b.c");
}

// Every request a route answers is counted by handler and code and timed,
// streamed bodies included; nothing is recorded before the metrics are
// attached or after they are detached.
TEST(HttpRequestRecorderTest, CountsAndTimesEveryRoutedRequest) {
  auto recorder = std::make_shared<HttpRequestRecorder>();
  web::HttpServerOptions options{.threads = 2};
  options.observe_request = [recorder](std::string_view route, int status, double seconds) {
    recorder->Record(route, status, seconds);
  };
  web::HttpServer server(options);
  server.router().Get("/ok", [](const http::HttpRequest&, http::HttpResponse& res) {
    res.SetContent("ok", "text/plain");
  });
  server.router().Get(R"(/items/(\d+))", [](const http::HttpRequest&, http::HttpResponse& res) {
    res.status = 422;
    res.SetContent("no", "text/plain");
  });
  server.router().Get("/stream", [](const http::HttpRequest&, http::HttpResponse& res) {
    res.Stream("text/plain",
               [](const http::BodyWriter& write) { return write("a", 1) && write("b", 1); });
  });
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  std::thread serving([&] { (void)server.Run(); });
  httplib::Client client("127.0.0.1", server.port());
  ASSERT_TRUE(client.Get("/ok"));  // before the metrics exist: not recorded

  selfmon::Registry registry;
  auto metrics = selfmon::RegisterServerMetrics(registry, {});
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  std::map<std::string, double> s;
  {
    const HttpRequestRecorder::AttachedScope attached(*recorder, metrics->get());
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(client.Get("/ok"));
    ASSERT_TRUE(client.Get("/items/7"));
    auto streamed = client.Get("/stream");
    ASSERT_TRUE(streamed);
    EXPECT_EQ(streamed->body, "ab");
    ASSERT_TRUE(client.Get("/missing"));  // the server's own 404: not a route's
    // The server counts a request once its handler (or stream) finished,
    // which may be just after the client has read the answer.
    for (int i = 0; i < 200; ++i) {
      s = Samples(registry.Render());
      if (s["gpumon_http_requests_total{handler=\"/stream\",code=\"200\"}"] == 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_TRUE(client.Get("/ok"));  // detached: not recorded
  const auto after = Samples(registry.Render());
  server.Stop();
  serving.join();
  EXPECT_EQ(s["gpumon_http_requests_total{handler=\"/ok\",code=\"200\"}"], 2);
  EXPECT_EQ(s["gpumon_http_requests_total{handler=\"/items/*\",code=\"422\"}"], 1);
  EXPECT_EQ(s["gpumon_http_requests_total{handler=\"/stream\",code=\"200\"}"], 1);
  EXPECT_EQ(s["gpumon_http_request_duration_seconds_count{handler=\"/ok\"}"], 2);
  EXPECT_EQ(s.count("gpumon_http_requests_total{handler=\"/missing\",code=\"404\"}"), 0u);
  EXPECT_EQ(after.at("gpumon_http_requests_total{handler=\"/ok\",code=\"200\"}"), 2);
}

}  // namespace
}  // namespace gpumon::cli
