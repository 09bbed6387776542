#include "ingest/push_store.h"

#include <gtest/gtest.h>

#include "exposition/parser.h"
#include "exposition/text_writer.h"

namespace gpumon::ingest {
namespace {

using exposition::Format;
using exposition::MetricFamily;

std::vector<MetricFamily> Parse(std::string_view text) {
  auto parsed = exposition::ParseToFamilies(text, Format::kText004);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return parsed.ok() ? std::move(parsed).value() : std::vector<MetricFamily>{};
}

std::string Render(const PushStore& store, Format format = Format::kText004,
                   GpuLabelNames names = {}) {
  std::string out;
  store.AppendText(names, format, &out);
  return out;
}

// The lines of `text` that are samples of `name` (name followed by { or space).
std::vector<std::string> SampleLines(const std::string& text, const std::string& name) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end - pos);
    if (line.rfind(name + "{", 0) == 0 || line.rfind(name + " ", 0) == 0) lines.push_back(line);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return lines;
}

const Labels kTrain0{{"job", "train"}, {"rank", "0"}};
const Labels kTrain1{{"job", "train"}, {"rank", "1"}};

TEST(PushStoreTest, ReplaceAddsGroupingLabelsAndPushTime) {
  PushStore store;
  auto t = PushStore::Clock::time_point(std::chrono::seconds(1'700'000'001));
  ASSERT_TRUE(store
                  .Push(kTrain0, Parse("# TYPE loss gauge\nloss{phase=\"a\"} 0.5\n"),
                        PushMode::kReplace, {}, t)
                  .ok());
  std::string out = Render(store);
  EXPECT_EQ(SampleLines(out, "loss"),
            std::vector<std::string>{"loss{job=\"train\",phase=\"a\",rank=\"0\"} 0.5"});
  EXPECT_EQ(SampleLines(out, "push_time_seconds"),
            std::vector<std::string>{"push_time_seconds{job=\"train\",rank=\"0\"} 1700000001"});
  EXPECT_EQ(SampleLines(out, "push_failure_time_seconds"),
            std::vector<std::string>{"push_failure_time_seconds{job=\"train\",rank=\"0\"} 0"});
  EXPECT_NE(out.find("# TYPE loss gauge\n"), std::string::npos);
  auto stats = store.stats();
  EXPECT_EQ(stats.groups, 1u);
  EXPECT_EQ(stats.series, 1u);
  EXPECT_EQ(stats.pushes_accepted, 1u);
}

TEST(PushStoreTest, PutReplacesGroupPostReplacesOnlyPushedFamilies) {
  PushStore store;
  ASSERT_TRUE(store.Push(kTrain0, Parse("a 1\nb 2\n"), PushMode::kReplace, {}).ok());
  ASSERT_TRUE(store.Push(kTrain0, Parse("b 3\nc 4\n"), PushMode::kMerge, {}).ok());
  std::string out = Render(store);
  EXPECT_EQ(SampleLines(out, "a").size(), 1u);
  EXPECT_EQ(SampleLines(out, "b"), std::vector<std::string>{"b{job=\"train\",rank=\"0\"} 3"});
  EXPECT_EQ(SampleLines(out, "c").size(), 1u);
  ASSERT_TRUE(store.Push(kTrain0, Parse("c 5\n"), PushMode::kReplace, {}).ok());
  out = Render(store);
  EXPECT_TRUE(SampleLines(out, "a").empty());
  EXPECT_TRUE(SampleLines(out, "b").empty());
  EXPECT_EQ(SampleLines(out, "c"), std::vector<std::string>{"c{job=\"train\",rank=\"0\"} 5"});
  EXPECT_EQ(store.stats().series, 1u);
}

TEST(PushStoreTest, EmptyPutKeepsGroupWithPushTimeOnly) {
  PushStore store;
  auto t0 = PushStore::Clock::time_point(std::chrono::seconds(1000));
  ASSERT_TRUE(store.Push(kTrain0, Parse("a 1\n"), PushMode::kReplace, {}, t0).ok());
  ASSERT_TRUE(store.Push(kTrain0, {}, PushMode::kReplace, {}, t0 + std::chrono::seconds(5)).ok());
  std::string out = Render(store);
  EXPECT_TRUE(SampleLines(out, "a").empty());
  EXPECT_EQ(SampleLines(out, "push_time_seconds"),
            std::vector<std::string>{"push_time_seconds{job=\"train\",rank=\"0\"} 1005"});
  EXPECT_EQ(store.stats().groups, 1u);
  EXPECT_EQ(store.stats().series, 0u);
}

TEST(PushStoreTest, FamiliesMergeAcrossGroupsAndHistogramsStayOneFamily) {
  PushStore store;
  const char* hist =
      "# HELP step_seconds Step time.\n# TYPE step_seconds histogram\n"
      "step_seconds_bucket{le=\"1\"} 1\nstep_seconds_bucket{le=\"+Inf\"} 2\n"
      "step_seconds_sum 3\nstep_seconds_count 2\n";
  ASSERT_TRUE(store.Push(kTrain0, Parse(hist), PushMode::kReplace, {}).ok());
  ASSERT_TRUE(store.Push(kTrain1, Parse(hist), PushMode::kReplace, {}).ok());
  std::string out = Render(store);
  size_t first = out.find("# TYPE step_seconds histogram\n");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_EQ(out.find("# TYPE step_seconds", first + 1), std::string::npos) << out;
  EXPECT_EQ(out.find("# TYPE step_seconds_bucket"), std::string::npos) << out;
  EXPECT_EQ(SampleLines(out, "step_seconds_bucket").size(), 4u);
  EXPECT_EQ(SampleLines(out, "step_seconds_count").size(), 2u);
  // Each group's histogram samples are contiguous.
  EXPECT_LT(out.find("step_seconds_count{job=\"train\",rank=\"0\"}"),
            out.find("step_seconds_bucket{job=\"train\",le=\"1\",rank=\"1\"}"));
  std::vector<MetricFamily> flat;
  store.AppendFamilies({}, &flat);
  size_t buckets = 0;
  for (const auto& f : flat) {
    if (f.name == "step_seconds_bucket") buckets += f.samples.size();
  }
  EXPECT_EQ(buckets, 4u);
  // The whole output parses back as one histogram family per component.
  auto back = exposition::ParseToFamilies(out, Format::kText004);
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << out;
  // OpenMetrics too.
  std::string om = Render(store, Format::kOpenMetrics1) + "# EOF\n";
  auto om_back = exposition::ParseToFamilies(om, Format::kOpenMetrics1);
  ASSERT_TRUE(om_back.ok()) << om_back.status().message() << "\n" << om;
  // Merge replaces the histogram as a whole.
  ASSERT_TRUE(store
                  .Push(kTrain0, Parse("# TYPE step_seconds histogram\nstep_seconds_count 7\n"),
                        PushMode::kMerge, {})
                  .ok());
  out = Render(store);
  EXPECT_EQ(SampleLines(out, "step_seconds_bucket").size(), 2u);  // only rank 1's
  EXPECT_EQ(store.stats().series, 5u);
}

TEST(PushStoreTest, TypeConflictsAcrossGroupsAreRejectedAndChangeNothing) {
  PushStore store;
  ASSERT_TRUE(store.Push(kTrain0, Parse("# TYPE x gauge\nx 1\n"), PushMode::kReplace, {}).ok());
  std::string before = Render(store);
  Status s = store.Push(kTrain1, Parse("# TYPE x counter\nx 1\n"), PushMode::kReplace, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("metric family x"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("gauge"), std::string::npos) << s.message();
  EXPECT_EQ(Render(store), before);
  EXPECT_EQ(store.stats().pushes_rejected, 1u);
  // A gauge x_sum beside a histogram x elsewhere collides on its sample name.
  ASSERT_TRUE(
      store.Push(kTrain0, Parse("# TYPE h histogram\nh_sum 1\nh_count 1\n"), PushMode::kMerge, {})
          .ok());
  s = store.Push(kTrain1, Parse("# TYPE h_sum gauge\nh_sum 1\n"), PushMode::kReplace, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("h_sum"), std::string::npos) << s.message();
  // The same group may change a family's type with PUT: the old one goes.
  ASSERT_TRUE(store
                  .Push(kTrain0, Parse("# TYPE x counter\nx 2\n# TYPE h gauge\nh 1\n"),
                        PushMode::kReplace, {})
                  .ok());
  // ... and then rank 1 may push the gauge h_sum.
  EXPECT_TRUE(
      store.Push(kTrain1, Parse("# TYPE h_sum gauge\nh_sum 1\n"), PushMode::kReplace, {}).ok());
}

TEST(PushStoreTest, GroupingLabelConflictsAndReservedNames) {
  PushStore store;
  store.ReserveNamePrefixes({"gpu_"}, {});
  Status s = store.Push(kTrain0, Parse("a{rank=\"1\"} 1\n"), PushMode::kReplace, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("conflicts with the grouping label rank=\"0\""), std::string::npos)
      << s.message();
  // The same value is redundant, not a conflict.
  ASSERT_TRUE(store.Push(kTrain0, Parse("a{rank=\"0\"} 1\n"), PushMode::kReplace, {}).ok());
  EXPECT_EQ(SampleLines(Render(store), "a"),
            std::vector<std::string>{"a{job=\"train\",rank=\"0\"} 1"});
  for (const char* body :
       {"push_time_seconds 1\n", "gpumon_job_gpu_info 1\n", "gpu_temperature_celsius 50\n"}) {
    s = store.Push(kTrain0, Parse(body), PushMode::kMerge, {});
    EXPECT_FALSE(s.ok()) << body;
  }
  EXPECT_FALSE(store.Push(Labels{{"rank", "0"}}, {}, PushMode::kReplace, {}).ok());
  s = store.Push(kTrain0, Parse("d 1\nd 2\n"), PushMode::kReplace, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("more than once"), std::string::npos) << s.message();
}

TEST(PushStoreTest, LimitsRejectWithClearMessages) {
  PushLimits limits;
  limits.max_series_per_group = 3;
  limits.max_series_total = 4;
  limits.max_labels_per_series = 4;
  limits.max_groups = 2;
  PushStore store(limits);
  Status s = store.Push(kTrain0, Parse("a 1\nb 1\nc 1\nd 1\n"), PushMode::kReplace, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("max_series_per_group 3"), std::string::npos) << s.message();
  ASSERT_TRUE(store.Push(kTrain0, Parse("a 1\nb 1\nc 1\n"), PushMode::kReplace, {}).ok());
  s = store.Push(kTrain1, Parse("a 1\nb 1\n"), PushMode::kReplace, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("max_series 4"), std::string::npos) << s.message();
  // A merge that replaces a family frees its series.
  EXPECT_TRUE(store.Push(kTrain0, Parse("a{x=\"1\"} 1\n"), PushMode::kMerge, {}).ok());
  s = store.Push(kTrain1, Parse("a{x=\"1\",y=\"2\",z=\"3\"} 1\n"), PushMode::kReplace, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("max_labels_per_series 4"), std::string::npos) << s.message();
  ASSERT_TRUE(store.Push(kTrain1, Parse("a 1\n"), PushMode::kReplace, {}).ok());
  s = store.Push(Labels{{"job", "third"}}, Parse("a 1\n"), PushMode::kReplace, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("max_groups"), std::string::npos) << s.message();
  EXPECT_EQ(store.stats().series, 4u);
  EXPECT_EQ(store.stats().pushes_rejected, 4u);
}

TEST(PushStoreTest, FailedPushSetsFailureTime) {
  PushStore store;
  auto t = PushStore::Clock::time_point(std::chrono::seconds(2000));
  ASSERT_TRUE(store.Push(kTrain0, Parse("a 1\n"), PushMode::kReplace, {}, t).ok());
  ASSERT_FALSE(store
                   .Push(kTrain0, Parse("a{job=\"x\"} 1\n"), PushMode::kReplace, {},
                         t + std::chrono::seconds(3))
                   .ok());
  std::string out = Render(store);
  EXPECT_EQ(SampleLines(out, "push_failure_time_seconds"),
            std::vector<std::string>{"push_failure_time_seconds{job=\"train\",rank=\"0\"} 2003"});
  EXPECT_EQ(SampleLines(out, "a").size(), 1u);
}

TEST(PushStoreTest, DeleteAndExpiry) {
  PushLimits limits;
  limits.expiry = std::chrono::seconds(60);
  PushStore store(limits);
  auto t = PushStore::Clock::time_point(std::chrono::seconds(10'000));
  ASSERT_TRUE(store.Push(kTrain0, Parse("a 1\n"), PushMode::kReplace, {}, t).ok());
  ASSERT_TRUE(
      store.Push(kTrain1, Parse("a 1\n"), PushMode::kReplace, {}, t + std::chrono::seconds(30))
          .ok());
  uint64_t gen = store.generation();
  EXPECT_EQ(store.ExpireStale(t + std::chrono::seconds(60)), 0u);
  EXPECT_EQ(store.generation(), gen);
  EXPECT_EQ(store.ExpireStale(t + std::chrono::seconds(61)), 1u);
  EXPECT_NE(store.generation(), gen);
  EXPECT_EQ(store.stats().groups_expired, 1u);
  EXPECT_EQ(SampleLines(Render(store), "a"),
            std::vector<std::string>{"a{job=\"train\",rank=\"1\"} 1"});
  EXPECT_TRUE(store.Delete(kTrain1));
  EXPECT_FALSE(store.Delete(kTrain1));
  EXPECT_EQ(Render(store), "");
  EXPECT_EQ(store.stats().series, 0u);
  // A family name freed by expiry and delete may take another type.
  EXPECT_TRUE(store.Push(kTrain0, Parse("# TYPE a counter\na 1\n"), PushMode::kReplace, {}).ok());

  PushLimits never;
  never.expiry = std::chrono::seconds(0);
  PushStore forever(never);
  ASSERT_TRUE(forever.Push(kTrain0, Parse("a 1\n"), PushMode::kReplace, {}, t).ok());
  EXPECT_EQ(forever.ExpireStale(t + std::chrono::hours(24 * 365)), 0u);
}

TEST(PushStoreTest, PlacementLabelsWhenExactlyOneGpu) {
  PushStore store;
  JobPlacement one;
  one.pid = 42;
  one.gpus = {{3, "GPU-abc"}};
  ASSERT_TRUE(store.Push(kTrain0, Parse("a 1\nb{gpu=\"7\"} 1\n"), PushMode::kReplace, one).ok());
  JobPlacement two;
  two.gpus = {{0, "GPU-0"}, {1, "GPU-1"}};
  ASSERT_TRUE(store.Push(kTrain1, Parse("a 1\n"), PushMode::kReplace, two).ok());
  GpuLabelNames dcgm{"Hostname", "gpu", "UUID", "node-1"};
  std::string out = Render(store, Format::kText004, dcgm);
  EXPECT_EQ(SampleLines(out, "a"),
            (std::vector<std::string>{
                "a{Hostname=\"node-1\",UUID=\"GPU-abc\",gpu=\"3\",job=\"train\",rank=\"0\"} 1",
                "a{job=\"train\",rank=\"1\"} 1"}));
  // The sample's own gpu label wins.
  EXPECT_EQ(SampleLines(out, "b"),
            std::vector<std::string>{
                "b{Hostname=\"node-1\",UUID=\"GPU-abc\",gpu=\"7\",job=\"train\",rank=\"0\"} 1"});
  EXPECT_EQ(SampleLines(out, "gpumon_job_gpu_info"),
            (std::vector<std::string>{
                "gpumon_job_gpu_info{Hostname=\"node-1\",UUID=\"GPU-abc\",gpu=\"3\",job=\"train\","
                "rank=\"0\"} 1",
                "gpumon_job_gpu_info{Hostname=\"node-1\",UUID=\"GPU-0\",gpu=\"0\",job=\"train\","
                "rank=\"1\"} 1",
                "gpumon_job_gpu_info{Hostname=\"node-1\",UUID=\"GPU-1\",gpu=\"1\",job=\"train\","
                "rank=\"1\"} 1"}));
}

TEST(PushStoreTest, FamilyNames) {
  using exposition::MetricType;
  EXPECT_EQ(PushFamilyName("x_bucket", MetricType::kHistogram), "x");
  EXPECT_EQ(PushFamilyName("x_count", MetricType::kSummary), "x");
  EXPECT_EQ(PushFamilyName("x", MetricType::kSummary), "x");
  EXPECT_EQ(PushFamilyName("x_gsum", MetricType::kGaugeHistogram), "x");
  EXPECT_EQ(PushFamilyName("x_created", MetricType::kCounter), "x_total");
  EXPECT_EQ(PushFamilyName("x_total", MetricType::kCounter), "x_total");
  EXPECT_EQ(PushFamilyName("x_count", MetricType::kGauge), "x_count");
}

TEST(PushStoreTest, SelfMetrics) {
  PushStore store;
  ASSERT_TRUE(store.Push(kTrain0, Parse("a 1\nb 2\n"), PushMode::kReplace, {}).ok());
  store.CountRejected();
  std::vector<MetricFamily> families;
  AppendPushStoreMetrics(store.stats(), &families);
  std::string out;
  exposition::AppendFamilies(families, Format::kText004, &out);
  EXPECT_NE(out.find("gpumon_push_groups 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpumon_push_series 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpumon_pushes_total{result=\"accepted\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpumon_pushes_total{result=\"rejected\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpumon_push_groups_expired_total 0\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpumon::ingest
