// OTLP → Prometheus translation: names and units, resource attributes
// (grouping labels, promoted attributes, target_info), every point type,
// DELTA accumulation through the accumulator's transactions, rejections
// and malformed input. Requests are built with the generated protobuf
// classes, the same wire format an SDK exporter sends.
#include "ingest/otlp_decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ingest/otlp_delta.h"
#include "ingest/otlp_names.h"
#include "proto/otlp_metrics.pb.h"

namespace gpumon::ingest {
namespace {

using exposition::MetricFamily;
using exposition::MetricType;

void Attr(google::protobuf::RepeatedPtrField<otlp::KeyValue>* attrs, const std::string& key,
          const std::string& value) {
  otlp::KeyValue* kv = attrs->Add();
  kv->set_key(key);
  kv->mutable_value()->set_string_value(value);
}

void IntAttr(google::protobuf::RepeatedPtrField<otlp::KeyValue>* attrs, const std::string& key,
             int64_t value) {
  otlp::KeyValue* kv = attrs->Add();
  kv->set_key(key);
  kv->mutable_value()->set_int_value(value);
}

// A resource with service.name and the given extra string attributes.
otlp::ResourceMetrics* Resource(otlp::ExportMetricsServiceRequest* req, const std::string& service,
                                std::vector<std::pair<std::string, std::string>> attrs = {}) {
  otlp::ResourceMetrics* rm = req->add_resource_metrics();
  if (!service.empty()) Attr(rm->mutable_resource()->mutable_attributes(), "service.name", service);
  for (auto& [k, v] : attrs) Attr(rm->mutable_resource()->mutable_attributes(), k, v);
  return rm;
}

otlp::Metric* AddMetric(otlp::ResourceMetrics* rm, const std::string& name,
                        const std::string& unit = "") {
  if (rm->scope_metrics_size() == 0) rm->add_scope_metrics()->mutable_scope()->set_name("test");
  otlp::Metric* m = rm->mutable_scope_metrics(0)->add_metrics();
  m->set_name(name);
  m->set_unit(unit);
  m->set_description("help of " + name);
  return m;
}

otlp::NumberDataPoint* Point(google::protobuf::RepeatedPtrField<otlp::NumberDataPoint>* points,
                             double value,
                             std::vector<std::pair<std::string, std::string>> attrs = {}) {
  otlp::NumberDataPoint* p = points->Add();
  p->set_as_double(value);
  p->set_time_unix_nano(1'700'000'000'000'000'000ull);
  for (auto& [k, v] : attrs) Attr(p->mutable_attributes(), k, v);
  return p;
}

otlp::HistogramDataPoint* HistPoint(otlp::Histogram* h, std::vector<double> bounds,
                                    std::vector<uint64_t> counts, double sum,
                                    std::vector<std::pair<std::string, std::string>> attrs = {}) {
  otlp::HistogramDataPoint* p = h->add_data_points();
  uint64_t total = 0;
  for (double b : bounds) p->add_explicit_bounds(b);
  for (uint64_t c : counts) {
    p->add_bucket_counts(c);
    total += c;
  }
  p->set_count(total);
  p->set_sum(sum);
  for (auto& [k, v] : attrs) Attr(p->mutable_attributes(), k, v);
  return p;
}

std::string Render(const std::vector<exposition::Label>& labels) {
  std::string s = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) s += ",";
    s += labels[i].name + "=\"" + labels[i].value + "\"";
  }
  return s + "}";
}

const MetricFamily* FindFamily(const OtlpGroup& g, const std::string& name) {
  for (const MetricFamily& f : g.families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// The value of `name{labels}` in the group (labels rendered sorted), NaN
// when absent.
double Value(const OtlpGroup& g, const std::string& name, const std::string& labels = "{}") {
  const MetricFamily* f = FindFamily(g, name);
  if (!f) return std::nan("");
  for (const auto& s : f->samples) {
    if (Render(s.labels) == labels) return s.value;
  }
  return std::nan("");
}

class OtlpDecoderTest : public ::testing::Test {
 protected:
  OtlpTranslation Translate(const otlp::ExportMetricsServiceRequest& req, bool commit = true) {
    auto txn = acc_.Begin();
    Result<OtlpTranslation> r = TranslateOtlpRequest(req, options_, txn);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return {};
    if (commit) {
      for (const OtlpGroup& g : r->groups) txn.Commit(g.grouping);
    }
    return std::move(r).value();
  }

  OtlpDecodeOptions options_;
  OtlpDeltaAccumulator acc_;
};

TEST(OtlpNamesTest, MetricNamesFollowPrometheusTranslation) {
  EXPECT_EQ(OtlpMetricName("http.server.duration", "ms", OtlpNameKind::kOther),
            "http_server_duration_milliseconds");
  EXPECT_EQ(OtlpMetricName("http.server.requests", "{request}", OtlpNameKind::kCounter),
            "http_server_requests_total");
  EXPECT_EQ(OtlpMetricName("requests.total.count", "", OtlpNameKind::kCounter),
            "requests_count_total");
  EXPECT_EQ(OtlpMetricName("gpu.utilization", "1", OtlpNameKind::kGauge), "gpu_utilization_ratio");
  EXPECT_EQ(OtlpMetricName("gpu.utilization", "1", OtlpNameKind::kOther), "gpu_utilization");
  EXPECT_EQ(OtlpMetricName("net.io", "By/s", OtlpNameKind::kCounter),
            "net_io_bytes_per_second_total");
  EXPECT_EQ(OtlpMetricName("step.time_seconds", "s", OtlpNameKind::kOther), "step_time_seconds");
  EXPECT_EQ(OtlpMetricName("memory", "MiBy", OtlpNameKind::kGauge), "memory_mebibytes");
  EXPECT_EQ(OtlpMetricName("temp", "Cel", OtlpNameKind::kGauge), "temp_celsius");
  EXPECT_EQ(OtlpMetricName("odd", "m{x}/s", OtlpNameKind::kGauge), "odd_per_second")
      << "only the braced part is dropped";
  EXPECT_EQ(OtlpMetricName("tokens", "{token}/s", OtlpNameKind::kGauge), "tokens_per_second");
  EXPECT_EQ(OtlpMetricName("a--b__c", "", OtlpNameKind::kGauge), "a_b_c");
  EXPECT_EQ(OtlpMetricName("2xx.responses", "", OtlpNameKind::kGauge), "_2xx_responses");
  EXPECT_EQ(OtlpMetricName("vllm:num_requests", "", OtlpNameKind::kGauge), "vllm:num_requests");
  EXPECT_EQ(OtlpMetricName("weird", "foo.bar", OtlpNameKind::kGauge), "weird_foo_bar");
  EXPECT_EQ(OtlpMetricName("...", "s", OtlpNameKind::kGauge), "");
  EXPECT_EQ(OtlpUnitSuffix("By/s"), "bytes_per_second");
  EXPECT_EQ(OtlpUnitSuffix("s"), "seconds");
  EXPECT_EQ(OtlpUnitSuffix("{request}"), "");
}

TEST(OtlpNamesTest, LabelNamesAreSanitised) {
  EXPECT_EQ(OtlpLabelName("http.method"), "http_method");
  EXPECT_EQ(OtlpLabelName("gen_ai.token.type"), "gen_ai_token_type");
  EXPECT_EQ(OtlpLabelName("2xx"), "key_2xx");
  EXPECT_EQ(OtlpLabelName("_private"), "key_private");
  EXPECT_EQ(OtlpLabelName("__name__"), "key__name__");
  EXPECT_EQ(OtlpLabelName("\xc3\xbcn\xc3\xaf"), "key__n__");  // ü and ï: two bytes each
  EXPECT_EQ(OtlpLabelName(""), "");
}

TEST(OtlpNamesTest, FloatsAreWrittenWithoutExponent) {
  EXPECT_EQ(OtlpFormatFloat(0.005), "0.005");
  EXPECT_EQ(OtlpFormatFloat(1e6), "1000000");
  EXPECT_EQ(OtlpFormatFloat(2.5), "2.5");
  EXPECT_EQ(OtlpFormatFloat(-1), "-1");
  EXPECT_EQ(OtlpFormatFloat(std::numeric_limits<double>::infinity()), "+Inf");
}

TEST_F(OtlpDecoderTest, ResourceBecomesGroupingLabelsAndTargetInfo) {
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "trainer",
                                       {{"service.namespace", "team-a"},
                                        {"service.instance.id", "pod-7"},
                                        {"node", "host1"},
                                        {"telemetry.sdk.language", "nodejs"},
                                        {"host.arch", "amd64"}});
  IntAttr(rm->mutable_resource()->mutable_attributes(), "rank", 3);
  IntAttr(rm->mutable_resource()->mutable_attributes(), "process.pid", 4242);
  Point(AddMetric(rm, "training.loss")->mutable_gauge()->mutable_data_points(), 0.25);

  OtlpTranslation t = Translate(req);
  ASSERT_EQ(t.groups.size(), 1u);
  const OtlpGroup& g = t.groups[0];
  EXPECT_EQ(g.grouping.ToString(),
            "{instance=\"pod-7\", job=\"team-a/trainer\", node=\"host1\", rank=\"3\"}");
  ASSERT_TRUE(g.pid.has_value());
  EXPECT_EQ(*g.pid, 4242);
  EXPECT_EQ(Value(g, "training_loss"), 0.25);
  EXPECT_EQ(Value(g, "target_info",
                  "{host_arch=\"amd64\",process_pid=\"4242\",telemetry_sdk_language=\"nodejs\"}"),
            1);
  EXPECT_EQ(g.points, 1);
  EXPECT_EQ(t.rejected_points, 0);
  EXPECT_TRUE(t.messages.empty());
  const MetricFamily* f = FindFamily(g, "training_loss");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->help, "help of training.loss");
}

TEST_F(OtlpDecoderTest, JobWithoutServiceAndPromotionConfigurable) {
  options_.promoted_resource_attributes = {"k8s.pod.name"};
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "", {{"k8s.pod.name", "p1"}, {"rank", "0"}});
  Point(AddMetric(rm, "x")->mutable_gauge()->mutable_data_points(), 1);
  OtlpTranslation t = Translate(req);
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].grouping.ToString(), "{job=\"unknown_service\", k8s_pod_name=\"p1\"}");
  EXPECT_EQ(Value(t.groups[0], "target_info", "{rank=\"0\"}"), 1);
}

TEST_F(OtlpDecoderTest, ResourcesWithTheSameGroupingMerge) {
  otlp::ExportMetricsServiceRequest req;
  Point(AddMetric(Resource(&req, "svc"), "a")->mutable_gauge()->mutable_data_points(), 1);
  Point(AddMetric(Resource(&req, "svc"), "b")->mutable_gauge()->mutable_data_points(), 2);
  Point(AddMetric(Resource(&req, "other"), "a")->mutable_gauge()->mutable_data_points(), 3);
  OtlpTranslation t = Translate(req);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(Value(t.groups[0], "a"), 1);
  EXPECT_EQ(Value(t.groups[0], "b"), 2);
  EXPECT_EQ(Value(t.groups[1], "a"), 3);
}

TEST_F(OtlpDecoderTest, PointAttributesBecomeLabels) {
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "svc", {{"rank", "1"}});
  otlp::Metric* m = AddMetric(rm, "requests");
  otlp::NumberDataPoint* p = Point(m->mutable_gauge()->mutable_data_points(), 7,
                                   {{"http.method", "GET"},
                                    {"http_method", "get"},
                                    {"job", "inner"},
                                    {"rank", "9"},
                                    {"empty", ""}});
  otlp::KeyValue* kv = p->add_attributes();
  kv->set_key("flags");
  auto* arr = kv->mutable_value()->mutable_array_value();
  arr->add_values()->set_int_value(1);
  arr->add_values()->set_string_value("a\"b");
  arr->add_values()->set_bool_value(true);
  arr->add_values()->set_double_value(0.5);
  kv = p->add_attributes();
  kv->set_key("map");
  auto* kvl = kv->mutable_value()->mutable_kvlist_value()->add_values();
  kvl->set_key("k");
  kvl->mutable_value()->set_string_value("v");
  kv = p->add_attributes();
  kv->set_key("raw");
  kv->mutable_value()->set_bytes_value("hi!?");
  IntAttr(p->mutable_attributes(), "n", -5);

  OtlpTranslation t = Translate(req);
  ASSERT_EQ(t.groups.size(), 1u);
  const MetricFamily* f = FindFamily(t.groups[0], "requests");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->samples.size(), 1u);
  EXPECT_EQ(Render(f->samples[0].labels),
            "{exported_job=\"inner\",exported_rank=\"9\",flags=\"[1,\"a\\\"b\",true,0.5]\","
            "http_method=\"GET;get\",map=\"{\"k\":\"v\"}\",n=\"-5\",raw=\"aGkhPw==\"}");
}

TEST_F(OtlpDecoderTest, SumsBecomeCountersOrGauges) {
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "svc");
  otlp::Metric* c = AddMetric(rm, "training.steps", "{step}");
  c->mutable_sum()->set_is_monotonic(true);
  c->mutable_sum()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  otlp::NumberDataPoint* p = c->mutable_sum()->add_data_points();
  p->set_as_int(42);
  otlp::Metric* ud = AddMetric(rm, "queue.depth", "{request}");
  ud->mutable_sum()->set_is_monotonic(false);
  ud->mutable_sum()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  Point(ud->mutable_sum()->mutable_data_points(), -3);
  otlp::Metric* time = AddMetric(rm, "busy", "s");
  time->mutable_sum()->set_is_monotonic(true);
  time->mutable_sum()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  Point(time->mutable_sum()->mutable_data_points(), 1.5);

  OtlpTranslation t = Translate(req);
  ASSERT_EQ(t.groups.size(), 1u);
  const OtlpGroup& g = t.groups[0];
  EXPECT_EQ(Value(g, "training_steps_total"), 42);
  EXPECT_EQ(FindFamily(g, "training_steps_total")->type, MetricType::kCounter);
  EXPECT_EQ(Value(g, "queue_depth"), -3);
  EXPECT_EQ(FindFamily(g, "queue_depth")->type, MetricType::kGauge);
  EXPECT_EQ(Value(g, "busy_seconds_total"), 1.5);
  EXPECT_EQ(FindFamily(g, "busy_seconds_total")->unit, "seconds");
  EXPECT_EQ(g.points, 3);
}

TEST_F(OtlpDecoderTest, DeltaSumsAccumulatePerSeries) {
  auto request = [](double a, std::optional<double> b) {
    otlp::ExportMetricsServiceRequest req;
    otlp::Metric* m = AddMetric(Resource(&req, "svc"), "tokens");
    m->mutable_sum()->set_is_monotonic(true);
    m->mutable_sum()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_DELTA);
    Point(m->mutable_sum()->mutable_data_points(), a, {{"kind", "a"}});
    if (b) Point(m->mutable_sum()->mutable_data_points(), *b, {{"kind", "b"}});
    return req;
  };
  OtlpTranslation t1 = Translate(request(5, 1));
  EXPECT_EQ(Value(t1.groups[0], "tokens_total", "{kind=\"a\"}"), 5);
  EXPECT_EQ(Value(t1.groups[0], "tokens_total", "{kind=\"b\"}"), 1);
  // Only series a changes: b is still emitted with its total.
  OtlpTranslation t2 = Translate(request(2, std::nullopt));
  EXPECT_EQ(Value(t2.groups[0], "tokens_total", "{kind=\"a\"}"), 7);
  EXPECT_EQ(Value(t2.groups[0], "tokens_total", "{kind=\"b\"}"), 1);
  // Not committed (the push failed): the totals stay as they were.
  OtlpTranslation t3 = Translate(request(100, 100), /*commit=*/false);
  EXPECT_EQ(Value(t3.groups[0], "tokens_total", "{kind=\"a\"}"), 107);
  OtlpTranslation t4 = Translate(request(1, std::nullopt));
  EXPECT_EQ(Value(t4.groups[0], "tokens_total", "{kind=\"a\"}"), 8);
  EXPECT_EQ(Value(t4.groups[0], "tokens_total", "{kind=\"b\"}"), 1);
  EXPECT_EQ(acc_.series(), 2u);
}

TEST_F(OtlpDecoderTest, CumulativeHistogramBuckets) {
  otlp::ExportMetricsServiceRequest req;
  otlp::Metric* m = AddMetric(Resource(&req, "svc"), "step.duration", "s");
  m->mutable_histogram()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  HistPoint(m->mutable_histogram(), {0.1, 1, 10}, {2, 3, 0, 1}, 17.5, {{"le", "x"}});
  OtlpTranslation t = Translate(req);
  ASSERT_EQ(t.groups.size(), 1u);
  const OtlpGroup& g = t.groups[0];
  const MetricFamily* b = FindFamily(g, "step_duration_seconds_bucket");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, MetricType::kHistogram);
  ASSERT_EQ(b->samples.size(), 4u);
  EXPECT_EQ(Render(b->samples[0].labels), "{exported_le=\"x\",le=\"0.1\"}");
  EXPECT_EQ(b->samples[0].value, 2);
  EXPECT_EQ(Render(b->samples[1].labels), "{exported_le=\"x\",le=\"1\"}");
  EXPECT_EQ(b->samples[1].value, 5);
  EXPECT_EQ(b->samples[2].value, 5);
  EXPECT_EQ(Render(b->samples[3].labels), "{exported_le=\"x\",le=\"+Inf\"}");
  EXPECT_EQ(b->samples[3].value, 6);
  EXPECT_EQ(Value(g, "step_duration_seconds_sum", "{exported_le=\"x\"}"), 17.5);
  EXPECT_EQ(Value(g, "step_duration_seconds_count", "{exported_le=\"x\"}"), 6);
  EXPECT_EQ(FindFamily(g, "step_duration_seconds_sum")->type, MetricType::kHistogram);
}

TEST_F(OtlpDecoderTest, HistogramWithoutBucketsOrSum) {
  otlp::ExportMetricsServiceRequest req;
  otlp::Metric* m = AddMetric(Resource(&req, "svc"), "latency");
  m->mutable_histogram()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  otlp::HistogramDataPoint* p = m->mutable_histogram()->add_data_points();
  p->set_count(4);
  OtlpTranslation t = Translate(req);
  const OtlpGroup& g = t.groups[0];
  EXPECT_EQ(Value(g, "latency_bucket", "{le=\"+Inf\"}"), 4);
  EXPECT_EQ(Value(g, "latency_count"), 4);
  ASSERT_NE(FindFamily(g, "latency_sum"), nullptr);
  EXPECT_TRUE(FindFamily(g, "latency_sum")->samples.empty()) << "no sum: no _sum sample";
}

TEST_F(OtlpDecoderTest, DeltaHistogramsAccumulate) {
  auto request = [](std::vector<double> bounds, std::vector<uint64_t> counts, double sum) {
    otlp::ExportMetricsServiceRequest req;
    otlp::Metric* m = AddMetric(Resource(&req, "svc"), "ttft", "ms");
    m->mutable_histogram()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_DELTA);
    HistPoint(m->mutable_histogram(), bounds, counts, sum);
    return req;
  };
  Translate(request({10, 100}, {1, 2, 0}, 120));
  OtlpTranslation t = Translate(request({10, 100}, {0, 1, 1}, 500));
  const OtlpGroup& g = t.groups[0];
  EXPECT_EQ(Value(g, "ttft_milliseconds_bucket", "{le=\"10\"}"), 1);
  EXPECT_EQ(Value(g, "ttft_milliseconds_bucket", "{le=\"100\"}"), 4);
  EXPECT_EQ(Value(g, "ttft_milliseconds_bucket", "{le=\"+Inf\"}"), 5);
  EXPECT_EQ(Value(g, "ttft_milliseconds_sum"), 620);
  EXPECT_EQ(Value(g, "ttft_milliseconds_count"), 5);
  // New bounds: the series starts over.
  OtlpTranslation t2 = Translate(request({50}, {1, 1}, 70));
  EXPECT_EQ(Value(t2.groups[0], "ttft_milliseconds_bucket", "{le=\"50\"}"), 1);
  EXPECT_EQ(Value(t2.groups[0], "ttft_milliseconds_count"), 2);
  EXPECT_TRUE(std::isnan(Value(t2.groups[0], "ttft_milliseconds_bucket", "{le=\"10\"}")));
}

TEST_F(OtlpDecoderTest, Summary) {
  otlp::ExportMetricsServiceRequest req;
  otlp::Metric* m = AddMetric(Resource(&req, "svc"), "rpc.latency", "s");
  otlp::SummaryDataPoint* p = m->mutable_summary()->add_data_points();
  p->set_count(10);
  p->set_sum(2.5);
  auto* q = p->add_quantile_values();
  q->set_quantile(0.5);
  q->set_value(0.2);
  q = p->add_quantile_values();
  q->set_quantile(0.99);
  q->set_value(0.9);
  OtlpTranslation t = Translate(req);
  const OtlpGroup& g = t.groups[0];
  EXPECT_EQ(Value(g, "rpc_latency_seconds", "{quantile=\"0.5\"}"), 0.2);
  EXPECT_EQ(Value(g, "rpc_latency_seconds", "{quantile=\"0.99\"}"), 0.9);
  EXPECT_EQ(Value(g, "rpc_latency_seconds_sum"), 2.5);
  EXPECT_EQ(Value(g, "rpc_latency_seconds_count"), 10);
  EXPECT_EQ(FindFamily(g, "rpc_latency_seconds")->type, MetricType::kSummary);
}

TEST_F(OtlpDecoderTest, ExponentialHistogramsAreRejectedNotDropped) {
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "svc");
  otlp::Metric* e = AddMetric(rm, "exp");
  e->mutable_exponential_histogram()->set_aggregation_temporality(
      otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  e->mutable_exponential_histogram()->add_data_points()->set_count(3);
  e->mutable_exponential_histogram()->add_data_points()->set_count(4);
  Point(AddMetric(rm, "ok")->mutable_gauge()->mutable_data_points(), 1);
  OtlpTranslation t = Translate(req);
  EXPECT_EQ(t.rejected_points, 2);
  ASSERT_EQ(t.messages.size(), 1u);
  EXPECT_NE(t.messages[0].find("\"exp\""), std::string::npos) << t.messages[0];
  EXPECT_NE(t.messages[0].find("exponential histograms are not supported"), std::string::npos);
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(Value(t.groups[0], "ok"), 1);
  EXPECT_EQ(FindFamily(t.groups[0], "exp"), nullptr);
}

TEST_F(OtlpDecoderTest, InvalidPointsAreRejectedWithReasons) {
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "svc");
  otlp::Metric* h = AddMetric(rm, "h");
  h->mutable_histogram()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  HistPoint(h->mutable_histogram(), {1, 2}, {1, 1}, 0);             // 2 counts for 2 bounds
  HistPoint(h->mutable_histogram(), {2, 1}, {1, 1, 1}, 0);          // decreasing
  HistPoint(h->mutable_histogram(), {1}, {1, 1}, 0)->set_count(5);  // does not add up
  HistPoint(h->mutable_histogram(), {1}, {1, 1}, 0, {{"ok", "1"}});
  otlp::Metric* s = AddMetric(rm, "s");
  s->mutable_sum()->set_is_monotonic(true);  // temporality unspecified
  Point(s->mutable_sum()->mutable_data_points(), 1);
  otlp::Metric* g = AddMetric(rm, "g");
  g->mutable_gauge()->add_data_points();  // no value
  otlp::Metric* n = AddMetric(rm, "---");
  Point(n->mutable_gauge()->mutable_data_points(), 1);
  AddMetric(rm, "nodata");
  OtlpTranslation t = Translate(req);
  EXPECT_EQ(t.rejected_points, 3 + 1 + 1 + 1);
  std::string all = t.Message();
  EXPECT_NE(all.find("2 bucket counts for 2 bounds"), std::string::npos) << all;
  EXPECT_NE(all.find("strictly increasing"), std::string::npos) << all;
  EXPECT_NE(all.find("add up to 2, not to the point's count 5"), std::string::npos) << all;
  EXPECT_NE(all.find("unspecified aggregation temporality"), std::string::npos) << all;
  EXPECT_NE(all.find("without a value"), std::string::npos) << all;
  EXPECT_NE(all.find("\"---\""), std::string::npos) << all;
  EXPECT_NE(all.find("\"nodata\" has no data"), std::string::npos) << all;
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(Value(t.groups[0], "h_count", "{ok=\"1\"}"), 2);
  EXPECT_EQ(t.groups[0].points, 1);
}

TEST_F(OtlpDecoderTest, StalenessMarkersAreSkipped) {
  otlp::ExportMetricsServiceRequest req;
  otlp::Metric* m = AddMetric(Resource(&req, "svc"), "g");
  Point(m->mutable_gauge()->mutable_data_points(), 1, {{"a", "1"}})
      ->set_flags(otlp::DATA_POINT_FLAGS_NO_RECORDED_VALUE_MASK);
  Point(m->mutable_gauge()->mutable_data_points(), 2, {{"a", "2"}});
  OtlpTranslation t = Translate(req);
  EXPECT_EQ(t.rejected_points, 0);
  const MetricFamily* f = FindFamily(t.groups[0], "g");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->samples.size(), 1u);
  EXPECT_EQ(Render(f->samples[0].labels), "{a=\"2\"}");
}

TEST_F(OtlpDecoderTest, StaleDeltaSeriesIsForgotten) {
  auto request = [](bool stale) {
    otlp::ExportMetricsServiceRequest req;
    otlp::Metric* m = AddMetric(Resource(&req, "svc"), "c");
    m->mutable_sum()->set_is_monotonic(true);
    m->mutable_sum()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_DELTA);
    otlp::NumberDataPoint* p = Point(m->mutable_sum()->mutable_data_points(), 3, {{"a", "1"}});
    if (stale) p->set_flags(otlp::DATA_POINT_FLAGS_NO_RECORDED_VALUE_MASK);
    Point(m->mutable_sum()->mutable_data_points(), 1, {{"a", "2"}});
    return req;
  };
  Translate(request(false));
  OtlpTranslation t = Translate(request(true));
  EXPECT_TRUE(std::isnan(Value(t.groups[0], "c_total", "{a=\"1\"}")));
  EXPECT_EQ(Value(t.groups[0], "c_total", "{a=\"2\"}"), 2);
  EXPECT_EQ(acc_.series(), 1u);
}

TEST_F(OtlpDecoderTest, NameTakenByAnotherTypeIsRejected) {
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "svc");
  Point(AddMetric(rm, "lat_count")->mutable_gauge()->mutable_data_points(), 1);
  otlp::Metric* h = AddMetric(rm, "lat");
  h->mutable_histogram()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_CUMULATIVE);
  HistPoint(h->mutable_histogram(), {1}, {1, 1}, 0);
  // The same name and type from another metric merges.
  Point(AddMetric(rm, "lat.count")->mutable_gauge()->mutable_data_points(), 5, {{"b", "1"}});
  OtlpTranslation t = Translate(req);
  EXPECT_EQ(t.rejected_points, 1);
  EXPECT_NE(t.Message().find("\"lat_count\" is already used by a gauge"), std::string::npos)
      << t.Message();
  EXPECT_EQ(Value(t.groups[0], "lat_count"), 1);
  EXPECT_EQ(Value(t.groups[0], "lat_count", "{b=\"1\"}"), 5);
}

TEST_F(OtlpDecoderTest, ReservedPrefixesRejectOnlyThatMetric) {
  options_.reserved_name_prefixes = {"gpu_", "gpumon_"};
  options_.allowed_name_prefixes = {"gpumon_client_"};
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "svc");
  Point(AddMetric(rm, "gpu.temperature")->mutable_gauge()->mutable_data_points(), 1);
  Point(AddMetric(rm, "gpumon.client.pushes")->mutable_gauge()->mutable_data_points(), 2);
  Point(AddMetric(rm, "job.gpu.temperature")->mutable_gauge()->mutable_data_points(), 3);
  OtlpTranslation t = Translate(req);
  EXPECT_EQ(t.rejected_points, 1);
  EXPECT_NE(t.Message().find("\"gpu_temperature\" starts with \"gpu_\""), std::string::npos)
      << t.Message();
  EXPECT_EQ(Value(t.groups[0], "gpumon_client_pushes"), 2);
  EXPECT_EQ(Value(t.groups[0], "job_gpu_temperature"), 3);
}

TEST_F(OtlpDecoderTest, SampleLimitRejectsTheRest) {
  options_.max_samples = 3;
  otlp::ExportMetricsServiceRequest req;
  otlp::Metric* m = AddMetric(Resource(&req, "svc"), "g");
  for (int i = 0; i < 5; ++i) {
    Point(m->mutable_gauge()->mutable_data_points(), i, {{"i", std::to_string(i)}});
  }
  OtlpTranslation t = Translate(req);
  EXPECT_EQ(t.rejected_points, 2);
  EXPECT_EQ(FindFamily(t.groups[0], "g")->samples.size(), 3u);
  EXPECT_NE(t.Message().find("more than 3 samples"), std::string::npos);
}

TEST_F(OtlpDecoderTest, DeltaAccumulatorIsBounded) {
  OtlpDeltaAccumulator small(OtlpDeltaLimits{2, std::chrono::seconds(0)});
  otlp::ExportMetricsServiceRequest req;
  otlp::Metric* m = AddMetric(Resource(&req, "svc"), "c");
  m->mutable_sum()->set_is_monotonic(true);
  m->mutable_sum()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_DELTA);
  for (int i = 0; i < 3; ++i) {
    Point(m->mutable_sum()->mutable_data_points(), 1, {{"i", std::to_string(i)}});
  }
  auto txn = small.Begin();
  Result<OtlpTranslation> t = TranslateOtlpRequest(req, options_, txn);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rejected_points, 1);
  EXPECT_NE(t->Message().find("delta accumulator full"), std::string::npos) << t->Message();
  EXPECT_EQ(FindFamily(t->groups[0], "c_total")->samples.size(), 2u);
  txn.Commit(t->groups[0].grouping);
}

TEST_F(OtlpDecoderTest, DeltaGroupsExpire) {
  OtlpDeltaAccumulator acc(OtlpDeltaLimits{100, std::chrono::seconds(60)});
  auto t0 = OtlpDeltaAccumulator::Clock::now();
  std::string why;
  Labels group{{"job", "j"}};
  {
    auto txn = acc.Begin(t0);
    ASSERT_TRUE(txn.AddSum(group, "c_total", Labels{}, 5, &why));
    txn.Commit(group);
  }
  EXPECT_EQ(acc.series(), 1u);
  {
    auto txn = acc.Begin(t0 + std::chrono::seconds(61));
    const auto* f = txn.Find(group, "c_total");
    EXPECT_EQ(f, nullptr) << "expired";
  }
  EXPECT_EQ(acc.series(), 0u);
}

TEST(OtlpParseTest, MalformedProtobufIsAnError) {
  otlp::ExportMetricsServiceRequest req;
  EXPECT_TRUE(ParseOtlpRequest("", &req).ok()) << "an empty request is valid";
  Status st = ParseOtlpRequest("\x0a\x05\x0a\x03", &req);  // length runs past the end
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not a valid protobuf ExportMetricsServiceRequest"),
            std::string::npos);
  EXPECT_FALSE(ParseOtlpRequest("not protobuf at all", &req).ok());
}

TEST_F(OtlpDecoderTest, InvalidUtf8FailsTheWholeRequest) {
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = Resource(&req, "svc");
  Point(AddMetric(rm, "ok")->mutable_gauge()->mutable_data_points(), 1);
  Point(AddMetric(rm, "bad")->mutable_gauge()->mutable_data_points(), 1, {{"k", "\xff"}});
  auto txn = acc_.Begin();
  Result<OtlpTranslation> t = TranslateOtlpRequest(req, options_, txn);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "resource_metrics[0].scope_metrics[0].metrics[1].gauge.data_points[0]."
            "attributes[0] (key \"k\"): value is not valid UTF-8");

  otlp::ExportMetricsServiceRequest req2;
  AddMetric(Resource(&req2, "svc"), "bad\xc0\x80");
  Result<OtlpTranslation> t2 = TranslateOtlpRequest(req2, options_, txn);
  ASSERT_FALSE(t2.ok());
  EXPECT_EQ(t2.status().message(),
            "resource_metrics[0].scope_metrics[0].metrics[0].name is not valid UTF-8");
}

}  // namespace
}  // namespace gpumon::ingest
