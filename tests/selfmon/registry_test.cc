// The self-metrics registry: instruments, validation, callback families
// and rendering, checked by parsing the output with the exposition parser.
#include "selfmon/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <thread>

#include "exposition/parser.h"

namespace gpumon::selfmon {
namespace {

using exposition::Format;
using exposition::MetricType;

// Parsed output: "name{a="b",...}" (labels in output order) → value, plus
// the declared type and help per family.
struct Parsed {
  std::map<std::string, double> values;
  std::map<std::string, MetricType> types;
  std::map<std::string, std::string> help;
  std::vector<std::string> order;  // sample keys in output order
};

Parsed Parse(const std::string& text, Format format = Format::kText004) {
  Parsed p;
  exposition::Parser parser(text, format);
  exposition::Entry e;
  for (;;) {
    Status s = parser.Next(e);
    EXPECT_TRUE(s.ok()) << s.message() << "\n" << text;
    if (!s.ok() || e.kind == exposition::EntryKind::kEof) break;
    if (e.kind == exposition::EntryKind::kType) p.types[std::string(e.name)] = e.type;
    if (e.kind == exposition::EntryKind::kHelp) p.help[std::string(e.name)] = std::string(e.text);
    if (e.kind != exposition::EntryKind::kSample) continue;
    std::string key(e.name);
    if (!e.labels.empty()) {
      key += "{";
      for (size_t i = 0; i < e.labels.size(); ++i) {
        if (i) key += ",";
        key += std::string(e.labels[i].name) + "=\"" + std::string(e.labels[i].value) + "\"";
      }
      key += "}";
    }
    EXPECT_FALSE(p.values.count(key)) << "duplicate sample " << key;
    p.values[key] = e.value;
    p.order.push_back(key);
  }
  return p;
}

TEST(RegistryTest, CountersAndGaugesWithLabels) {
  Registry r;
  auto reqs = r.AddCounter("app_requests_total", "Requests handled.", {"method", "code"});
  ASSERT_TRUE(reqs.ok()) << reqs.status().message();
  auto temp = r.AddGauge("app_temperature_celsius", "Current temperature.");
  ASSERT_TRUE(temp.ok());
  (*reqs)->With({"GET", "200"}).Inc();
  (*reqs)->With({"GET", "200"}).Inc(2.5);
  (*reqs)->With({"POST", "500"}).Inc();
  (*reqs)->With({"POST", "500"}).Inc(-4);  // ignored: counters only go up
  (*temp)->Get().Set(41.5);
  (*temp)->Get().Dec();

  Parsed p = Parse(r.Render());
  EXPECT_EQ(p.values["app_requests_total{method=\"GET\",code=\"200\"}"], 3.5);
  EXPECT_EQ(p.values["app_requests_total{method=\"POST\",code=\"500\"}"], 1);
  EXPECT_EQ(p.values["app_temperature_celsius"], 40.5);
  EXPECT_EQ(p.types["app_requests_total"], MetricType::kCounter);
  EXPECT_EQ(p.types["app_temperature_celsius"], MetricType::kGauge);
  EXPECT_EQ(p.help["app_requests_total"], "Requests handled.");
  // Families sorted by name, children by label values.
  ASSERT_EQ(p.order.size(), 3u);
  EXPECT_EQ(p.order[0], "app_requests_total{method=\"GET\",code=\"200\"}");
  EXPECT_EQ(p.order[2], "app_temperature_celsius");
}

TEST(RegistryTest, LabelValuesAreEscapedAndPositional) {
  Registry r;
  auto f = r.AddGauge("g", "A gauge.", {"a", "b"});
  ASSERT_TRUE(f.ok());
  (*f)->With({"quote\" back\\slash\nnewline"}).Set(1);  // b missing: empty
  (*f)->With({"x", "y", "extra"}).Set(2);               // extra value ignored
  Parsed p = Parse(r.Render());
  EXPECT_EQ(p.values["g{a=\"quote\" back\\slash\nnewline\",b=\"\"}"], 1);
  EXPECT_EQ(p.values["g{a=\"x\",b=\"y\"}"], 2);
  EXPECT_EQ(p.values.size(), 2u);
}

TEST(RegistryTest, HistogramBucketsAreCumulativeAndInclusive) {
  Registry r;
  auto h = r.AddHistogram("op_duration_seconds", "Operation time.", {"op"}, {0.1, 1, 10});
  ASSERT_TRUE(h.ok()) << h.status().message();
  Histogram& read = (*h)->With({"read"});
  for (double v : {0.05, 0.1, 0.5, 1.0, 3.0, 100.0}) read.Observe(v);
  (*h)->With({"write"}).Observe(20);

  Parsed p = Parse(r.Render());
  EXPECT_EQ(p.types["op_duration_seconds"], MetricType::kHistogram);
  // le is an upper bound, inclusive: 0.1 counts in le="0.1", 1.0 in le="1".
  EXPECT_EQ(p.values["op_duration_seconds_bucket{op=\"read\",le=\"0.1\"}"], 2);
  EXPECT_EQ(p.values["op_duration_seconds_bucket{op=\"read\",le=\"1\"}"], 4);
  EXPECT_EQ(p.values["op_duration_seconds_bucket{op=\"read\",le=\"10\"}"], 5);
  EXPECT_EQ(p.values["op_duration_seconds_bucket{op=\"read\",le=\"+Inf\"}"], 6);
  EXPECT_EQ(p.values["op_duration_seconds_count{op=\"read\"}"], 6);
  EXPECT_DOUBLE_EQ(p.values["op_duration_seconds_sum{op=\"read\"}"], 104.65);
  EXPECT_EQ(p.values["op_duration_seconds_bucket{op=\"write\",le=\"10\"}"], 0);
  EXPECT_EQ(p.values["op_duration_seconds_bucket{op=\"write\",le=\"+Inf\"}"], 1);

  Histogram::Snapshot s = read.Read();
  EXPECT_EQ(s.count, s.cumulative.back());
}

TEST(RegistryTest, BucketHelpers) {
  EXPECT_EQ(ExponentialBuckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
  auto d = DefaultBuckets();
  EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
  EXPECT_EQ(d.back(), 10);
}

TEST(RegistryTest, CallbackFamiliesAreEvaluatedAtRenderTime) {
  Registry r;
  double series = 10;
  int hook_calls = 0;
  int seen_hook_calls = -1;
  r.AddPreCollectHook([&] { ++hook_calls; });
  ASSERT_TRUE(r.AddGaugeFunc("head_series", "Series in the head.", [&] {
                 seen_hook_calls = hook_calls;
                 return series;
               }).ok());
  ASSERT_TRUE(r.AddCounterFunc("shard_writes_total", "Writes per shard.", {"shard"},
                               [](std::vector<CallbackSample>* out) {
                                 out->push_back({{"b"}, 2});
                                 out->push_back({{"a"}, 1});
                                 out->push_back({{"a"}, 99});  // duplicate: first wins
                               })
                  .ok());
  Parsed p1 = Parse(r.Render());
  EXPECT_EQ(p1.values["head_series"], 10);
  EXPECT_EQ(seen_hook_calls, 1);  // the hook ran before the callback
  series = 25;
  Parsed p2 = Parse(r.Render());
  EXPECT_EQ(p2.values["head_series"], 25);
  EXPECT_EQ(hook_calls, 2);
  EXPECT_EQ(p2.values["shard_writes_total{shard=\"a\"}"], 1);
  EXPECT_EQ(p2.values["shard_writes_total{shard=\"b\"}"], 2);
  EXPECT_EQ(p2.types["shard_writes_total"], MetricType::kCounter);
}

TEST(RegistryTest, FamiliesWithoutSamplesAreLeftOut) {
  Registry r;
  ASSERT_TRUE(r.AddCounter("unused_total", "Never incremented.", {"x"}).ok());
  ASSERT_TRUE(r.AddHistogram("unused_seconds", "Never observed.", {"x"}, {1}).ok());
  ASSERT_TRUE(
      r.AddGaugeFunc("absent", "Nothing to report.", {}, [](std::vector<CallbackSample>*) {}).ok());
  EXPECT_EQ(r.Render(), "");
}

TEST(RegistryTest, RejectsInvalidFamilies) {
  Registry r;
  EXPECT_FALSE(r.AddCounter("requests", "No _total suffix.").ok());
  EXPECT_FALSE(r.AddGauge("0bad", "Starts with a digit.").ok());
  EXPECT_FALSE(r.AddGauge("bad-name", "Dash.").ok());
  EXPECT_FALSE(r.AddGauge("no_help", "").ok());
  EXPECT_FALSE(r.AddGauge("g", "Reserved label.", {"__name__"}).ok());
  EXPECT_FALSE(r.AddGauge("g", "Bad label.", {"a-b"}).ok());
  EXPECT_FALSE(r.AddGauge("g", "Duplicate label.", {"a", "a"}).ok());
  EXPECT_FALSE(r.AddHistogram("h", "le is reserved.", {"le"}, {1}).ok());
  EXPECT_FALSE(r.AddHistogram("h", "Unsorted.", {}, {2, 1}).ok());
  EXPECT_FALSE(r.AddHistogram("h", "Infinite bound.", {}, {1, INFINITY}).ok());
  EXPECT_FALSE(r.AddHistogram("h", "No buckets.", {}, {}).ok());
  ASSERT_TRUE(r.AddGauge("g", "A gauge.").ok());
  Status dup = r.AddGaugeFunc("g", "Same name.", {}, [](std::vector<CallbackSample>*) {});
  EXPECT_FALSE(dup.ok());
  EXPECT_NE(dup.message().find("already registered"), std::string::npos) << dup.message();
  EXPECT_NE(r.AddCounter("requests", "x").status().message().find("\"requests\""),
            std::string::npos);
}

TEST(RegistryTest, OpenMetricsOutputParses) {
  Registry r;
  r.AddCounter("jobs_total", "Jobs run.", {"kind"}).value()->With({"batch"}).Inc(3);
  r.AddHistogram("wait_seconds", "Wait time.", {}, {1, 2}).value()->Get().Observe(1.5);
  r.AddGauge("queue_bytes", "Queued bytes.").value()->Get().Set(512);
  const std::string om = r.Render(Format::kOpenMetrics1);
  EXPECT_TRUE(om.ends_with("# EOF\n")) << om;
  Parsed p = Parse(om, Format::kOpenMetrics1);
  EXPECT_EQ(p.values["jobs_total{kind=\"batch\"}"], 3);
  EXPECT_EQ(p.values["wait_seconds_bucket{le=\"2\"}"], 1);
  EXPECT_EQ(p.values["wait_seconds_bucket{le=\"1\"}"], 0);
  EXPECT_EQ(p.values["queue_bytes"], 512);
  EXPECT_EQ(p.types["jobs"], MetricType::kCounter);
}

TEST(RegistryTest, ConcurrentUpdatesAreNotLost) {
  Registry r;
  CounterFamily* c = r.AddCounter("hits_total", "Hits.", {"worker"}).value();
  HistogramFamily* h = r.AddHistogram("lat_seconds", "Latency.", {}, {0.5}).value();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        c->With({"shared"}).Inc();
        c->With({std::to_string(t)}).Inc();
        h->Get().Observe(i % 2 ? 0.25 : 0.75);
      }
    });
  }
  std::thread renderer([&] {
    for (int i = 0; i < 20; ++i) r.Render();
  });
  for (auto& t : threads) t.join();
  renderer.join();
  Parsed p = Parse(r.Render());
  EXPECT_EQ(p.values["hits_total{worker=\"shared\"}"], kThreads * kPerThread);
  EXPECT_EQ(p.values["hits_total{worker=\"2\"}"], kPerThread);
  EXPECT_EQ(p.values["lat_seconds_count"], kThreads * kPerThread);
  EXPECT_EQ(p.values["lat_seconds_bucket{le=\"0.5\"}"], kThreads * kPerThread / 2);
}

}  // namespace
}  // namespace gpumon::selfmon
