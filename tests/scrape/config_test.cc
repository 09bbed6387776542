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

TEST(ConfigTest, ServiceDiscoverySections) {
  auto c = ParseConfig(R"(scrape_configs:
  - job_name: a
    dns_sd_configs:
      - names: [_x._tcp.example.org]
      - names: [h.example.org]
        type: aaaa
        port: 9100
        refresh_interval: 5s
    http_sd_configs:
      - url: https://sd.example.org/targets
        authorization: {credentials: t}
    consul_sd_configs:
      - services: [web]
        username: u
        password: p
        node_meta: {rack: r1}
    kubernetes_sd_configs:
      - role: node
        api_server: https://k8s:6443
        bearer_token: tok
        selectors: [{role: node, label: gpu=true}]
)",
                       "p.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const ScrapeConfig& sc = c->scrape_configs[0];
  ASSERT_EQ(sc.dns_sd_configs.size(), 2u);
  EXPECT_EQ(sc.dns_sd_configs[0].type, "SRV");
  EXPECT_EQ(sc.dns_sd_configs[0].refresh_interval_ms, 30000);
  EXPECT_EQ(sc.dns_sd_configs[1].type, "AAAA");
  EXPECT_EQ(sc.dns_sd_configs[1].port, 9100);
  EXPECT_EQ(sc.dns_sd_configs[1].refresh_interval_ms, 5000);
  ASSERT_EQ(sc.http_sd_configs.size(), 1u);
  EXPECT_EQ(sc.http_sd_configs[0].refresh_interval_ms, 60000);
  EXPECT_EQ(sc.http_sd_configs[0].http.authorization_credentials, "t");
  ASSERT_EQ(sc.consul_sd_configs.size(), 1u);
  const ConsulSdConfig& consul = sc.consul_sd_configs[0];
  EXPECT_EQ(consul.server, "localhost:8500");
  EXPECT_EQ(consul.tag_separator, ",");
  EXPECT_TRUE(consul.allow_stale);
  EXPECT_EQ(consul.refresh_interval_ms, 30000);
  EXPECT_EQ(consul.http.basic_auth_username, "u");
  EXPECT_EQ(consul.http.basic_auth_password, "p");
  EXPECT_EQ(consul.node_meta.at("rack"), "r1");
  ASSERT_EQ(sc.kubernetes_sd_configs.size(), 1u);
  EXPECT_EQ(sc.kubernetes_sd_configs[0].role, "node");
  EXPECT_EQ(sc.kubernetes_sd_configs[0].http.authorization_credentials, "tok");
  ASSERT_EQ(sc.kubernetes_sd_configs[0].selectors.size(), 1u);
  EXPECT_EQ(sc.kubernetes_sd_configs[0].selectors[0].label, "gpu=true");

  auto msg = [](const std::string& text) {
    auto r = ParseConfig(text, "p.yml");
    return r.ok() ? std::string("OK") : r.status().message();
  };
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [x]\n"
                "        typ: A\n"),
            "p.yml:5:9: field \"scrape_configs[0].dns_sd_configs[0].typ\": unknown field");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [x]\n"
                "        type: A\n"),
            "p.yml:4:9: field \"scrape_configs[0].dns_sd_configs[0].port\": a port is required in "
            "DNS-SD configs for all record types except SRV");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    http_sd_configs:\n      - url: ftp://x/\n"),
            "p.yml:4:14: field \"scrape_configs[0].http_sd_configs[0].url\": URL scheme must be "
            "'http' or 'https'");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    consul_sd_configs:\n      - tken: x\n"),
            "p.yml:4:9: field \"scrape_configs[0].consul_sd_configs[0].tken\": unknown field");
  EXPECT_EQ(msg("scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: "
                "service\n"),
            "p.yml:4:15: field \"scrape_configs[0].kubernetes_sd_configs[0].role\": role "
            "\"service\" not supported yet (pod, node)");
  // Alertmanager sets take static and file discovery only.
  EXPECT_EQ(msg("alerting:\n  alertmanagers:\n    - dns_sd_configs: [{names: [x]}]\n"),
            "p.yml:3:23: field \"alerting.alertmanagers[0].dns_sd_configs\": not supported yet");

  // Consul and Kubernetes: Prometheus's checks (Debian's promtool lacks
  // both mechanisms, so these follow their UnmarshalYAML), and DNS NS.
  const std::vector<std::string> accepted = {
      // NS records: newer than promtool 2.42.
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [z.org]\n"
      "        type: NS\n        port: 53\n",
      "scrape_configs:\n  - job_name: a\n    consul_sd_configs:\n      - server: c:8500\n"
      "        services: [web]\n        tags: [prod]\n        node_meta: {rack: r1}\n"
      "        tag_separator: ';'\n        allow_stale: false\n        datacenter: dc1\n"
      "        token: t\n        refresh_interval: 10s\n",
      "scrape_configs:\n  - job_name: a\n    consul_sd_configs:\n      - scheme: https\n"
      "        tls_config: {ca_file: ca.pem}\n        username: u\n        password: p\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: pod\n"
      "        api_server: https://k8s:6443\n        namespaces: {names: [gpu]}\n"
      "        bearer_token_file: token\n        tls_config: {insecure_skip_verify: true}\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: node\n"
      "        selectors:\n          - role: node\n            label: gpu=true\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: pod\n"
      "        namespaces: {own_namespace: true}\n",
  };
  const std::vector<std::string> rejected = {
      "scrape_configs:\n  - job_name: a\n    consul_sd_configs:\n      - server: ' '\n",
      "scrape_configs:\n  - job_name: a\n    consul_sd_configs:\n      - token: t\n"
      "        authorization: {credentials: x}\n",
      "scrape_configs:\n  - job_name: a\n    consul_sd_configs:\n      - username: u\n"
      "        basic_auth: {username: v}\n",
      "scrape_configs:\n  - job_name: a\n    consul_sd_configs:\n      - service: [web]\n",
      "scrape_configs:\n  - job_name: a\n    consul_sd_configs:\n      - scheme: ftp\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - api_server: "
      "https://k:6443\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: pods\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: pod\n"
      "        bearer_token: t\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: pod\n"
      "        api_server: https://k:6443\n        namespaces: {own_namespace: true}\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: node\n"
      "        selectors:\n          - role: pod\n            label: a=b\n",
      "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n      - role: pod\n"
      "        selectors:\n          - role: pod\n            label: a=b\n"
      "          - role: pod\n            field: c=d\n",
  };
  for (const auto& text : accepted) EXPECT_EQ(msg(text), "OK") << text;
  for (const auto& text : rejected) EXPECT_NE(msg(text), "OK") << text;
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
      // Service discovery: dns and http (Debian's promtool is built without
      // Consul and Kubernetes SD; ServiceDiscoverySections covers them).
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: "
      "[_x._tcp.example.org]\n",
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [a.example.org, b]\n"
      "        type: a\n        port: 9100\n        refresh_interval: 10s\n",
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [m.org]\n"
      "        type: MX\n        port: 25\n",
      "scrape_configs:\n  - job_name: a\n    http_sd_configs:\n      - url: http://sd:8080/t\n"
      "        refresh_interval: 15s\n        basic_auth: {username: u, password: p}\n",
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [_s._tcp.z.org]\n"
      "        port: 1\n",
      "scrape_configs:\n  - job_name: a\n    http_sd_configs:\n      - url: https://sd/t\n"
      "        bearer_token_file: token\n        tls_config: {ca_file: ca.pem}\n",
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - refresh_interval: 5s\n",
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [a.org]\n"
      "        refresh_interval: 5x\n",
      "scrape_configs:\n  - job_name: a\n    http_sd_configs:\n      - urls: [http://sd/t]\n",
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [a.org]\n"
      "        type: A\n",
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - names: [a.org]\n"
      "        type: TXT\n        port: 1\n",
      "scrape_configs:\n  - job_name: a\n    dns_sd_configs:\n      - nmes: [a.org]\n",
      "scrape_configs:\n  - job_name: a\n    http_sd_configs:\n      - refresh_interval: 5s\n",
      "scrape_configs:\n  - job_name: a\n    http_sd_configs:\n      - url: ftp://sd/t\n",
      "scrape_configs:\n  - job_name: a\n    http_sd_configs:\n      - url: http:///t\n",
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
      // promtool 2.42 does not check an SD config's auth conflicts as it
      // checks a scrape config's.
      "scrape_configs:\n  - job_name: a\n    http_sd_configs:\n      - url: http://sd/t\n"
      "        bearer_token: t\n        basic_auth: {username: u}\n",
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
