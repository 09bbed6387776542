// In-process local collection for `gpumon server`: the agent's collectors
// over the simulator's NVML and the server's own metrics are scraped into
// an in-memory head, with the report series and staleness of a real scrape.
#include "cli/local_collection.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "scrape/appender.h"
#include "selfmon/process_metrics.h"
#include "selfmon/registry.h"
#include "tsdb/head/head.h"
#include "tsdb/matcher.h"
#include "tsdb/sample.h"

namespace gpumon::cli {
namespace {

// Every series of the head: labels → samples.
std::map<Labels, std::vector<tsdb::Sample>> All(const tsdb::head::Head& head) {
  auto q = head.Querier(INT64_MIN / 2, INT64_MAX / 2);
  auto m = tsdb::Matcher::Make(tsdb::MatchType::kRegexMatch, "__name__", ".+");
  std::vector<tsdb::Matcher> ms{*m};
  auto set = q->Select(ms);
  std::map<Labels, std::vector<tsdb::Sample>> out;
  while (set->Next()) {
    auto it = set->Iterator();
    auto& v = out[set->labels()];
    while (it->Next()) v.push_back(it->At());
  }
  return out;
}

#ifdef GPUMON_FAKE_NVML
// NVML state is global to a loaded library, so each test loads its own copy.
std::string PrivateCopy(const std::string& tag) {
  auto dir =
      std::filesystem::temp_directory_path() / ("gpumon-selfmon-nvml-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / ("libnvml-" + tag + ".so");
  std::filesystem::copy_file(GPUMON_FAKE_NVML, path,
                             std::filesystem::copy_options::overwrite_existing);
  return path.string();
}

TEST(LocalCollectionTest, SimulatedGpusAndSelfMetricsReachTheHead) {
  unsetenv("GPUMON_SIM_FAULTS");
  selfmon::Registry registry;
  ASSERT_TRUE(selfmon::RegisterProcessMetrics(registry).ok());
  tsdb::head::Head head;
  LocalCollectionOptions o;
  o.simulate_spec = "h100x2";
  o.seed = "3";
  o.nvml_library = PrivateCopy("sim");
  o.hostname = "node-a";
  o.self_instance = "localhost:19090";
  o.self_metrics = [&registry](exposition::Format f, std::string* out) { registry.Render(f, out); };
  o.run = false;
  auto lc = StartLocalCollection(o, scrape::HeadAppenderFactory([&] { return head.Appender(); }));
  ASSERT_TRUE(lc.ok()) << lc.status().message();
  EXPECT_TRUE((*lc)->simulated());
  EXPECT_EQ((*lc)->gpus(), 2u);
  EXPECT_NE((*lc)->description().find("SIMULATED"), std::string::npos) << (*lc)->description();
  EXPECT_NE((*lc)->description().find("2 GPUs"), std::string::npos) << (*lc)->description();

  (*lc)->ScrapeNow(1'000'000);
  (*lc)->ScrapeNow(1'015'000);
  auto all = All(head);

  const Labels node_up{{"__name__", "up"}, {"instance", "node-a"}, {"job", "gpumon-agent"}};
  const Labels self_up{{"__name__", "up"}, {"instance", "localhost:19090"}, {"job", "gpumon"}};
  ASSERT_TRUE(all.count(node_up));
  ASSERT_EQ(all[node_up].size(), 2u);
  EXPECT_EQ(all[node_up][0].t, 1'000'000);
  EXPECT_EQ(all[node_up][0].v, 1);
  ASSERT_TRUE(all.count(self_up));
  EXPECT_EQ(all[self_up].back().v, 1);
  for (const char* report : {"scrape_duration_seconds", "scrape_samples_scraped",
                             "scrape_samples_post_metric_relabeling", "scrape_series_added"}) {
    EXPECT_TRUE(
        all.count(Labels{{"__name__", report}, {"instance", "node-a"}, {"job", "gpumon-agent"}}))
        << report;
  }

  // GPU series: per GPU, simulated, with the node target's labels; and the
  // samples of the last scrape are exactly the live series of the node job.
  std::set<std::string> gpus;
  size_t node_series = 0;
  bool process_in_node = false;
  bool process_in_self = false;
  for (const auto& [labels, samples] : all) {
    const std::string name(labels.Get("__name__"));
    if (labels.Get("job") == "gpumon-agent") {
      if (!name.starts_with("scrape_") && name != "up" && samples.back().t == 1'015'000 &&
          !tsdb::IsStaleNaN(samples.back().v)) {
        ++node_series;
      }
      process_in_node |= name.starts_with("process_");
      EXPECT_EQ(labels.Get("simulated"), name.starts_with("scrape_") || name == "up" ? "" : "true")
          << labels.ToString();
    }
    if (labels.Get("job") == "gpumon") process_in_self |= name == "process_start_time_seconds";
    if (!name.starts_with("gpu_")) continue;
    EXPECT_EQ(labels.Get("job"), "gpumon-agent") << labels.ToString();
    EXPECT_EQ(labels.Get("instance"), "node-a");
    EXPECT_EQ(labels.Get("hostname"), "node-a");
    EXPECT_EQ(labels.Get("simulated"), "true");
    gpus.insert(std::string(labels.Get("gpu")));
    EXPECT_EQ(samples.size(), 2u) << labels.ToString();
  }
  EXPECT_EQ(gpus, (std::set<std::string>{"0", "1"}));
  const Labels scraped{
      {"__name__", "scrape_samples_scraped"}, {"instance", "node-a"}, {"job", "gpumon-agent"}};
  EXPECT_EQ(all[scraped].back().v, static_cast<double>(node_series));
  // The process is reported once, under the self job.
  EXPECT_FALSE(process_in_node);
  EXPECT_TRUE(process_in_self);

  auto targets = (*lc)->Targets();
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].scrape_pool, "gpumon-agent");
  EXPECT_EQ(targets[0].health, scrape::Health::kUp);
  EXPECT_EQ(targets[1].scrape_pool, "gpumon");

  // Stopping marks every local series stale.
  (*lc)->Stop();
  all = All(head);
  EXPECT_TRUE(tsdb::IsStaleNaN(all[node_up].back().v));
  EXPECT_TRUE(tsdb::IsStaleNaN(all[self_up].back().v));
  for (const auto& [labels, samples] : all) {
    if (labels.Get("__name__").starts_with("gpu_")) {
      EXPECT_TRUE(tsdb::IsStaleNaN(samples.back().v)) << labels.ToString();
    }
  }
}

TEST(LocalCollectionTest, BackgroundLoopsCollectAndStop) {
  unsetenv("GPUMON_SIM_FAULTS");
  tsdb::head::Head head;
  LocalCollectionOptions o;
  o.simulate_spec = "l40sx1";
  o.nvml_library = PrivateCopy("bg");
  o.hostname = "node-b";
  o.interval_ms = 50;
  auto lc = StartLocalCollection(o, scrape::HeadAppenderFactory([&] { return head.Appender(); }));
  ASSERT_TRUE(lc.ok()) << lc.status().message();
  const Labels up{{"__name__", "up"}, {"instance", "node-b"}, {"job", "gpumon-agent"}};
  // Wait (bounded) for the loop's first scrape; no timing is asserted.
  for (int i = 0; i < 400 && !All(head).count(up); ++i) usleep(10'000);
  (*lc)->Stop();
  auto all = All(head);
  ASSERT_TRUE(all.count(up));
  EXPECT_EQ(all[up].front().v, 1);
  EXPECT_TRUE(tsdb::IsStaleNaN(all[up].back().v));
}
#endif  // GPUMON_FAKE_NVML

TEST(LocalCollectionTest, AnExplicitLibraryThatCannotLoadIsAnError) {
  tsdb::head::Head head;
  LocalCollectionOptions o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.run = false;
  auto lc = StartLocalCollection(o, scrape::HeadAppenderFactory([&] { return head.Appender(); }));
  ASSERT_FALSE(lc.ok());
  EXPECT_NE(lc.status().message().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << lc.status().message();
}

TEST(LocalCollectionTest, WithoutADriverOnlyAgentMetricsAreCollected) {
  if (void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    GTEST_SKIP() << "an NVML driver library is installed here";
  }
  tsdb::head::Head head;
  LocalCollectionOptions o;
  o.hostname = "cpu-only";
  o.run = false;
  auto lc = StartLocalCollection(o, scrape::HeadAppenderFactory([&] { return head.Appender(); }));
  ASSERT_TRUE(lc.ok()) << lc.status().message();
  EXPECT_NE((*lc)->description().find("no NVML found"), std::string::npos) << (*lc)->description();
  EXPECT_EQ((*lc)->gpus(), 0u);
  (*lc)->ScrapeNow(5000);
  auto all = All(head);
  const Labels nvml_up{
      {"__name__", "gpumon_nvml_up"}, {"instance", "cpu-only"}, {"job", "gpumon-agent"}};
  ASSERT_TRUE(all.count(nvml_up));
  EXPECT_EQ(all[nvml_up][0].v, 0);
  for (const auto& [labels, samples] : all) {
    EXPECT_FALSE(labels.Get("__name__").starts_with("gpu_")) << labels.ToString();
  }
}

// On a machine with an NVIDIA driver: real GPUs, not labelled simulated.
TEST(LocalCollectionTest, RealNvmlWhenPresent) {
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) GTEST_SKIP() << "no NVML driver library here";
  dlclose(h);
  tsdb::head::Head head;
  LocalCollectionOptions o;
  o.hostname = "gpu-node";
  o.run = false;
  auto lc = StartLocalCollection(o, scrape::HeadAppenderFactory([&] { return head.Appender(); }));
  ASSERT_TRUE(lc.ok()) << lc.status().message();
  std::printf("%s\n", (*lc)->description().c_str());
  if ((*lc)->gpus() == 0) GTEST_SKIP() << (*lc)->description();
  EXPECT_FALSE((*lc)->simulated());
  EXPECT_TRUE((*lc)->description().starts_with("collecting from NVML: ")) << (*lc)->description();
  (*lc)->ScrapeNow(7000);
  std::set<std::string> gpus;
  for (const auto& [labels, samples] : All(head)) {
    if (!labels.Get("__name__").starts_with("gpu_")) continue;
    EXPECT_EQ(labels.Get("simulated"), "") << labels.ToString();
    EXPECT_EQ(labels.Get("job"), "gpumon-agent");
    gpus.insert(std::string(labels.Get("gpu")));
  }
  EXPECT_EQ(gpus.size(), (*lc)->gpus());
}

TEST(LocalCollectionTest, RejectsNothingToCollect) {
  LocalCollectionOptions o;
  o.collect_node = false;
  EXPECT_FALSE(StartLocalCollection(o, {}).ok());
  o.collect_node = true;
  o.interval_ms = 0;
  EXPECT_FALSE(StartLocalCollection(o, {}).ok());
}

}  // namespace
}  // namespace gpumon::cli
