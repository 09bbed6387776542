// The manager running discovery mechanisms: targets of all mechanisms
// merged, relabeling, dropped targets, failing refreshes keeping targets,
// and the /api/v1/targets document built from it.
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "dns_test_server.h"
#include "scrape/manager.h"
#include "scrape/targets_json.h"
#include "test_util.h"

namespace gpumon::scrape {
namespace {

Result<FetchResult> Answer(const std::string&, int64_t, uint64_t) {
  return FetchResult{"m 1\n", ""};
}

// Polls `pred` for up to 10 s (discovery runs on its own thread).
template <typename Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 200; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

class SdServer {
 public:
  SdServer() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    server_.Get("/sd", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> l(mu_);
      res.status = status_;
      res.set_content(body_, "application/json");
    });
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~SdServer() {
    server_.stop();
    thread_.join();
  }
  void Set(int status, std::string body) {
    std::lock_guard<std::mutex> l(mu_);
    status_ = status;
    body_ = std::move(body);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/sd"; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::mutex mu_;
  int status_ = 200;
  std::string body_ = "[]";
  std::thread thread_;
};

TEST(ManagerDiscoveryTest, MergesMechanismsAppliesRelabelingAndListsDropped) {
  SdServer sd;
  sd.Set(200,
         R"([{"targets": ["gpu1:9400", "gpu2:9400", "cpu1:9100"], "labels": {"rack": "r1"}}])");
  testing::DnsTestServer dns;
  dns.AddSRV("_dcgm._tcp.gpu.test", 0, 0, 9400, "gpu3.gpu.test");
  auto cfg = ParseConfig(R"(scrape_configs:
  - job_name: gpus
    scrape_interval: 1s
    static_configs:
      - targets: ['gpu0:9400']
    http_sd_configs:
      - url: )" + sd.url() + R"(
        refresh_interval: 100ms
    dns_sd_configs:
      - names: ['_dcgm._tcp.gpu.test']
        refresh_interval: 100ms
    relabel_configs:
      - source_labels: [__address__]
        regex: 'cpu.*'
        action: drop
      - source_labels: [__meta_dns_srv_record_target]
        target_label: srv
)",
                         "p.yml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  testing::Store store;
  discovery::Options opts;
  opts.dns_server = dns.address();
  Manager m(store.Factory(), Answer, opts);
  ASSERT_TRUE(m.ApplyConfig(*cfg).ok());
  // Static targets are there at once; the others after the first refresh.
  EXPECT_GE(m.PoolSizes()["gpus"], 1u);
  ASSERT_TRUE(Eventually([&] { return m.PoolSizes()["gpus"] == 4; })) << m.PoolSizes()["gpus"];

  std::map<std::string, TargetSnapshot> by_instance;
  for (const auto& t : m.Targets()) by_instance[std::string(t.labels.Get("instance"))] = t;
  ASSERT_EQ(by_instance.size(), 4u);
  EXPECT_EQ(by_instance["gpu1:9400"].labels.Get("rack"), "r1");
  EXPECT_EQ(by_instance["gpu1:9400"].discovered_labels.Get("__meta_url"), sd.url());
  EXPECT_FALSE(by_instance["gpu1:9400"].labels.Has("__meta_url"));
  EXPECT_EQ(by_instance["gpu3.gpu.test:9400"].labels.Get("srv"), "gpu3.gpu.test.");
  EXPECT_TRUE(by_instance.count("gpu0:9400"));

  auto dropped = m.DroppedTargets();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].scrape_pool, "gpus");
  EXPECT_EQ(dropped[0].discovered_labels.Get("__address__"), "cpu1:9100");
  EXPECT_EQ(dropped[0].discovered_labels.Get("job"), "gpus");
  EXPECT_EQ(dropped[0].discovered_labels.Get("__meta_url"), sd.url());
  EXPECT_EQ(m.DroppedTargetCounts()["gpus"], 1u);

  // The API document: dropped targets with their discovered labels.
  rapidjson::Document doc;
  doc.Parse(TargetsJson(m.Targets(), m.DroppedTargets(), m.DroppedTargetCounts(), "", "").c_str());
  ASSERT_FALSE(doc.HasParseError());
  const auto& data = doc["data"];
  EXPECT_EQ(data["activeTargets"].Size(), 4u);
  ASSERT_EQ(data["droppedTargets"].Size(), 1u);
  EXPECT_STREQ(data["droppedTargets"][0]["discoveredLabels"]["__address__"].GetString(),
               "cpu1:9100");
  EXPECT_STREQ(data["droppedTargets"][0]["scrapePool"].GetString(), "gpus");
  EXPECT_EQ(data["droppedTargetCounts"]["gpus"].GetInt(), 1);
  doc.Parse(
      TargetsJson(m.Targets(), m.DroppedTargets(), m.DroppedTargetCounts(), "dropped", "").c_str());
  EXPECT_EQ(doc["data"]["activeTargets"].Size(), 0u);
  EXPECT_EQ(doc["data"]["droppedTargets"].Size(), 1u);
  doc.Parse(
      TargetsJson(m.Targets(), m.DroppedTargets(), m.DroppedTargetCounts(), "active", "").c_str());
  EXPECT_EQ(doc["data"]["droppedTargets"].Size(), 0u);
  EXPECT_TRUE(doc["data"]["droppedTargetCounts"].IsNull());
  doc.Parse(
      TargetsJson(m.Targets(), m.DroppedTargets(), m.DroppedTargetCounts(), "", "other").c_str());
  EXPECT_EQ(doc["data"]["droppedTargets"].Size(), 0u);
  EXPECT_EQ(doc["data"]["droppedTargetCounts"]["gpus"].GetInt(), 1);

  // The HTTP endpoint fails: its targets stay. Then it drops gpu2.
  sd.Set(503, "");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(m.PoolSizes()["gpus"], 4u);
  sd.Set(200, R"([{"targets": ["gpu1:9400"], "labels": {"rack": "r1"}}])");
  ASSERT_TRUE(Eventually([&] { return m.PoolSizes()["gpus"] == 3; }));
  EXPECT_TRUE(Eventually([&] { return m.DroppedTargets().empty(); }));
  m.Stop();
}

TEST(ManagerDiscoveryTest, ChangedJobKeepsNetworkTargetsUntilRefreshed) {
  SdServer sd;
  sd.Set(200, R"([{"targets": ["a:1"]}])");
  auto config = [&](const std::string& interval) {
    return ParseConfig("scrape_configs:\n  - job_name: j\n    scrape_interval: " + interval +
                           "\n    http_sd_configs:\n      - url: " + sd.url() +
                           "\n        refresh_interval: 100ms\n",
                       "p.yml");
  };
  testing::Store store;
  Manager m(store.Factory(), Answer);
  auto c1 = config("1s");
  ASSERT_TRUE(c1.ok()) << c1.status().message();
  ASSERT_TRUE(m.ApplyConfig(*c1).ok());
  ASSERT_TRUE(Eventually([&] { return m.PoolSizes()["j"] == 1; }));
  // The job changes; until its new discoverer answers, the old targets stay.
  auto c2 = config("2s");
  ASSERT_TRUE(m.ApplyConfig(*c2).ok());
  EXPECT_EQ(m.PoolSizes()["j"], 1u);
  auto targets = m.Targets();
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].scrape_interval_ms, 2000);
  m.Stop();
}

}  // namespace
}  // namespace gpumon::scrape
