// Metric metadata: the scrape loop's per-target table (TYPE, HELP, UNIT as
// Prometheus's scrape cache keeps them) and the data of
// /api/v1/targets/metadata and /api/v1/metadata, checked against the
// response shapes Prometheus documents.
#include "scrape/target_metadata.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "scrape/scrape_loop.h"
#include "test_util.h"

namespace gpumon::scrape {
namespace {

Target MakeTarget() {
  Target t;
  t.labels = Labels{{"instance", "h:1"}, {"job", "j"}};
  t.url = "http://h:1/metrics";
  t.scrape_pool = "j";
  t.interval_ms = 1000;
  t.timeout_ms = 500;
  return t;
}

struct FakeTarget {
  std::string body;
  std::string content_type = "text/plain; version=0.0.4";
  Fetcher Fetch() {
    return [this](const std::string&, int64_t, uint64_t) -> Result<FetchResult> {
      if (body == "!fail") return Status::Error("connection refused");
      return FetchResult{body, content_type};
    };
  }
};

std::vector<std::string> Names(const std::vector<MetricMetadataEntry>& v) {
  std::vector<std::string> out;
  for (const auto& e : v) out.push_back(e.metric);
  return out;
}

TEST(ScrapeLoopMetadataTest, KeepsTypeHelpAndUnitPerFamily) {
  testing::Store store;
  FakeTarget ft{
      "# HELP node_temp Temperature of\\nthe node.\n"
      "# TYPE node_temp gauge\n"
      "node_temp 40\n"
      "# TYPE requests_total counter\n"
      "requests_total 3\n"
      "# HELP only_help Just help.\n"
      "only_help 1\n"
      "# TYPE old untyped\n"
      "old 2\n"
      "no_metadata 5\n"};
  ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch());
  EXPECT_TRUE(loop.Metadata().empty());
  loop.ScrapeOnce(1000);
  auto md = loop.Metadata();
  ASSERT_EQ(Names(md),
            (std::vector<std::string>{"node_temp", "old", "only_help", "requests_total"}));
  EXPECT_EQ(md[0], (MetricMetadataEntry{"node_temp", "gauge", "Temperature of\nthe node.", ""}));
  EXPECT_EQ(md[1], (MetricMetadataEntry{"old", "unknown", "", ""}));
  EXPECT_EQ(md[2], (MetricMetadataEntry{"only_help", "unknown", "Just help.", ""}));
  EXPECT_EQ(md[3], (MetricMetadataEntry{"requests_total", "counter", "", ""}));
  auto one = loop.GetMetadata("requests_total");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->type, "counter");
  EXPECT_FALSE(loop.GetMetadata("no_metadata").has_value());
  // The samples themselves are unaffected.
  EXPECT_EQ(store.Of("node_temp{instance=\"h:1\", job=\"j\"}").size(), 1u);
}

TEST(ScrapeLoopMetadataTest, OpenMetricsUnitsAndFamilyNames) {
  testing::Store store;
  FakeTarget ft{
      "# TYPE gpu_energy_joules counter\n"
      "# UNIT gpu_energy_joules joules\n"
      "# HELP gpu_energy_joules Energy used.\n"
      "gpu_energy_joules_total 12\n"
      "# TYPE lat histogram\n"
      "lat_bucket{le=\"+Inf\"} 1\n"
      "lat_count 1\n"
      "lat_sum 0.5\n"
      "# EOF\n",
      "application/openmetrics-text; version=1.0.0; charset=utf-8"};
  ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  ASSERT_EQ(loop.Status().health, Health::kUp) << loop.Status().last_error;
  auto md = loop.Metadata();
  ASSERT_EQ(md.size(), 2u);
  EXPECT_EQ(md[0], (MetricMetadataEntry{"gpu_energy_joules", "counter", "Energy used.", "joules"}));
  EXPECT_EQ(md[1], (MetricMetadataEntry{"lat", "histogram", "", ""}));
}

TEST(ScrapeLoopMetadataTest, FollowsChangesAndForgetsAfterTenScrapes) {
  testing::Store store;
  FakeTarget ft{"# HELP a First.\n# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n"};
  ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  ft.body = "# HELP a Second.\n# TYPE a counter\na 1\n";
  loop.ScrapeOnce(2000);
  auto a = loop.GetMetadata("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->help, "Second.");
  EXPECT_EQ(a->type, "counter");
  // b was last seen in scrape 1; it stays for 10 more scrapes.
  int64_t t = 3000;
  for (int i = 0; i < 9; ++i, t += 1000) loop.ScrapeOnce(t);
  EXPECT_TRUE(loop.GetMetadata("b").has_value());
  // Failed scrapes do not expire anything.
  ft.body = "!fail";
  for (int i = 0; i < 3; ++i, t += 1000) loop.ScrapeOnce(t);
  EXPECT_TRUE(loop.GetMetadata("b").has_value());
  ft.body = "# HELP a Second.\n# TYPE a counter\na 1\n";
  loop.ScrapeOnce(t);
  EXPECT_FALSE(loop.GetMetadata("b").has_value());
  EXPECT_EQ(Names(loop.Metadata()), (std::vector<std::string>{"a"}));
}

// --- API data -------------------------------------------------------------

std::vector<TargetMetadata> TwoTargets() {
  TargetMetadata a;
  a.target = Labels{{"instance", "a:9400"}, {"job", "gpu"}};
  a.metadata = {{"gpu_temp", "gauge", "GPU temperature.", "celsius"},
                {"up_total", "counter", "Ups.", ""}};
  TargetMetadata b;
  b.target = Labels{{"instance", "b:9100"}, {"job", "node"}};
  b.metadata = {{"gpu_temp", "gauge", "GPU temperature (old agent).", "celsius"},
                {"node_load1", "gauge", "1m load average.", ""},
                {"up_total", "counter", "Ups.", ""}};
  return {a, b};
}

rapidjson::Document Parse(const Result<std::string>& json) {
  rapidjson::Document d;
  EXPECT_TRUE(json.ok()) << json.status().message();
  if (json.ok()) d.Parse(json->c_str());
  EXPECT_FALSE(d.HasParseError());
  return d;
}

TEST(TargetMetadataApiTest, ListsEveryEntryWithTargetLabels) {
  auto d = Parse(TargetMetadataJson(TwoTargets(), {}));
  ASSERT_TRUE(d.IsArray());
  ASSERT_EQ(d.Size(), 5u);
  const auto& first = d[0];
  ASSERT_TRUE(first["target"].IsObject());
  EXPECT_STREQ(first["target"]["instance"].GetString(), "a:9400");
  EXPECT_STREQ(first["target"]["job"].GetString(), "gpu");
  EXPECT_EQ(first["target"].MemberCount(), 2u);
  EXPECT_STREQ(first["metric"].GetString(), "gpu_temp");
  EXPECT_STREQ(first["type"].GetString(), "gauge");
  EXPECT_STREQ(first["help"].GetString(), "GPU temperature.");
  EXPECT_STREQ(first["unit"].GetString(), "celsius");
  EXPECT_STREQ(d[4]["target"]["job"].GetString(), "node");
  EXPECT_STREQ(d[4]["metric"].GetString(), "up_total");
  EXPECT_STREQ(d[4]["unit"].GetString(), "");
}

TEST(TargetMetadataApiTest, MatchTargetMetricAndLimit) {
  auto node = Parse(TargetMetadataJson(TwoTargets(), {.match_target = "{job=\"node\"}"}));
  ASSERT_EQ(node.Size(), 3u);
  for (const auto& e : node.GetArray()) EXPECT_STREQ(e["target"]["job"].GetString(), "node");

  auto re = Parse(TargetMetadataJson(TwoTargets(), {.match_target = "{instance=~\"a:.*\"}"}));
  ASSERT_EQ(re.Size(), 2u);

  // With metric, entries carry no "metric" field.
  auto temp = Parse(TargetMetadataJson(TwoTargets(), {.metric = "gpu_temp"}));
  ASSERT_EQ(temp.Size(), 2u);
  EXPECT_FALSE(temp[0].HasMember("metric"));
  EXPECT_STREQ(temp[1]["help"].GetString(), "GPU temperature (old agent).");
  EXPECT_EQ(Parse(TargetMetadataJson(TwoTargets(), {.metric = "absent"})).Size(), 0u);

  // The limit is checked before each target: a target's entries all go in.
  EXPECT_EQ(Parse(TargetMetadataJson(TwoTargets(), {.limit = "1"})).Size(), 2u);
  EXPECT_EQ(Parse(TargetMetadataJson(TwoTargets(), {.limit = "2"})).Size(), 2u);
  EXPECT_EQ(Parse(TargetMetadataJson(TwoTargets(), {.limit = "3"})).Size(), 5u);
  EXPECT_EQ(Parse(TargetMetadataJson(TwoTargets(), {.limit = "0"})).Size(), 0u);
  EXPECT_EQ(Parse(TargetMetadataJson(TwoTargets(), {.limit = "-1"})).Size(), 5u);
}

TEST(TargetMetadataApiTest, BadParametersAreErrors) {
  auto limit = TargetMetadataJson(TwoTargets(), {.limit = "ten"});
  ASSERT_FALSE(limit.ok());
  EXPECT_EQ(limit.status().message(), "limit must be a number");
  EXPECT_FALSE(TargetMetadataJson(TwoTargets(), {.limit = "1.5"}).ok());
  auto sel = TargetMetadataJson(TwoTargets(), {.match_target = "{job="});
  ASSERT_FALSE(sel.ok());
  EXPECT_EQ(sel.status().message().rfind("invalid parameter \"match_target\": ", 0), 0u)
      << sel.status().message();
}

TEST(MetricMetadataApiTest, DistinctValuesPerFamilyAcrossTargets) {
  auto d = Parse(MetricMetadataJson(TwoTargets(), {}));
  ASSERT_TRUE(d.IsObject());
  ASSERT_EQ(d.MemberCount(), 3u);
  // Two targets disagree on gpu_temp's help: both versions are listed.
  ASSERT_TRUE(d["gpu_temp"].IsArray());
  ASSERT_EQ(d["gpu_temp"].Size(), 2u);
  EXPECT_STREQ(d["gpu_temp"][0]["type"].GetString(), "gauge");
  EXPECT_STREQ(d["gpu_temp"][0]["unit"].GetString(), "celsius");
  EXPECT_STREQ(d["gpu_temp"][0]["help"].GetString(), "GPU temperature.");
  EXPECT_STREQ(d["gpu_temp"][1]["help"].GetString(), "GPU temperature (old agent).");
  EXPECT_FALSE(d["gpu_temp"][0].HasMember("metric"));
  // Identical metadata from two targets is listed once.
  ASSERT_EQ(d["up_total"].Size(), 1u);
  EXPECT_STREQ(d["up_total"][0]["type"].GetString(), "counter");
  ASSERT_EQ(d["node_load1"].Size(), 1u);
}

TEST(MetricMetadataApiTest, MetricLimitAndLimitPerMetric) {
  auto one = Parse(MetricMetadataJson(TwoTargets(), {.metric = "node_load1"}));
  ASSERT_EQ(one.MemberCount(), 1u);
  EXPECT_TRUE(one.HasMember("node_load1"));
  EXPECT_EQ(Parse(MetricMetadataJson(TwoTargets(), {.metric = "absent"})).MemberCount(), 0u);
  EXPECT_EQ(Parse(MetricMetadataJson(TwoTargets(), {.limit = "2"})).MemberCount(), 2u);
  EXPECT_EQ(Parse(MetricMetadataJson(TwoTargets(), {.limit = "0"})).MemberCount(), 0u);
  auto capped = Parse(MetricMetadataJson(TwoTargets(), {.limit_per_metric = "1"}));
  ASSERT_EQ(capped.MemberCount(), 3u);
  EXPECT_EQ(capped["gpu_temp"].Size(), 1u);
  auto bad = MetricMetadataJson(TwoTargets(), {.limit_per_metric = "x"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "limit_per_metric must be a number");
}

TEST(MetricMetadataApiTest, FedFromScrapeLoops) {
  testing::Store store;
  FakeTarget ft{"# HELP m Help.\n# TYPE m gauge\nm 1\n"};
  ScrapeLoop loop(MakeTarget(), {}, store.Factory(), ft.Fetch());
  loop.ScrapeOnce(1000);
  std::vector<TargetMetadata> in{{loop.target().labels, loop.Metadata()}};
  auto d = Parse(TargetMetadataJson(in, {.match_target = "{job=\"j\"}"}));
  ASSERT_EQ(d.Size(), 1u);
  EXPECT_STREQ(d[0]["target"]["instance"].GetString(), "h:1");
  EXPECT_STREQ(d[0]["metric"].GetString(), "m");
  EXPECT_STREQ(d[0]["help"].GetString(), "Help.");
}

}  // namespace
}  // namespace gpumon::scrape
