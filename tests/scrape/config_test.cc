// Configuration parsing: defaults, strictness, error messages, and a
// differential check against Prometheus's own `promtool check config`.
#include "scrape/config.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace gpumon::scrape {
namespace {

TEST(ConfigTest, DefaultsFollowPrometheus) {
  auto c = ParseConfig("scrape_configs:\n  - job_name: a\n", "p.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->global.scrape_interval_ms, 60000);
  EXPECT_EQ(c->global.scrape_timeout_ms, 10000);
  EXPECT_EQ(c->global.evaluation_interval_ms, 60000);
  ASSERT_EQ(c->scrape_configs.size(), 1u);
  const ScrapeConfig& sc = c->scrape_configs[0];
  EXPECT_EQ(sc.scrape_interval_ms, 60000);
  EXPECT_EQ(sc.scrape_timeout_ms, 10000);
  EXPECT_EQ(sc.metrics_path, "/metrics");
  EXPECT_EQ(sc.scheme, "http");
  EXPECT_TRUE(sc.honor_timestamps);
  EXPECT_FALSE(sc.honor_labels);
}

TEST(ConfigTest, JobInheritsGlobalAndTimeoutIsCappedAtInterval) {
  auto c = ParseConfig(R"(global:
  scrape_interval: 5s
  external_labels: {cluster: a}
scrape_configs:
  - job_name: a
  - job_name: b
    scrape_interval: 30s
    scrape_timeout: 20s
    honor_labels: true
    params: {module: [x, y]}
    sample_limit: 100
    body_size_limit: 1MB
    static_configs:
      - targets: ['h:1', 'h:2']
        labels: {dc: x}
    relabel_configs:
      - source_labels: [__address__]
        target_label: host
)",
                       "p.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->global.scrape_timeout_ms, 5000);
  EXPECT_EQ(c->global.external_labels.Get("cluster"), "a");
  EXPECT_EQ(c->scrape_configs[0].scrape_interval_ms, 5000);
  EXPECT_EQ(c->scrape_configs[0].scrape_timeout_ms, 5000);
  const ScrapeConfig& b = c->scrape_configs[1];
  EXPECT_EQ(b.scrape_interval_ms, 30000);
  EXPECT_EQ(b.scrape_timeout_ms, 20000);
  EXPECT_TRUE(b.honor_labels);
  EXPECT_EQ(b.params.at("module"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(b.sample_limit, 100u);
  EXPECT_EQ(b.body_size_limit, 1024u * 1024u);
  ASSERT_EQ(b.static_configs.size(), 1u);
  EXPECT_EQ(b.static_configs[0].targets, (std::vector<std::string>{"h:1", "h:2"}));
  EXPECT_EQ(b.static_configs[0].labels.Get("dc"), "x");
  ASSERT_EQ(b.relabel_configs.size(), 1u);
  EXPECT_EQ(b.relabel_configs[0].target_label, "host");
  EXPECT_TRUE(b.relabel_configs[0].compiled);
}

TEST(ConfigTest, UnknownFieldNamesFileLineAndField) {
  auto c = ParseConfig("scrape_configs:\n  - job_name: a\n    scrape_intervl: 5s\n", "p.yml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "p.yml:3:5: field \"scrape_configs[0].scrape_intervl\": unknown field");
  c = ParseConfig("global:\n  foo: 1\n", "g.yml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "g.yml:2:3: field \"global.foo\": unknown field");
  c = ParseConfig(
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: keep\n        "
      "regexp: x\n",
      "r.yml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "r.yml:5:9: field \"scrape_configs[0].relabel_configs[0].regexp\": unknown field");
}

TEST(ConfigTest, ValidationErrors) {
  auto msg = [](const std::string& text) {
    auto c = ParseConfig(text, "p.yml");
    return c.ok() ? std::string("OK") : c.status().message();
  };
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n  - job_name: a\n"),
            "p.yml:3:5: field \"scrape_configs[1].job_name\": found multiple scrape configs with "
            "job name \"a\"");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    scrape_interval: 5s\n    scrape_timeout: "
                "6s\n"),
            "p.yml:2:5: field \"scrape_configs[0].scrape_timeout\": scrape timeout greater than "
            "scrape interval for scrape config with job name \"a\"");
  EXPECT_EQ(msg("global:\n  scrape_interval: 5s\n  scrape_timeout: 6s\n"),
            "p.yml:2:3: field \"global.scrape_timeout\": global scrape timeout greater than "
            "scrape interval");
  EXPECT_EQ(msg("scrape_configs:\n  - scrape_interval: 5s\n"),
            "p.yml:2:5: field \"scrape_configs[0].job_name\": job_name is empty");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: hashmod\n"
                "        target_label: x\n"),
            "p.yml:4:9: field \"scrape_configs[0].relabel_configs[0]\": relabel configuration for "
            "hashmod requires non-zero modulus");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: nope\n"),
            "p.yml:4:17: field \"scrape_configs[0].relabel_configs[0].action\": unknown relabel "
            "action \"nope\"");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    scrape_interval: 5x\n").substr(0, 50),
            "p.yml:3:22: field \"scrape_configs[0].scrape_interv");
  EXPECT_EQ(msg("remote_write:\n  - url: http://x\n"),
            "p.yml:2:3: field \"remote_write\": not supported yet");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: "
                "['http://h:1']\n"),
            "p.yml:4:18: field \"scrape_configs[0].static_configs[0].targets\": "
            "\"http://h:1\" is not a valid hostname");
}

TEST(ConfigTest, TargetFilesInJsonAndYaml) {
  auto dir = std::filesystem::temp_directory_path() / ("scrape_cfg_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.json") << R"([{"targets": ["h:1"], "labels": {"env": "p"}}])";
  std::ofstream(dir / "b.yml") << "- targets: [h:2, h:3]\n";
  auto a = ReadTargetFile((dir / "a.json").string());
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ((*a)[0].labels.Get("env"), "p");
  auto b = ReadTargetFile((dir / "b.yml").string());
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ((*b)[0].targets.size(), 2u);
  std::ofstream(dir / "c.yml") << "- targets: [h:2]\n  lables: {}\n";
  auto c = ReadTargetFile((dir / "c.yml").string());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("c.yml:2:3: field \"[0].lables\": unknown field"),
            std::string::npos)
      << c.status().message();
  std::filesystem::remove_all(dir);
}

// --- Differential check against promtool --------------------------------

std::string Promtool() {
  FILE* p = popen("command -v promtool 2>/dev/null", "r");
  if (!p) return "";
  char buf[512] = {0};
  std::string out = fgets(buf, sizeof buf, p) ? buf : "";
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

bool PromtoolAccepts(const std::string& promtool, const std::string& path) {
  std::string cmd = promtool + " check config '" + path + "' >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
}

TEST(ConfigTest, AgreesWithPromtool) {
  const std::string promtool = Promtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool not installed";
  const std::vector<std::string> cases = {
      // Accepted.
      "",
      "global:\n  scrape_interval: 15s\n  evaluation_interval: 30s\n",
      "global:\n  scrape_interval: 5s\nscrape_configs:\n  - job_name: a\n",
      "scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: ['localhost:9090']\n"
      "        labels: {env: prod}\n",
      "scrape_configs:\n  - job_name: a\n    scrape_interval: 10s\n    scrape_timeout: 10s\n",
      "scrape_configs:\n  - job_name: a\n    honor_labels: true\n    honor_timestamps: false\n"
      "    metrics_path: /m\n    scheme: https\n    params: {a: [b]}\n    sample_limit: 5\n"
      "    label_limit: 3\n    target_limit: 2\n    body_size_limit: 10MB\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - source_labels: [a, b]\n"
      "        separator: ','\n        regex: '(.*),(.*)'\n        target_label: '${1}_x'\n"
      "        replacement: $2\n",
      "scrape_configs:\n  - job_name: a\n    metric_relabel_configs:\n      - action: labeldrop\n"
      "        regex: tmp_.*\n      - action: labelmap\n        regex: 'x_(.*)'\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: hashmod\n"
      "        source_labels: [__address__]\n        modulus: 4\n        target_label: s\n"
      "      - action: keep\n        source_labels: [s]\n        regex: '1'\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: lowercase\n"
      "        source_labels: [a]\n        target_label: b\n      - action: keepequal\n"
      "        source_labels: [a]\n        target_label: b\n",
      "scrape_configs:\n  - job_name: a\n    file_sd_configs:\n      - files: ['t/*.json', "
      "'x.yml']\n        refresh_interval: 1m\n",
      "global:\n  external_labels:\n    cluster: one\n    replica: '1'\n",
      "scrape_configs:\n  - job_name: a\n    scrape_interval: 0s\n",
      // Rejected.
      "foo: 1\n",
      "global:\n  scrape_interval: 5s\n  scrape_timeout: 6s\n",
      "global:\n  scrape_intervall: 5s\n",
      "global:\n  external_labels:\n    0abc: x\n",
      "scrape_configs:\n  - job_name: a\n  - job_name: a\n",
      "scrape_configs:\n  - metrics_path: /x\n",
      "scrape_configs:\n  - job_name: a\n    scrape_interval: 5s\n    scrape_timeout: 10s\n",
      "scrape_configs:\n  - job_name: a\n    scrape_interval: 5q\n",
      "scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: ['h:1']\n"
      "        labels: {'1x': y}\n",
      "scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: ['http://h:1/m']\n",
      "scrape_configs:\n  - job_name: a\n    static_configs:\n      - target: ['h:1']\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: replace\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: hashmod\n"
      "        target_label: x\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: bogus\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - target_label: x\n"
      "        regex: '(['\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: labeldrop\n"
      "        regex: x\n        source_labels: [a]\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: uppercase\n"
      "        source_labels: [a]\n        target_label: b\n        replacement: z\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: dropequal\n"
      "        source_labels: [a]\n        target_label: b\n        regex: z\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: labelmap\n"
      "        regex: 'x_(.*)'\n        replacement: '1-$1'\n",
      "scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - source_labels: ['a-b']\n"
      "        target_label: x\n",
      "scrape_configs:\n  - job_name: a\n    file_sd_configs:\n      - files: ['t/*.txt']\n",
      "scrape_configs:\n  - job_name: a\n    file_sd_configs:\n      - refresh_interval: 1m\n",
      "scrape_configs:\n  - job_name: a\n    honor_labels: maybe\n",
      "scrape_configs:\n  - job_name: a\n    sample_limit: -1\n",
      "scrape_configs:\n  - job_name: a\n    body_size_limit: 10XB\n",
      "scrape_configs: [\n",
  };
  // Deliberately stricter than promtool 2.42: a __name__ external label
  // (Prometheus 3 rejects it too) and a scheme that cannot be scraped.
  const std::vector<std::string> stricter = {
      "global:\n  external_labels:\n    __name__: x\n",
      "scrape_configs:\n  - job_name: a\n    scheme: ftp\n",
  };
  auto dir = std::filesystem::temp_directory_path() / ("scrape_diff_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  int i = 0;
  for (const auto& text : cases) {
    auto path = (dir / ("c" + std::to_string(i++) + ".yml")).string();
    std::ofstream(path) << text;
    const bool theirs = PromtoolAccepts(promtool, path);
    auto ours = LoadConfig(path);
    EXPECT_EQ(ours.ok(), theirs) << "config:\n"
                                 << text << "\npromtool " << (theirs ? "accepts" : "rejects")
                                 << "; ours: " << (ours.ok() ? "OK" : ours.status().message());
  }
  for (const auto& text : stricter) {
    auto path = (dir / ("s" + std::to_string(i++) + ".yml")).string();
    std::ofstream(path) << text;
    EXPECT_FALSE(LoadConfig(path).ok()) << text;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumon::scrape
