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
  EXPECT_EQ(msg("remote_read:\n  - url: http://x\n"),
            "p.yml:2:3: field \"remote_read\": not supported yet");
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

TEST(ConfigTest, AlertingSection) {
  auto c = ParseConfig(R"(alerting:
  alert_relabel_configs:
    - action: labeldrop
      regex: replica
  alertmanagers:
    - static_configs:
        - targets: ['am1:9093', 'am2:9093']
    - scheme: https
      path_prefix: /am/
      timeout: 3s
      api_version: v2
      bearer_token_file: secret/token
      tls_config:
        ca_file: ca.pem
        insecure_skip_verify: true
      follow_redirects: false
      file_sd_configs:
        - files: [am/*.json]
      relabel_configs:
        - target_label: __alerts_path__
          replacement: /x
      alert_relabel_configs:
        - action: drop
          source_labels: [severity]
          regex: debug
)",
                       "/etc/gpumon/p.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const AlertingConfig& a = c->alerting;
  ASSERT_EQ(a.alert_relabel_configs.size(), 1u);
  EXPECT_EQ(a.alert_relabel_configs[0].action, RelabelAction::kLabelDrop);
  ASSERT_EQ(a.alertmanagers.size(), 2u);
  const AlertmanagerConfig& first = a.alertmanagers[0];
  EXPECT_EQ(first.scheme, "http");
  EXPECT_EQ(first.path_prefix, "/");
  EXPECT_EQ(first.timeout_ms, 10000);
  EXPECT_EQ(first.api_version, "v2");
  ASSERT_EQ(first.static_configs.size(), 1u);
  EXPECT_EQ(first.static_configs[0].targets, (std::vector<std::string>{"am1:9093", "am2:9093"}));
  EXPECT_FALSE(first.http.has_authorization());
  const AlertmanagerConfig& second = a.alertmanagers[1];
  EXPECT_EQ(second.scheme, "https");
  EXPECT_EQ(second.path_prefix, "/am/");
  EXPECT_EQ(second.timeout_ms, 3000);
  EXPECT_EQ(second.http.authorization_type, "Bearer");
  EXPECT_EQ(second.http.authorization_credentials_file, "/etc/gpumon/secret/token");
  EXPECT_EQ(second.http.tls_ca_file, "/etc/gpumon/ca.pem");
  EXPECT_TRUE(second.http.tls_insecure_skip_verify);
  EXPECT_FALSE(second.http.follow_redirects);
  ASSERT_EQ(second.file_sd_configs.size(), 1u);
  EXPECT_EQ(second.file_sd_configs[0].files[0], "/etc/gpumon/am/*.json");
  EXPECT_EQ(second.relabel_configs.size(), 1u);
  EXPECT_EQ(second.alert_relabel_configs.size(), 1u);
}

TEST(ConfigTest, RemoteWriteSection) {
  auto c = ParseConfig(R"(remote_write:
  - url: http://vm:8428/api/v1/write
  - url: https://remote.example/push
    name: backup
    remote_timeout: 5s
    headers:
      X-Scope-OrgID: team-a
    basic_auth:
      username: u
      password_file: pw
    write_relabel_configs:
      - action: keep
        source_labels: [__name__]
        regex: DCGM_.*
    queue_config:
      capacity: 100
      max_shards: 4
      min_shards: 2
      max_samples_per_send: 50
      batch_send_deadline: 2s
      min_backoff: 100ms
      max_backoff: 10s
      retry_on_http_429: true
      sample_age_limit: 5m
    metadata_config:
      send: false
      send_interval: 1m
)",
                       "conf/p.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->remote_write.size(), 2u);
  const RemoteWriteConfig& d = c->remote_write[0];
  EXPECT_EQ(d.url, "http://vm:8428/api/v1/write");
  EXPECT_EQ(d.name, "");
  EXPECT_EQ(d.remote_timeout_ms, 30000);
  EXPECT_EQ(d.queue.capacity, 10000);
  EXPECT_EQ(d.queue.max_shards, 50);
  EXPECT_EQ(d.queue.min_shards, 1);
  EXPECT_EQ(d.queue.max_samples_per_send, 2000);
  EXPECT_EQ(d.queue.batch_send_deadline_ms, 5000);
  EXPECT_EQ(d.queue.min_backoff_ms, 30);
  EXPECT_EQ(d.queue.max_backoff_ms, 5000);
  EXPECT_FALSE(d.queue.retry_on_http_429);
  EXPECT_EQ(d.queue.sample_age_limit_ms, 0);
  const RemoteWriteConfig& b = c->remote_write[1];
  EXPECT_EQ(b.name, "backup");
  EXPECT_EQ(b.remote_timeout_ms, 5000);
  EXPECT_EQ(b.headers.at("X-Scope-OrgID"), "team-a");
  EXPECT_TRUE(b.http.has_basic_auth());
  EXPECT_EQ(b.http.basic_auth_username, "u");
  EXPECT_EQ(b.http.basic_auth_password_file, "conf/pw");
  ASSERT_EQ(b.write_relabel_configs.size(), 1u);
  EXPECT_EQ(b.queue.capacity, 100);
  EXPECT_EQ(b.queue.max_shards, 4);
  EXPECT_EQ(b.queue.min_shards, 2);
  EXPECT_EQ(b.queue.max_samples_per_send, 50);
  EXPECT_EQ(b.queue.batch_send_deadline_ms, 2000);
  EXPECT_EQ(b.queue.min_backoff_ms, 100);
  EXPECT_EQ(b.queue.max_backoff_ms, 10000);
  EXPECT_TRUE(b.queue.retry_on_http_429);
  EXPECT_EQ(b.queue.sample_age_limit_ms, 300000);
}

TEST(ConfigTest, ScrapeHttpClientSettings) {
  auto c = ParseConfig(R"(scrape_configs:
  - job_name: a
    scheme: https
    authorization:
      type: ' Token '
      credentials: abc
    tls_config:
      cert_file: /tls/c.pem
      key_file: /tls/k.pem
      server_name: node-1
  - job_name: b
    bearer_token: xyz
)",
                       "p.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const HttpClientConfig& a = c->scrape_configs[0].http;
  EXPECT_EQ(a.authorization_type, "Token");
  EXPECT_EQ(a.authorization_credentials, "abc");
  EXPECT_EQ(a.tls_cert_file, "/tls/c.pem");
  EXPECT_EQ(a.tls_key_file, "/tls/k.pem");
  EXPECT_EQ(a.tls_server_name, "node-1");
  EXPECT_TRUE(a.follow_redirects);
  const HttpClientConfig& b = c->scrape_configs[1].http;
  EXPECT_EQ(b.authorization_type, "Bearer");
  EXPECT_EQ(b.authorization_credentials, "xyz");
  EXPECT_TRUE(b.has_authorization());
  EXPECT_FALSE(b.has_basic_auth());
}

TEST(ConfigTest, AlertingAndRemoteWriteErrorsNameTheField) {
  auto msg = [](const std::string& text) {
    auto c = ParseConfig(text, "p.yml");
    return c.ok() ? std::string("OK") : c.status().message();
  };
  EXPECT_EQ(msg("alerting:\n  alertmanagers:\n    - api_version: v1\n"),
            "p.yml:3:20: field \"alerting.alertmanagers[0].api_version\": expected Alertmanager "
            "api version to be one of [v2] but got v1");
  EXPECT_EQ(msg("alerting:\n  alertmanagers:\n    - oauth2: {client_id: x}\n"),
            "p.yml:3:15: field \"alerting.alertmanagers[0].oauth2\": not supported yet");
  EXPECT_EQ(msg("alerting:\n  alertmanagers:\n    - static_configs:\n"
                "        - targets: ['http://am:9093']\n"),
            "p.yml:4:20: field \"alerting.alertmanagers[0].static_configs[0].targets\": "
            "\"http://am:9093\" is not a valid hostname");
  EXPECT_EQ(msg("remote_write:\n  - name: a\n"),
            "p.yml:2:5: field \"remote_write[0].url\": url for remote_write is empty");
  EXPECT_EQ(msg("remote_write:\n  - url: http://a/w\n    headers:\n      User-Agent: me\n"),
            "p.yml:4:7: field \"remote_write[0].headers.User-Agent\": User-Agent is a reserved "
            "header. It must not be changed");
  EXPECT_EQ(msg("remote_write:\n  - url: http://a/w\n    queue_config:\n      max_shard: 3\n"),
            "p.yml:4:7: field \"remote_write[0].queue_config.max_shard\": unknown field");
  EXPECT_EQ(msg("remote_write:\n  - url: http://a/w\n    queue_config:\n      max_shards: 3\n"
                "      min_shards: 9\n"),
            "p.yml:5:19: field \"remote_write[0].queue_config.min_shards\": remote write queue "
            "min_shards must not be greater than max_shards");
  EXPECT_EQ(msg("remote_write:\n  - url: http://a/w\n    name: x\n  - url: http://b/w\n"
                "    name: x\n"),
            "p.yml:4:5: field \"remote_write[1].name\": found multiple remote write configs with "
            "job name \"x\"");
  EXPECT_EQ(msg("remote_write:\n  - url: http://a/w\n    sigv4: {region: eu}\n"),
            "p.yml:3:12: field \"remote_write[0].sigv4\": not supported yet");
  EXPECT_EQ(msg("remote_write:\n  - url: http://a/w\n    send_exemplars: true\n"),
            "p.yml:3:21: field \"remote_write[0].send_exemplars\": not supported yet");
  EXPECT_EQ(msg("remote_write:\n  - url: http://a/w\n    send_exemplars: false\n"), "OK");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    basic_auth: {username: u}\n"
                "    authorization: {credentials: c}\n"),
            "p.yml:4:20: field \"scrape_configs[0].authorization\": at most one of basic_auth, "
            "oauth2 & authorization must be configured");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    tls_config: {key_file: k}\n"),
            "p.yml:3:17: field \"scrape_configs[0].tls_config\": exactly one of cert or cert_file "
            "must be configured when a client key is configured");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    proxy_url: http://p:3128\n"),
            "p.yml:3:16: field \"scrape_configs[0].proxy_url\": not supported yet");
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
      // alerting, remote_write and HTTP client settings.
      "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['am:9093']\n",
      "alerting:\n  alert_relabel_configs:\n    - action: labeldrop\n      regex: replica\n"
      "  alertmanagers:\n    - scheme: https\n      path_prefix: /am\n      timeout: 5s\n"
      "      api_version: v2\n      basic_auth: {username: u, password: p}\n"
      "      tls_config: {ca_file: ca.pem, insecure_skip_verify: true}\n"
      "      follow_redirects: false\n      file_sd_configs:\n        - files: [am.json]\n",
      "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['http://am:9093']\n"
      "      relabel_configs:\n        - source_labels: [__address__]\n"
      "          regex: 'http://(.*)'\n          target_label: __address__\n",
      "remote_write:\n  - url: http://vm:8428/api/v1/write\n",
      "remote_write:\n  - url: https://vm/api/v1/write\n    name: a\n    remote_timeout: 10s\n"
      "    headers: {X-Scope-OrgID: t1}\n    write_relabel_configs:\n      - action: drop\n"
      "        source_labels: [__name__]\n        regex: go_.*\n    queue_config:\n"
      "      capacity: 500\n      max_shards: 10\n      min_shards: 2\n"
      "      max_samples_per_send: 100\n      batch_send_deadline: 1s\n      min_backoff: 10ms\n"
      "      max_backoff: 1s\n      retry_on_http_429: true\n    metadata_config:\n"
      "      send: false\n    authorization:\n      credentials_file: token\n"
      "  - url: http://b/w\n    name: b\n    basic_auth: {username: u, password_file: pw}\n",
      "scrape_configs:\n  - job_name: a\n    basic_auth: {username: u, password: p}\n"
      "    tls_config: {ca_file: ca.pem, cert_file: cert.pem, key_file: key.pem, server_name: x}\n",
      "scrape_configs:\n  - job_name: a\n    bearer_token_file: token\n",
      "scrape_configs:\n  - job_name: a\n    authorization: {type: Token, credentials: abc}\n",
      "alerting:\n  alertmanagers:\n    - api_version: v3\n",
      "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['http://am:9093']\n",
      "alerting:\n  alertmanagers:\n    - timeout: soon\n",
      "alerting:\n  alertmanagers:\n    - basic_auth: {username: u}\n"
      "      authorization: {credentials: x}\n",
      "alerting:\n  alertmanagrs: []\n",
      "alerting:\n  alertmanagers:\n    - scheme: https\n      bearer_token: x\n"
      "      bearer_token_file: token\n",
      "remote_write:\n  - name: a\n",
      "remote_write:\n  - url: http://a/w\n    name: x\n  - url: http://b/w\n    name: x\n",
      "remote_write:\n  - url: http://a/w\n    headers: {Content-Type: text/plain}\n",
      "remote_write:\n  - url: http://a/w\n    headers: {Authorization: Bearer x}\n",
      "remote_write:\n  - url: http://a/w\n    queue_config: {max_sample_per_send: 5}\n",
      "remote_write:\n  - url: http://a/w\n    bearer_token: x\n    basic_auth: {username: u}\n",
      "remote_write:\n  - url: http://a/w\n    sample_age_limit: 1m\n",
      "remote_write:\n  -\n",
      "scrape_configs:\n  - job_name: a\n    basic_auth: {username: u}\n"
      "    authorization: {credentials: abc}\n",
      "scrape_configs:\n  - job_name: a\n    bearer_token: a\n    bearer_token_file: token\n",
      "scrape_configs:\n  - job_name: a\n    authorization: {credentials: abc}\n    bearer_token: "
      "a\n",
      "scrape_configs:\n  - job_name: a\n    authorization: {type: Basic, credentials: abc}\n",
      "scrape_configs:\n  - job_name: a\n    basic_auth: {username: u, password: p, password_file: "
      "pw}\n",
      "scrape_configs:\n  - job_name: a\n    tls_config: {cert_file: cert.pem}\n",
      "scrape_configs:\n  - job_name: a\n    tls_config: {ca_fil: ca.pem}\n",
      "scrape_configs:\n  - job_name: a\n    authorization: {credentials: a, credentials_file: "
      "token}\n",
      "scrape_configs:\n  - job_name: a\n    follow_redirects: perhaps\n",
      "scrape_configs:\n  - job_name: a\n    basic_auth: {username: u}\n    bearer_token: t\n",
      "scrape_configs: [\n",
  };
  // Deliberately stricter than promtool 2.42: a __name__ external label,
  // the Alertmanager v1 API and remote write queue bounds (Prometheus 3
  // rejects these too) and schemes and URLs that cannot be used.
  const std::vector<std::string> stricter = {
      "global:\n  external_labels:\n    __name__: x\n",
      "scrape_configs:\n  - job_name: a\n    scheme: ftp\n",
      "alerting:\n  alertmanagers:\n    - api_version: v1\n",
      "alerting:\n  alertmanagers:\n    - scheme: ftp\n",
      "remote_write:\n  - url: http://a/w\n    queue_config: {max_shards: 1, min_shards: 2}\n",
      "remote_write:\n  - url: http://a/w\n    queue_config: {capacity: 0}\n",
      "remote_write:\n  - url: http://a/w\n    queue_config: {min_backoff: 2s, max_backoff: 1s}\n",
      "remote_write:\n  - url: http://a/w\n    queue_config: {max_shards: 0}\n",
      "remote_write:\n  - url: http://a/w\n    queue_config: {max_samples_per_send: -1}\n",
      "remote_write:\n  - url: vm:8428/api/v1/write\n",
  };
  auto dir = std::filesystem::temp_directory_path() / ("scrape_diff_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // Files that promtool checks for existence.
  for (const char* f : {"token", "pw", "ca.pem", "cert.pem", "key.pem"}) std::ofstream(dir / f);
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
