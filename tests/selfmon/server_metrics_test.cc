// The server's gpumon_* families and the process_* families: what the
// sources report comes out under the documented names and labels, unset
// values are absent, and the whole exposition passes our parser and
// Prometheus's own linter (`promtool check metrics`).
#include "selfmon/server_metrics.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "exposition/parser.h"
#include "selfmon/process_metrics.h"

namespace gpumon::selfmon {
namespace {

// Parsed samples as "name{a=\"b\"}" (labels in output order) → value.
std::map<std::string, double> Samples(const std::string& text) {
  auto families = exposition::ParseToFamilies(text, exposition::Format::kText004);
  EXPECT_TRUE(families.ok()) << families.status().message() << "\n" << text;
  std::map<std::string, double> out;
  if (!families.ok()) return out;
  for (const auto& f : *families) {
    for (const auto& s : f.samples) {
      std::string key = f.name;
      if (!s.labels.empty()) {
        key += "{";
        for (size_t i = 0; i < s.labels.size(); ++i) {
          if (i) key += ",";
          key += s.labels[i].name + "=\"" + s.labels[i].value + "\"";
        }
        key += "}";
      }
      out[key] = s.value;
    }
  }
  return out;
}

ServerStatsSources FullSources(int* tsdb_calls) {
  ServerStatsSources src;
  src.version = "1.2.3";
  src.revision = "abc";
  src.ready = [] { return 1.0; };
  src.tsdb = [tsdb_calls] {
    ++*tsdb_calls;
    TsdbStatsView v;
    v.head_series = 120;
    v.head_samples_appended_total = 5000;
    v.head_chunks = 240;
    v.head_min_time_ms = 1000;
    v.head_max_time_ms = 9000;
    v.blocks_loaded = 3;
    v.storage_blocks_bytes = 1 << 20;
    v.wal_records_total = 77;
    v.wal_fsyncs_total = 4;
    v.compactions_total = 2;
    return v;
  };
  src.scrape = [] {
    ScrapeStatsView v;
    v.pools.push_back({.name = "node", .targets_up = 2, .targets_down = 1});
    v.pools.push_back({.name = "gpu", .targets_up = 8, .scrapes_total = 40});
    v.last_reload_successful = 1;
    return v;
  };
  src.rules = [] {
    RulesStatsView v;
    v.groups.push_back({.name = "rules.yml;gpu",
                        .evaluations_total = 10,
                        .evaluation_failures_total = 1,
                        .last_duration_seconds = 0.25});
    v.alerts_firing = 2;
    return v;
  };
  src.notifier = [] {
    NotifierStatsView v;
    v.alertmanagers.push_back(
        {.url = "http://am:9093/api/v2/alerts", .sent_total = 5, .errors_total = 0});
    v.dropped_total = 1;
    v.queue_length = 0;
    v.queue_capacity = 10000;
    return v;
  };
  src.remote_write = [] {
    RemoteWriteStatsView v;
    v.queues.push_back({.remote_name = "vm",
                        .url = "http://vm:8428/api/v1/write",
                        .samples_total = 900,
                        .samples_failed_total = 3,
                        .samples_retried_total = 7,
                        .samples_pending = 12});
    v.highest_timestamp_in_seconds = 1700000000;
    return v;
  };
  src.remote_receiver = [] {
    RemoteReceiverStatsView v;
    v.requests_total = 6;
    v.samples_received_total = 600;
    return v;
  };
  return src;
}

TEST(ServerMetricsTest, ReportsSourcesUnderGpumonNames) {
  Registry r;
  int tsdb_calls = 0;
  auto m = RegisterServerMetrics(r, FullSources(&tsdb_calls));
  ASSERT_TRUE(m.ok()) << m.status().message();
  (*m)->RecordQuery("instant", 0.003, "", 1500);
  (*m)->RecordQuery("range", 2.0, "timeout", 0);
  (*m)->RecordHttpRequest("/api/v1/query", 200, 0.01);
  auto s = Samples(r.Render());
  EXPECT_EQ(tsdb_calls, 1);  // one Stats() read per render

  EXPECT_EQ(s["gpumon_build_info{version=\"1.2.3\",revision=\"abc\"}"], 1);
  EXPECT_EQ(s["gpumon_ready"], 1);
  EXPECT_EQ(s["gpumon_tsdb_head_series"], 120);
  EXPECT_EQ(s["gpumon_tsdb_head_samples_appended_total"], 5000);
  EXPECT_EQ(s["gpumon_tsdb_head_chunks"], 240);
  EXPECT_EQ(s["gpumon_tsdb_head_max_time"], 9000);
  EXPECT_EQ(s["gpumon_tsdb_blocks_loaded"], 3);
  EXPECT_EQ(s["gpumon_tsdb_storage_blocks_bytes"], 1 << 20);
  EXPECT_EQ(s["gpumon_tsdb_wal_records_total"], 77);
  EXPECT_EQ(s["gpumon_tsdb_compactions_total"], 2);
  // Unset fields are absent, not zero.
  EXPECT_FALSE(s.count("gpumon_tsdb_wal_bytes_total"));
  EXPECT_FALSE(s.count("gpumon_tsdb_compactions_failed_total"));

  EXPECT_EQ(s["gpumon_target_health{scrape_pool=\"node\",health=\"up\"}"], 2);
  EXPECT_EQ(s["gpumon_target_health{scrape_pool=\"node\",health=\"down\"}"], 1);
  EXPECT_FALSE(s.count("gpumon_target_health{scrape_pool=\"gpu\",health=\"down\"}"));
  EXPECT_EQ(s["gpumon_target_scrapes_total{scrape_pool=\"gpu\"}"], 40);
  EXPECT_FALSE(s.count("gpumon_target_scrapes_total{scrape_pool=\"node\"}"));
  EXPECT_EQ(s["gpumon_config_last_reload_successful"], 1);

  EXPECT_EQ(s["gpumon_rule_evaluations_total{rule_group=\"rules.yml;gpu\"}"], 10);
  EXPECT_EQ(s["gpumon_rule_evaluation_failures_total{rule_group=\"rules.yml;gpu\"}"], 1);
  EXPECT_EQ(s["gpumon_rule_group_last_duration_seconds{rule_group=\"rules.yml;gpu\"}"], 0.25);
  EXPECT_EQ(s["gpumon_rule_alerts{state=\"firing\"}"], 2);

  EXPECT_EQ(s["gpumon_notifications_sent_total{alertmanager=\"http://am:9093/api/v2/alerts\"}"], 5);
  EXPECT_EQ(s["gpumon_notifications_dropped_total"], 1);
  EXPECT_EQ(s["gpumon_notifications_queue_length"], 0);

  const std::string q = "{remote_name=\"vm\",url=\"http://vm:8428/api/v1/write\"}";
  EXPECT_EQ(s["gpumon_remote_storage_samples_total" + q], 900);
  EXPECT_EQ(s["gpumon_remote_storage_samples_failed_total" + q], 3);
  EXPECT_EQ(s["gpumon_remote_storage_samples_retried_total" + q], 7);
  EXPECT_EQ(s["gpumon_remote_storage_samples_pending" + q], 12);
  EXPECT_EQ(s["gpumon_remote_storage_highest_timestamp_in_seconds"], 1700000000);
  EXPECT_EQ(s["gpumon_remote_write_receiver_samples_received_total"], 600);

  EXPECT_EQ(s["gpumon_engine_queries_total{type=\"instant\"}"], 1);
  EXPECT_EQ(s["gpumon_engine_queries_total{type=\"range\"}"], 1);
  EXPECT_EQ(s["gpumon_engine_query_failures_total{type=\"range\",error_type=\"timeout\"}"], 1);
  EXPECT_FALSE(s.count("gpumon_engine_query_failures_total{type=\"instant\",error_type=\"\"}"));
  EXPECT_EQ(s["gpumon_engine_query_samples_total{type=\"instant\"}"], 1500);
  EXPECT_EQ(s["gpumon_engine_query_duration_seconds_count{type=\"range\"}"], 1);
  EXPECT_EQ(s["gpumon_http_requests_total{handler=\"/api/v1/query\",code=\"200\"}"], 1);
  EXPECT_EQ(s["gpumon_http_request_duration_seconds_count{handler=\"/api/v1/query\"}"], 1);
}

TEST(ServerMetricsTest, UnsetSourcesRegisterNothing) {
  Registry r;
  auto m = RegisterServerMetrics(r, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(r.Render(), "");  // nothing recorded, no sources
  // The family names stay free for whoever owns the value.
  EXPECT_TRUE(r.AddGauge("gpumon_tsdb_head_series", "Series.").ok());
  // A second registration clashes on the direct instruments.
  EXPECT_FALSE(RegisterServerMetrics(r, {}).ok());
}

TEST(ProcessMetricsTest, ReportsThisProcess) {
  Registry r;
  ASSERT_TRUE(RegisterProcessMetrics(r).ok());
  auto s = Samples(r.Render());
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  ASSERT_TRUE(s.count("process_start_time_seconds"));
  EXPECT_GT(s["process_start_time_seconds"], 1e9);
  EXPECT_LE(s["process_start_time_seconds"], now + 1);
  EXPECT_GE(s["process_open_fds"], 3);  // stdin, stdout, stderr at least
  if (s.count("process_max_fds")) {
    EXPECT_GE(s["process_max_fds"], s["process_open_fds"]);
  }
  EXPECT_GT(s["process_resident_memory_bytes"], 0);
  EXPECT_GE(s["process_virtual_memory_bytes"], s["process_resident_memory_bytes"]);
  EXPECT_GE(s["process_cpu_seconds_total"], 0);

  // Open more descriptors: the next render sees them.
  std::vector<FILE*> files;
  for (int i = 0; i < 5; ++i) files.push_back(std::fopen("/dev/null", "r"));
  auto s2 = Samples(r.Render());
  EXPECT_GE(s2["process_open_fds"], s["process_open_fds"] + 5);
  for (FILE* f : files) std::fclose(f);
}

// docs/formats/selfmon-metrics.md lists every family the server renders.
TEST(ServerMetricsTest, EveryRenderedFamilyIsDocumented) {
  std::ifstream in(std::string(GPUMON_SOURCE_DIR) + "/docs/formats/selfmon-metrics.md");
  ASSERT_TRUE(in) << "docs/formats/selfmon-metrics.md missing";
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Registry r;
  ASSERT_TRUE(RegisterProcessMetrics(r).ok());
  int calls = 0;
  auto m = RegisterServerMetrics(r, FullSources(&calls));
  ASSERT_TRUE(m.ok());
  (*m)->RecordQuery("range", 1, "timeout", 5);
  (*m)->RecordHttpRequest("/api/v1/query", 200, 0.1);
  auto families = exposition::ParseToFamilies(r.Render(), exposition::Format::kText004);
  ASSERT_TRUE(families.ok());
  size_t checked = 0;
  for (const auto& f : *families) {
    std::string name = f.name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (f.type == exposition::MetricType::kHistogram && name.ends_with(suffix)) {
        name.resize(name.size() - std::string_view(suffix).size());
      }
    }
    EXPECT_NE(doc.find("| `" + name + "` |"), std::string::npos) << name << " is not documented";
    ++checked;
  }
  EXPECT_GT(checked, 40u);
}

std::string Promtool() {
  FILE* p = popen("command -v promtool 2>/dev/null", "r");
  if (!p) return "";
  char buf[512] = {0};
  std::string out = fgets(buf, sizeof buf, p) ? buf : "";
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// Runs `promtool check metrics` on `text`; returns its exit code and output.
std::pair<int, std::string> PromtoolCheck(const std::string& promtool, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("gpumon-selfmon-" + std::to_string(getpid()) + ".prom");
  std::ofstream(path) << text;
  std::string cmd = promtool + " check metrics < '" + path.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  int rc = p ? pclose(p) : -1;
  std::filesystem::remove(path);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

TEST(ServerMetricsTest, PromtoolAcceptsTheExposition) {
  const std::string promtool = Promtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool not installed";
  Registry r;
  ASSERT_TRUE(RegisterProcessMetrics(r).ok());
  int calls = 0;
  auto m = RegisterServerMetrics(r, FullSources(&calls));
  ASSERT_TRUE(m.ok()) << m.status().message();
  (*m)->RecordQuery("instant", 0.02, "bad_data", 10);
  (*m)->RecordHttpRequest("/api/v1/query_range", 422, 0.5);
  const std::string text = r.Render();
  auto [rc, out] = PromtoolCheck(promtool, text);
  EXPECT_EQ(rc, 0) << out << "\n" << text;

  // The check can fail: promtool rejects a counter without "_total".
  auto [bad_rc, bad_out] =
      PromtoolCheck(promtool, "# HELP requests Requests.\n# TYPE requests counter\nrequests 1\n");
  EXPECT_NE(bad_rc, 0) << bad_out;
}

}  // namespace
}  // namespace gpumon::selfmon
