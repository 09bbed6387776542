// The OTLP/HTTP receiver into a real PushStore, through its route and
// through OtlpReceiver::Handle: content types, encodings and size limits,
// status codes and response bodies per the OTLP/HTTP specification,
// partial success, placement (process.pid vs the TCP peer) and delta
// totals that survive a rejected push.
#include "ingest/otlp_receiver.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <string>
#include <vector>

#include "proto/otlp_metrics.pb.h"

namespace gpumon::ingest {
namespace {

constexpr std::string_view kProto = "application/x-protobuf";

std::string Gzip(std::string_view data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void Attr(google::protobuf::RepeatedPtrField<otlp::KeyValue>* attrs, const std::string& key,
          const std::string& value) {
  otlp::KeyValue* kv = attrs->Add();
  kv->set_key(key);
  kv->mutable_value()->set_string_value(value);
}

// One resource (service.name = `service`, plus `attrs`) with a gauge.
otlp::ExportMetricsServiceRequest GaugeRequest(
    const std::string& service, const std::string& metric, double value,
    std::vector<std::pair<std::string, std::string>> attrs = {}) {
  otlp::ExportMetricsServiceRequest req;
  otlp::ResourceMetrics* rm = req.add_resource_metrics();
  Attr(rm->mutable_resource()->mutable_attributes(), "service.name", service);
  for (auto& [k, v] : attrs) Attr(rm->mutable_resource()->mutable_attributes(), k, v);
  otlp::Metric* m = rm->add_scope_metrics()->add_metrics();
  m->set_name(metric);
  m->mutable_gauge()->add_data_points()->set_as_double(value);
  return req;
}

// Adds a delta counter `name` with one point per value (label i=index).
void AddDeltaCounter(otlp::ExportMetricsServiceRequest* req, const std::string& name,
                     std::vector<double> values) {
  otlp::Metric* m = req->mutable_resource_metrics(0)->mutable_scope_metrics(0)->add_metrics();
  m->set_name(name);
  m->mutable_sum()->set_is_monotonic(true);
  m->mutable_sum()->set_aggregation_temporality(otlp::AGGREGATION_TEMPORALITY_DELTA);
  for (size_t i = 0; i < values.size(); ++i) {
    otlp::NumberDataPoint* p = m->mutable_sum()->add_data_points();
    p->set_as_double(values[i]);
    Attr(p->mutable_attributes(), "i", std::to_string(i));
  }
}

// Records what it was asked and places every process on GPU 1.
class RecordingResolver : public JobGpuResolver {
 public:
  JobPlacement ForPeer(std::string_view remote) override {
    peers.emplace_back(remote);
    return JobPlacement{std::nullopt, "", {GpuRef{1, "GPU-peer"}}};
  }
  JobPlacement ForPid(int pid) override {
    pids.push_back(pid);
    return JobPlacement{pid, "", {GpuRef{1, "GPU-pid"}}};
  }
  std::vector<std::string> peers;
  std::vector<int> pids;
};

class OtlpReceiverTest : public ::testing::Test {
 protected:
  OtlpOutcome Send(const otlp::ExportMetricsServiceRequest& req, std::string_view encoding = "") {
    std::string body = req.SerializeAsString();
    if (encoding == "gzip") body = Gzip(body);
    return receiver_.Handle(kProto, encoding, body, "127.0.0.1:40000");
  }

  // The stored sample `name` with exactly these labels (rendered sorted,
  // grouping and GPU labels included); NaN when absent.
  double Stored(const std::string& name, const std::string& labels) {
    std::vector<exposition::MetricFamily> families;
    store_.AppendFamilies(GpuLabelNames{"hostname", "gpu", "uuid", "node1"}, &families);
    for (const auto& f : families) {
      if (f.name != name) continue;
      for (const auto& s : f.samples) {
        std::string r = "{";
        for (size_t i = 0; i < s.labels.size(); ++i) {
          if (i) r += ",";
          r += s.labels[i].name + "=\"" + s.labels[i].value + "\"";
        }
        if (r + "}" == labels) return s.value;
      }
    }
    return std::nan("");
  }

  PushStore store_;
  RecordingResolver resolver_;
  OtlpReceiver receiver_{store_, &resolver_, OtlpReceiverOptions{}};
};

TEST_F(OtlpReceiverTest, StoresTranslatedSeriesWithGroupingAndPlacement) {
  OtlpOutcome out = Send(GaugeRequest("trainer", "training.loss", 0.5, {{"rank", "2"}}));
  ASSERT_EQ(out.status, 200) << out.message;
  EXPECT_EQ(out.content_type, kProto);
  otlp::ExportMetricsServiceResponse resp;
  ASSERT_TRUE(resp.ParseFromString(out.body));
  EXPECT_FALSE(resp.has_partial_success()) << "full success leaves partial_success unset";
  EXPECT_EQ(out.accepted_points, 1);
  EXPECT_EQ(Stored("training_loss",
                   "{gpu=\"1\",hostname=\"node1\",job=\"trainer\",rank=\"2\",uuid=\"GPU-peer\"}"),
            0.5);
  ASSERT_EQ(resolver_.peers.size(), 1u);
  EXPECT_EQ(resolver_.peers[0], "127.0.0.1:40000");
  EXPECT_TRUE(resolver_.pids.empty());

  // process.pid wins over the peer.
  out = Send(GaugeRequest("server", "queue", 3, {{"process.pid", "777"}}));
  ASSERT_EQ(out.status, 200) << out.message;
  ASSERT_EQ(resolver_.pids.size(), 1u);
  EXPECT_EQ(resolver_.pids[0], 777);
  EXPECT_EQ(Stored("queue", "{gpu=\"1\",hostname=\"node1\",job=\"server\",uuid=\"GPU-pid\"}"), 3);
}

TEST_F(OtlpReceiverTest, MergesFamiliesIntoTheGroup) {
  ASSERT_EQ(Send(GaugeRequest("svc", "a", 1)).status, 200);
  ASSERT_EQ(Send(GaugeRequest("svc", "b", 2)).status, 200);
  ASSERT_EQ(Send(GaugeRequest("svc", "a", 3)).status, 200);
  const std::string labels = "{gpu=\"1\",hostname=\"node1\",job=\"svc\",uuid=\"GPU-peer\"}";
  EXPECT_EQ(Stored("a", labels), 3);
  EXPECT_EQ(Stored("b", labels), 2) << "kMerge keeps the families a push does not name";
}

TEST_F(OtlpReceiverTest, GzipBodies) {
  OtlpOutcome out = Send(GaugeRequest("svc", "zipped", 9), "gzip");
  ASSERT_EQ(out.status, 200) << out.message;
  EXPECT_EQ(Stored("zipped", "{gpu=\"1\",hostname=\"node1\",job=\"svc\",uuid=\"GPU-peer\"}"), 9);

  out = receiver_.Handle(kProto, "gzip", "definitely not gzip", "127.0.0.1:1");
  EXPECT_EQ(out.status, 400);
  otlp::Status st;
  ASSERT_TRUE(st.ParseFromString(out.body));
  EXPECT_FALSE(st.message().empty());

  out = receiver_.Handle(kProto, "br", "x", "127.0.0.1:1");
  EXPECT_EQ(out.status, 415);
  ASSERT_TRUE(st.ParseFromString(out.body));
  EXPECT_NE(st.message().find("unsupported Content-Encoding \"br\""), std::string::npos);
}

TEST_F(OtlpReceiverTest, DecodedSizeIsLimited) {
  PushStore store;
  OtlpReceiverOptions options;
  options.max_decoded_bytes = 1000;
  OtlpReceiver small(store, nullptr, options);
  std::string big = GaugeRequest("svc", std::string(5000, 'x'), 1).SerializeAsString();
  OtlpOutcome out = small.Handle(kProto, "gzip", Gzip(big), "127.0.0.1:1");
  EXPECT_EQ(out.status, 413) << out.message;
  out = small.Handle(kProto, "", big, "127.0.0.1:1");
  EXPECT_EQ(out.status, 413) << out.message;
  EXPECT_EQ(store.stats().groups, 0u);
}

TEST_F(OtlpReceiverTest, ContentTypes) {
  std::string body = GaugeRequest("svc", "a", 1).SerializeAsString();
  OtlpOutcome out = receiver_.Handle("application/json", "", "{}", "127.0.0.1:1");
  EXPECT_EQ(out.status, 415);
  EXPECT_EQ(out.content_type, "application/json");
  EXPECT_NE(out.body.find("OTLP/JSON is not supported"), std::string::npos) << out.body;
  EXPECT_EQ(out.body.front(), '{');

  out = receiver_.Handle("", "", body, "127.0.0.1:1");
  EXPECT_EQ(out.status, 415);
  EXPECT_NE(out.message.find("missing Content-Type"), std::string::npos);
  out = receiver_.Handle("text/plain", "", body, "127.0.0.1:1");
  EXPECT_EQ(out.status, 415);

  out = receiver_.Handle("Application/X-Protobuf; charset=binary", "", body, "127.0.0.1:1");
  EXPECT_EQ(out.status, 200) << out.message;
  EXPECT_EQ(receiver_.stats().errors.load(), 3u);
}

TEST_F(OtlpReceiverTest, MalformedBodyIs400WithStatus) {
  OtlpOutcome out = receiver_.Handle(kProto, "", "\x0a\x7f garbage", "127.0.0.1:1");
  EXPECT_EQ(out.status, 400);
  EXPECT_EQ(out.content_type, kProto);
  otlp::Status st;
  ASSERT_TRUE(st.ParseFromString(out.body));
  EXPECT_NE(st.message().find("not a valid protobuf ExportMetricsServiceRequest"),
            std::string::npos);
  EXPECT_EQ(store_.stats().groups, 0u);

  // Invalid UTF-8 anywhere: nothing stored, not even the valid part.
  otlp::ExportMetricsServiceRequest req = GaugeRequest("svc", "good", 1);
  otlp::Metric* bad = req.mutable_resource_metrics(0)->mutable_scope_metrics(0)->add_metrics();
  bad->set_name("bad\xff");
  bad->mutable_gauge()->add_data_points()->set_as_double(1);
  out = Send(req);
  EXPECT_EQ(out.status, 400);
  EXPECT_NE(out.message.find("metrics[1].name is not valid UTF-8"), std::string::npos)
      << out.message;
  EXPECT_EQ(store_.stats().groups, 0u);
}

TEST_F(OtlpReceiverTest, EmptyRequestSucceeds) {
  OtlpOutcome out = receiver_.Handle(kProto, "", "", "127.0.0.1:1");
  EXPECT_EQ(out.status, 200);
  EXPECT_TRUE(out.body.empty());
}

TEST_F(OtlpReceiverTest, PartialSuccessReportsRejectedPoints) {
  otlp::ExportMetricsServiceRequest req = GaugeRequest("svc", "ok", 1);
  otlp::Metric* e = req.mutable_resource_metrics(0)->mutable_scope_metrics(0)->add_metrics();
  e->set_name("latency");
  e->mutable_exponential_histogram()->add_data_points()->set_count(1);
  OtlpOutcome out = Send(req);
  ASSERT_EQ(out.status, 200);
  otlp::ExportMetricsServiceResponse resp;
  ASSERT_TRUE(resp.ParseFromString(out.body));
  ASSERT_TRUE(resp.has_partial_success());
  EXPECT_EQ(resp.partial_success().rejected_data_points(), 1);
  EXPECT_NE(resp.partial_success().error_message().find("exponential histograms"),
            std::string::npos);
  EXPECT_EQ(Stored("ok", "{gpu=\"1\",hostname=\"node1\",job=\"svc\",uuid=\"GPU-peer\"}"), 1);
  EXPECT_EQ(receiver_.stats().points_rejected.load(), 1u);
  EXPECT_EQ(receiver_.stats().points_accepted.load(), 1u);

  // Nothing accepted at all: 400 (permanent, the sender must not retry).
  otlp::ExportMetricsServiceRequest only_exp;
  *only_exp.add_resource_metrics() = req.resource_metrics(0);
  only_exp.mutable_resource_metrics(0)->mutable_scope_metrics(0)->mutable_metrics()->DeleteSubrange(
      0, 1);
  out = Send(only_exp);
  EXPECT_EQ(out.status, 400);
  EXPECT_NE(out.message.find("all 1 data points were rejected"), std::string::npos) << out.message;
}

TEST_F(OtlpReceiverTest, RejectedPushLeavesDeltaTotalsUntouched) {
  PushStore store(PushLimits{.max_series_per_group = 3});
  OtlpReceiver receiver(store, nullptr, OtlpReceiverOptions{});
  auto send = [&](const otlp::ExportMetricsServiceRequest& req) {
    return receiver.Handle(kProto, "", req.SerializeAsString(), "127.0.0.1:1");
  };
  auto stored = [&](const std::string& labels) {
    std::vector<exposition::MetricFamily> families;
    store.AppendFamilies(GpuLabelNames{}, &families);
    for (const auto& f : families) {
      if (f.name != "c_total") continue;
      for (const auto& s : f.samples) {
        std::string r;
        for (const auto& l : s.labels) r += l.name + "=" + l.value + ",";
        if (r == labels) return s.value;
      }
    }
    return std::nan("");
  };
  otlp::ExportMetricsServiceRequest req = GaugeRequest("svc", "g", 1);
  AddDeltaCounter(&req, "c", {5});
  ASSERT_EQ(send(req).status, 200);
  EXPECT_EQ(stored("i=0,job=svc,"), 5);

  // +3 on the same series, with more series than the group may hold.
  otlp::ExportMetricsServiceRequest too_big = GaugeRequest("svc", "g", 1);
  AddDeltaCounter(&too_big, "c", {3, 1, 1, 1});
  OtlpOutcome out = send(too_big);
  EXPECT_EQ(out.status, 400);
  EXPECT_NE(out.message.find("max_series_per_group"), std::string::npos) << out.message;
  EXPECT_EQ(stored("i=0,job=svc,"), 5);

  otlp::ExportMetricsServiceRequest again = GaugeRequest("svc", "g", 1);
  AddDeltaCounter(&again, "c", {1});
  ASSERT_EQ(send(again).status, 200);
  EXPECT_EQ(stored("i=0,job=svc,"), 6) << "the rejected +3 was not counted";
}

TEST_F(OtlpReceiverTest, RouteAnswersThroughTheRouter) {
  http::Router router;
  PushStore store;
  auto receiver = RegisterOtlpReceiver(router, store, nullptr, OtlpReceiverOptions{});
  ASSERT_NE(receiver, nullptr);
  auto match = router.Find("POST", kOtlpMetricsPath);
  ASSERT_EQ(match.kind, http::Router::MatchKind::kFound);
  ASSERT_TRUE(match.route->options.max_body_bytes.has_value());
  EXPECT_EQ(*match.route->options.max_body_bytes, OtlpReceiverOptions{}.max_body_bytes);
  EXPECT_EQ(router.Find("GET", kOtlpMetricsPath).kind, http::Router::MatchKind::kMethodNotAllowed);

  http::HttpRequest req;
  req.method = "POST";
  req.path = kOtlpMetricsPath;
  req.headers.Set("Content-Type", "application/x-protobuf");
  req.body = GaugeRequest("svc", "routed", 4).SerializeAsString();
  req.remote_address = "127.0.0.1:5";
  http::HttpResponse res;
  match.route->handler(req, res);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.headers.Get("Content-Type"), "application/x-protobuf");
  EXPECT_EQ(store.stats().groups, 1u);
  EXPECT_EQ(receiver->stats().requests.load(), 1u);
}

}  // namespace
}  // namespace gpumon::ingest
