// Notifier unit tests against loopback HTTP servers standing in for
// Alertmanagers: JSON body, discovery, batching, relabeling, failure and
// recovery, queue overflow, authentication, shutdown drain.
#include "notifier/notifier.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "notifier/alert_json.h"
#include "notifier/alertmanager_discovery.h"
#include "notifier/alertmanagers_json.h"
#include "test_util.h"
#include "web/test_certs.h"

namespace gpumon::notifier {
namespace {

using testing::FakeAlertmanager;
using testing::WaitFor;

Alert MakeAlert(const std::string& name, Labels extra = {}) {
  std::vector<Label> items = extra.items();
  items.push_back({"alertname", name});
  Alert a;
  a.labels = Labels::FromUnsorted(std::move(items));
  a.annotations = Labels{{"summary", name + " fired"}};
  a.starts_at_ms = 1700000000123;
  a.ends_at_ms = 1700000600000;
  a.generator_url = "http://gpumon:9090/graph?g0.expr=up";
  return a;
}

scrape::RelabelConfig Rule(scrape::RelabelAction action, std::vector<std::string> sources,
                           std::string regex, std::string target = "",
                           std::string replacement = "$1") {
  scrape::RelabelConfig rc;
  rc.action = action;
  rc.source_labels = std::move(sources);
  rc.regex = std::move(regex);
  rc.target_label = std::move(target);
  rc.replacement = std::move(replacement);
  EXPECT_TRUE(rc.Compile().ok());
  return rc;
}

scrape::AlertmanagerConfig StaticAm(const std::vector<std::string>& addresses) {
  scrape::AlertmanagerConfig am;
  scrape::TargetGroup tg;
  tg.targets = addresses;
  tg.source = "static";
  am.static_configs.push_back(tg);
  am.timeout_ms = 5000;
  return am;
}

// Fast retries so that the tests do not wait for production backoffs.
Options FastOptions() {
  Options o;
  o.retry_min_backoff_ms = 10;
  o.retry_max_backoff_ms = 50;
  o.discovery_check_ms = 50;
  return o;
}

// All alerts of the accepted posts, as alertname → label set JSON object.
std::vector<rapidjson::Document> AcceptedPosts(const FakeAlertmanager& am) {
  std::vector<rapidjson::Document> out;
  for (const auto& r : am.received()) {
    if (!r.accepted) continue;
    out.emplace_back();
    out.back().Parse(r.body.c_str());
  }
  return out;
}

std::set<std::string> AcceptedNames(const FakeAlertmanager& am) {
  std::set<std::string> names;
  for (const auto& d : AcceptedPosts(am)) {
    for (const auto& a : d.GetArray()) names.insert(a["labels"]["alertname"].GetString());
  }
  return names;
}

TEST(AlertJsonTest, EncodesPostableAlerts) {
  Alert active = MakeAlert("GpuHot", Labels{{"gpu", "0"}});
  Alert open_ended = MakeAlert("Other");
  open_ended.ends_at_ms = 0;
  open_ended.generator_url.clear();
  std::vector<Alert> alerts = {active, open_ended};
  rapidjson::Document d;
  d.Parse(EncodeAlertsV2(alerts).c_str());
  ASSERT_TRUE(d.IsArray());
  ASSERT_EQ(d.Size(), 2u);
  const auto& a = d[0];
  EXPECT_STREQ(a["labels"]["alertname"].GetString(), "GpuHot");
  EXPECT_STREQ(a["labels"]["gpu"].GetString(), "0");
  EXPECT_STREQ(a["annotations"]["summary"].GetString(), "GpuHot fired");
  // 1700000000 s is 2023-11-14 22:13:20 UTC.
  EXPECT_STREQ(a["startsAt"].GetString(), "2023-11-14T22:13:20.123Z");
  EXPECT_STREQ(a["endsAt"].GetString(), "2023-11-14T22:23:20.000Z");
  EXPECT_STREQ(a["generatorURL"].GetString(), "http://gpumon:9090/graph?g0.expr=up");
  EXPECT_FALSE(d[1].HasMember("endsAt"));
  EXPECT_FALSE(d[1].HasMember("generatorURL"));
  EXPECT_EQ(FormatRfc3339Millis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339Millis(-1), "1969-12-31T23:59:59.999Z");
}

TEST(DiscoveryTest, AlertsPathJoinsLikePathJoin) {
  EXPECT_EQ(AlertsPath(""), "/api/v2/alerts");
  EXPECT_EQ(AlertsPath("/"), "/api/v2/alerts");
  EXPECT_EQ(AlertsPath("am"), "/am/api/v2/alerts");
  EXPECT_EQ(AlertsPath("/am/"), "/am/api/v2/alerts");
  EXPECT_EQ(AlertsPath("/a//b/./c/../"), "/a/b/api/v2/alerts");
}

TEST(DiscoveryTest, RelabelingSetsSchemePathAndDrops) {
  scrape::AlertmanagerConfig am = StaticAm({"am1:9093", "am2:9093", "am1:9093"});
  am.path_prefix = "/prefix";
  am.static_configs[0].labels = Labels{{"dc", "west"}};
  am.relabel_configs.push_back(Rule(scrape::RelabelAction::kDrop, {"__address__"}, "am2:.*"));
  am.relabel_configs.push_back(
      Rule(scrape::RelabelAction::kReplace, {"dc"}, "west", "__scheme__", "https"));
  auto d = BuildAlertmanagers(am.static_configs, am);
  ASSERT_EQ(d.active.size(), 1u);  // am1 once: duplicates collapse
  EXPECT_EQ(d.active[0].url, "https://am1:9093/prefix/api/v2/alerts");
  ASSERT_EQ(d.dropped.size(), 1u);
  EXPECT_EQ(d.dropped[0].url, "http://am2:9093/prefix/api/v2/alerts");
  EXPECT_TRUE(d.errors.empty());

  scrape::AlertmanagerConfig paths = StaticAm({"am3:9093"});
  paths.relabel_configs.push_back(
      Rule(scrape::RelabelAction::kReplace, {}, "(.*)", "__alerts_path__", "/custom/alerts"));
  auto p = BuildAlertmanagers(paths.static_configs, paths);
  ASSERT_EQ(p.active.size(), 1u);
  EXPECT_EQ(p.active[0].url, "http://am3:9093/custom/alerts");
}

TEST(DiscoveryTest, ReadsFileSdTargets) {
  auto dir = std::filesystem::temp_directory_path() / ("notifier_sd_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ams.json") << R"([{"targets": ["am-a:9093", "am-b:9093"]}])";
  std::ofstream(dir / "broken.json") << "[{";
  scrape::AlertmanagerConfig am;
  scrape::FileSdConfig sd;
  sd.files = {(dir / "*.json").string()};
  am.file_sd_configs.push_back(sd);
  std::vector<std::string> errors;
  auto groups = CollectTargetGroups(am, &errors);
  auto d = BuildAlertmanagers(groups, am);
  EXPECT_EQ(errors.size(), 1u);  // broken.json, the other file still counts
  ASSERT_EQ(d.active.size(), 2u);
  EXPECT_EQ(d.active[0].url, "http://am-a:9093/api/v2/alerts");
  EXPECT_EQ(d.active[1].url, "http://am-b:9093/api/v2/alerts");
  std::filesystem::remove_all(dir);
}

TEST(NotifierTest, PostsBatchesOfAtMost64) {
  FakeAlertmanager am;
  Notifier n(FastOptions());
  scrape::AlertingConfig cfg;
  cfg.alertmanagers.push_back(StaticAm({am.address()}));
  ASSERT_TRUE(n.ApplyConfig(cfg, Labels()).ok());
  std::vector<Alert> alerts;
  for (int i = 0; i < 150; ++i) alerts.push_back(MakeAlert("a" + std::to_string(i)));
  n.Send(alerts);
  ASSERT_TRUE(WaitFor([&] { return am.AcceptedAlertCount() == 150; }));
  const auto received = am.received();
  ASSERT_GE(received.size(), 3u);
  for (const auto& r : received) {
    EXPECT_EQ(r.path, "/api/v2/alerts");
    EXPECT_EQ(r.content_type, "application/json");
  }
  for (const auto& d : AcceptedPosts(am)) {
    EXPECT_LE(d.Size(), 64u);
    EXPECT_GE(d.Size(), 1u);
  }
  EXPECT_EQ(AcceptedNames(am).size(), 150u);
  ASSERT_TRUE(WaitFor([&] { return n.stats().sent == 150; }));
  const Stats s = n.stats();
  EXPECT_EQ(s.sent, 150u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.queue_length, 0u);
  EXPECT_EQ(s.queue_capacity, 10000u);
  EXPECT_EQ(s.alertmanagers_discovered, 1u);
}

TEST(NotifierTest, ExternalLabelsAndRelabeling) {
  FakeAlertmanager am;
  Notifier n(FastOptions());
  scrape::AlertingConfig cfg;
  cfg.alert_relabel_configs.push_back(Rule(scrape::RelabelAction::kDrop, {"severity"}, "debug"));
  scrape::AlertmanagerConfig set = StaticAm({am.address()});
  // This Alertmanager set additionally renames the team label.
  set.alert_relabel_configs.push_back(
      Rule(scrape::RelabelAction::kReplace, {"team"}, "(.+)", "owner"));
  cfg.alertmanagers.push_back(set);
  ASSERT_TRUE(n.ApplyConfig(cfg, Labels{{"cluster", "c1"}, {"region", "eu"}}).ok());
  n.Send({MakeAlert("Keep", Labels{{"severity", "page"}, {"team", "infra"}}),
          MakeAlert("Noise", Labels{{"severity", "debug"}}),
          MakeAlert("OwnCluster", Labels{{"cluster", "mine"}})});
  ASSERT_TRUE(WaitFor([&] { return am.AcceptedAlertCount() == 2; }));
  std::map<std::string, std::map<std::string, std::string>> got;
  for (const auto& d : AcceptedPosts(am)) {
    for (const auto& a : d.GetArray()) {
      auto& labels = got[a["labels"]["alertname"].GetString()];
      for (auto it = a["labels"].MemberBegin(); it != a["labels"].MemberEnd(); ++it) {
        labels[it->name.GetString()] = it->value.GetString();
      }
    }
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got["Keep"]["cluster"], "c1");
  EXPECT_EQ(got["Keep"]["region"], "eu");
  EXPECT_EQ(got["Keep"]["owner"], "infra");
  EXPECT_EQ(got["OwnCluster"]["cluster"], "mine");  // the alert's own label wins
  EXPECT_EQ(got["OwnCluster"]["region"], "eu");
  EXPECT_EQ(got["OwnCluster"].count("owner"), 0u);
  EXPECT_EQ(got.count("Noise"), 0u);
}

TEST(NotifierTest, KeepsAlertsThroughFailuresUntilAccepted) {
  FakeAlertmanager am(/*fail_first=*/3);
  Notifier n(FastOptions());
  scrape::AlertingConfig cfg;
  cfg.alertmanagers.push_back(StaticAm({am.address()}));
  ASSERT_TRUE(n.ApplyConfig(cfg, Labels()).ok());
  n.Send({MakeAlert("x"), MakeAlert("y")});
  ASSERT_TRUE(WaitFor([&] { return am.AcceptedAlertCount() == 2; }));
  EXPECT_EQ(am.received().size(), 4u);  // three refusals, then the same batch accepted
  EXPECT_EQ(AcceptedNames(am), (std::set<std::string>{"x", "y"}));
  ASSERT_TRUE(WaitFor([&] { return n.stats().sent == 2; }));
  const Stats s = n.stats();
  EXPECT_EQ(s.errors, 6u);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.queue_length, 0u);
  const std::string url = "http://" + am.address() + "/api/v2/alerts";
  ASSERT_EQ(s.by_alertmanager.count(url), 1u);
  EXPECT_EQ(s.by_alertmanager.at(url).sent, 2u);
  EXPECT_EQ(s.by_alertmanager.at(url).errors, 6u);
}

TEST(NotifierTest, FullQueueDropsOldestAndRecoversWhenAnAlertmanagerAppears) {
  Options o = FastOptions();
  o.queue_capacity = 5;
  Notifier n(o);
  scrape::AlertingConfig down;
  down.alertmanagers.push_back(StaticAm({"127.0.0.1:" + std::to_string(testing::UnusedPort())}));
  ASSERT_TRUE(n.ApplyConfig(down, Labels()).ok());
  std::vector<Alert> alerts;
  for (int i = 0; i < 8; ++i) alerts.push_back(MakeAlert("a" + std::to_string(i)));
  n.Send(alerts);
  ASSERT_TRUE(WaitFor([&] { return n.stats().errors > 0; }));
  Stats s = n.stats();
  EXPECT_EQ(s.dropped, 3u);
  EXPECT_EQ(s.queue_length, 5u);
  EXPECT_EQ(s.sent, 0u);

  FakeAlertmanager am;
  scrape::AlertingConfig up;
  up.alertmanagers.push_back(StaticAm({am.address()}));
  ASSERT_TRUE(n.ApplyConfig(up, Labels()).ok());
  ASSERT_TRUE(WaitFor([&] { return am.AcceptedAlertCount() == 5; }));
  EXPECT_EQ(AcceptedNames(am), (std::set<std::string>{"a3", "a4", "a5", "a6", "a7"}));
  ASSERT_TRUE(WaitFor([&] { return n.stats().queue_length == 0; }));
  EXPECT_EQ(n.stats().dropped, 3u);
}

TEST(NotifierTest, OneAcceptingAlertmanagerIsEnough) {
  FakeAlertmanager good;
  FakeAlertmanager bad(0, /*always_fail=*/true);
  Notifier n(FastOptions());
  scrape::AlertingConfig cfg;
  cfg.alertmanagers.push_back(StaticAm({good.address(), bad.address()}));
  ASSERT_TRUE(n.ApplyConfig(cfg, Labels()).ok());
  n.Send({MakeAlert("once")});
  ASSERT_TRUE(WaitFor([&] { return n.stats().sent == 1 && n.stats().errors == 1; }));
  // Give a wrong retry the chance to happen before looking.
  n.Send({MakeAlert("marker")});
  // Both Alertmanagers get each batch concurrently: wait for both.
  ASSERT_TRUE(
      WaitFor([&] { return good.AcceptedAlertCount() == 2 && bad.received().size() >= 2; }));
  EXPECT_EQ(good.received().size(), 2u);
  EXPECT_EQ(bad.received().size(), 2u);
  EXPECT_EQ(n.stats().dropped, 0u);
}

TEST(NotifierTest, SendsConfiguredCredentials) {
  FakeAlertmanager basic;
  FakeAlertmanager bearer;
  auto dir = std::filesystem::temp_directory_path() / ("notifier_auth_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "token") << "s3cret\n";
  scrape::AlertingConfig cfg;
  scrape::AlertmanagerConfig a = StaticAm({basic.address()});
  a.http.basic_auth_username = "alice";
  a.http.basic_auth_password = "pw";
  scrape::AlertmanagerConfig b = StaticAm({bearer.address()});
  b.http.authorization_type = "Bearer";
  b.http.authorization_credentials_file = (dir / "token").string();
  b.path_prefix = "/am";
  cfg.alertmanagers = {a, b};
  Notifier n(FastOptions());
  ASSERT_TRUE(n.ApplyConfig(cfg, Labels()).ok());
  n.Send({MakeAlert("auth")});
  ASSERT_TRUE(WaitFor([&] { return !basic.received().empty() && !bearer.received().empty(); }));
  EXPECT_EQ(basic.received()[0].authorization, "Basic YWxpY2U6cHc=");  // base64("alice:pw")
  EXPECT_EQ(bearer.received()[0].authorization, "Bearer s3cret");
  EXPECT_EQ(bearer.received()[0].path, "/am/api/v2/alerts");
  std::filesystem::remove_all(dir);
}

// HTTPS with a CA file and a client certificate the server requires; and
// the same server refused when the CA is not trusted.
TEST(NotifierTest, PostsOverMutualTls) {
  web::testing::TempDir dir;
  web::testing::TestCerts certs;
  ASSERT_TRUE(web::testing::MakeTestCerts(dir.path(), &certs));
  httplib::SSLServer server(certs.server_cert.c_str(), certs.server_key.c_str(),
                            certs.ca_cert.c_str());
  ASSERT_TRUE(server.is_valid());
  std::atomic<int> posts{0};
  server.Post("/api/v2/alerts", [&](const httplib::Request&, httplib::Response& res) {
    ++posts;
    res.status = 200;
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  scrape::AlertmanagerConfig am = StaticAm({"127.0.0.1:" + std::to_string(port)});
  am.scheme = "https";
  am.http.tls_ca_file = certs.ca_cert;
  am.http.tls_cert_file = certs.client_cert;
  am.http.tls_key_file = certs.client_key;
  scrape::AlertingConfig cfg;
  cfg.alertmanagers.push_back(am);
  {
    Notifier n(FastOptions());
    ASSERT_TRUE(n.ApplyConfig(cfg, Labels()).ok());
    n.Send({MakeAlert("tls")});
    EXPECT_TRUE(WaitFor([&] { return n.stats().sent == 1; }));
  }
  EXPECT_EQ(posts.load(), 1);

  // Without the client certificate the handshake fails: kept queued, errors.
  cfg.alertmanagers[0].http.tls_cert_file.clear();
  cfg.alertmanagers[0].http.tls_key_file.clear();
  {
    Options o = FastOptions();
    o.drain_on_shutdown = false;
    Notifier n(o);
    ASSERT_TRUE(n.ApplyConfig(cfg, Labels()).ok());
    n.Send({MakeAlert("tls")});
    EXPECT_TRUE(WaitFor([&] { return n.stats().errors >= 1; }));
    EXPECT_EQ(n.stats().sent, 0u);
    EXPECT_EQ(n.stats().queue_length, 1u);
  }
  EXPECT_EQ(posts.load(), 1);
  server.stop();
  serving.join();
}

TEST(NotifierTest, ListsAlertmanagersAsPrometheusApiJson) {
  Notifier n(FastOptions());
  scrape::AlertingConfig cfg;
  scrape::AlertmanagerConfig am = StaticAm({"am1:9093", "am2:9093"});
  am.relabel_configs.push_back(Rule(scrape::RelabelAction::kDrop, {"__address__"}, "am2:.*"));
  cfg.alertmanagers.push_back(am);
  ASSERT_TRUE(n.ApplyConfig(cfg, Labels()).ok());
  EXPECT_EQ(n.ActiveAlertmanagers(), (std::vector<std::string>{"http://am1:9093/api/v2/alerts"}));
  EXPECT_EQ(n.DroppedAlertmanagers(), (std::vector<std::string>{"http://am2:9093/api/v2/alerts"}));
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  ASSERT_TRUE(WriteAlertmanagersJson(w, n.ActiveAlertmanagers(), n.DroppedAlertmanagers()));
  rapidjson::Document d;
  d.Parse(buf.GetString());
  ASSERT_TRUE(d.IsObject());
  ASSERT_EQ(d["activeAlertmanagers"].Size(), 1u);
  EXPECT_STREQ(d["activeAlertmanagers"][0]["url"].GetString(), "http://am1:9093/api/v2/alerts");
  ASSERT_EQ(d["droppedAlertmanagers"].Size(), 1u);
  EXPECT_STREQ(d["droppedAlertmanagers"][0]["url"].GetString(), "http://am2:9093/api/v2/alerts");
}

TEST(NotifierTest, PicksUpChangedTargetFiles) {
  FakeAlertmanager am;
  auto dir = std::filesystem::temp_directory_path() / ("notifier_fsd_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  scrape::AlertingConfig cfg;
  scrape::AlertmanagerConfig set;
  scrape::FileSdConfig sd;
  sd.files = {(dir / "am.yml").string()};
  set.file_sd_configs.push_back(sd);
  cfg.alertmanagers.push_back(set);
  Notifier n(FastOptions());
  ASSERT_TRUE(n.ApplyConfig(cfg, Labels()).ok());
  EXPECT_TRUE(n.ActiveAlertmanagers().empty());
  n.Send({MakeAlert("waiting")});  // kept queued: nowhere to send yet
  std::ofstream(dir / "am.yml") << "- targets: ['" << am.address() << "']\n";
  ASSERT_TRUE(WaitFor([&] { return am.AcceptedAlertCount() == 1; }));
  EXPECT_EQ(n.ActiveAlertmanagers().size(), 1u);
  EXPECT_EQ(n.stats().dropped, 0u);
  std::filesystem::remove_all(dir);
}

TEST(NotifierTest, StopDrainsTheQueue) {
  FakeAlertmanager am;
  Options o = FastOptions();
  auto n = std::make_unique<Notifier>(o);
  scrape::AlertingConfig cfg;
  cfg.alertmanagers.push_back(StaticAm({am.address()}));
  ASSERT_TRUE(n->ApplyConfig(cfg, Labels()).ok());
  std::vector<Alert> alerts;
  for (int i = 0; i < 200; ++i) alerts.push_back(MakeAlert("d" + std::to_string(i)));
  n->Send(alerts);
  n->Stop();
  EXPECT_EQ(am.AcceptedAlertCount(), 200u);
  EXPECT_EQ(n->stats().dropped, 0u);
  n->Send({MakeAlert("after-stop")});  // discarded
  EXPECT_EQ(n->stats().queue_length, 0u);
}

TEST(NotifierTest, WithoutAlertmanagersSendIsANoOp) {
  Notifier n(FastOptions());
  n.Send({MakeAlert("nowhere")});
  EXPECT_EQ(n.stats().queue_length, 0u);
  EXPECT_EQ(n.stats().dropped, 0u);

  // Alerting switched off while alerts wait for an unreachable target.
  scrape::AlertingConfig down;
  down.alertmanagers.push_back(StaticAm({"127.0.0.1:" + std::to_string(testing::UnusedPort())}));
  ASSERT_TRUE(n.ApplyConfig(down, Labels()).ok());
  n.Send({MakeAlert("a"), MakeAlert("b")});
  EXPECT_EQ(n.stats().queue_length, 2u);
  ASSERT_TRUE(n.ApplyConfig(scrape::AlertingConfig(), Labels()).ok());
  // A batch already out to the unreachable target is dropped when that
  // attempt fails, not queued for a retry that has nowhere to go.
  ASSERT_TRUE(WaitFor([&] { return n.stats().queue_length == 0; }));
  EXPECT_EQ(n.stats().dropped, 2u);
}

}  // namespace
}  // namespace gpumon::notifier
