// Target label population: defaults, relabeling, "__" removal, instance.
#include "scrape/target.h"

#include <gtest/gtest.h>

namespace gpumon::scrape {
namespace {

ScrapeConfig Job() {
  auto c = ParseConfig(R"(scrape_configs:
  - job_name: node
    scrape_interval: 15s
    scrape_timeout: 5s
    metrics_path: /probe
    params: {module: [http_2xx]}
)",
                       "t.yml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c->scrape_configs.at(0);
}

TEST(TargetTest, DefaultsAndUrl) {
  TargetGroup g;
  g.labels = Labels{{"dc", "eu"}, {"__meta_x", "m"}};
  auto t = BuildTarget("host:9100", g, Job());
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE(t->has_value());
  const Target& target = **t;
  EXPECT_EQ(target.labels, (Labels{{"dc", "eu"}, {"instance", "host:9100"}, {"job", "node"}}));
  EXPECT_EQ(target.discovered.Get("__address__"), "host:9100");
  EXPECT_EQ(target.discovered.Get("__scrape_interval__"), "15s");
  EXPECT_EQ(target.discovered.Get("__scrape_timeout__"), "5s");
  EXPECT_EQ(target.discovered.Get("__param_module"), "http_2xx");
  EXPECT_EQ(target.discovered.Get("__meta_x"), "m");
  EXPECT_EQ(target.url, "http://host:9100/probe?module=http_2xx");
  EXPECT_EQ(target.interval_ms, 15000);
  EXPECT_EQ(target.timeout_ms, 5000);
}

TEST(TargetTest, RelabelingRewritesAddressParamsAndCanDrop) {
  ScrapeConfig job = Job();
  auto rule = [](std::vector<std::string> src, std::string target, std::string repl) {
    RelabelConfig r;
    r.source_labels = std::move(src);
    r.target_label = std::move(target);
    r.replacement = std::move(repl);
    EXPECT_TRUE(r.Compile().ok());
    return r;
  };
  // The blackbox-exporter pattern: target becomes a param, address the prober.
  job.relabel_configs = {rule({"__address__"}, "__param_target", "$1"),
                         rule({"__param_target"}, "instance", "$1"),
                         rule({}, "__address__", "prober:9115")};
  TargetGroup g;
  auto t = BuildTarget("example.com", g, job);
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ((*t)->url, "http://prober:9115/probe?module=http_2xx&target=example.com");
  EXPECT_EQ((*t)->labels.Get("instance"), "example.com");

  RelabelConfig drop;
  drop.action = RelabelAction::kDrop;
  drop.source_labels = {"__address__"};
  drop.regex = "example.*";
  ASSERT_TRUE(drop.Compile().ok());
  job.relabel_configs = {drop};
  t = BuildTarget("example.com", g, job);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->has_value());
}

TEST(TargetTest, BadIntervalLabelIsAnError) {
  ScrapeConfig job = Job();
  RelabelConfig r;
  r.target_label = "__scrape_timeout__";
  r.replacement = "1m";
  ASSERT_TRUE(r.Compile().ok());
  job.relabel_configs = {r};
  auto t = BuildTarget("h:1", TargetGroup{}, job);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("greater than scrape interval"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::scrape
