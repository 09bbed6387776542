#include "ingest/otlp_receiver.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "proto/otlp_metrics.pb.h"
#include "remote/body_decompress.h"

namespace gpumon::ingest {
namespace {

constexpr std::string_view kProtobuf = "application/x-protobuf";
constexpr std::string_view kJson = "application/json";
constexpr size_t kMaxMessageBytes = 4096;
// google.rpc.Code values, recorded in Status.code (informational only).
constexpr int kRpcInvalidArgument = 3;
constexpr int kRpcResourceExhausted = 8;
constexpr int kRpcUnimplemented = 12;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Cut to the limit at a UTF-8 character boundary.
std::string Cut(std::string s) {
  if (s.size() <= kMaxMessageBytes) return s;
  size_t cut = kMaxMessageBytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  s += "...";
  return s;
}

void AppendJsonEscaped(std::string_view s, std::string* out) {
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
}

OtlpOutcome Fail(int status, int rpc_code, std::string message, bool json = false) {
  OtlpOutcome out;
  out.status = status;
  out.message = Cut(std::move(message));
  if (json) {
    out.content_type = std::string(kJson);
    out.body = "{\"code\":" + std::to_string(rpc_code) + ",\"message\":\"";
    AppendJsonEscaped(out.message, &out.body);
    out.body += "\"}";
  } else {
    otlp::Status st;
    st.set_code(rpc_code);
    st.set_message(out.message);
    out.content_type = std::string(kProtobuf);
    out.body = st.SerializeAsString();
  }
  return out;
}

std::string GroupName(const Labels& grouping) {
  std::string out;
  for (const Label& l : grouping) {
    if (!out.empty()) out += ",";
    out += l.name + "=" + l.value;
  }
  return out;
}

}  // namespace

OtlpReceiver::OtlpReceiver(PushStore& store, JobGpuResolver* resolver, OtlpReceiverOptions options)
    : store_(store),
      resolver_(resolver),
      options_(std::move(options)),
      deltas_(OtlpDeltaLimits{options_.max_delta_series, store.limits().expiry}) {}

OtlpOutcome OtlpReceiver::Handle(std::string_view content_type, std::string_view content_encoding,
                                 std::string_view body, std::string_view remote_address) {
  stats_.requests.fetch_add(1, std::memory_order_relaxed);
  OtlpOutcome out = [&]() -> OtlpOutcome {
    const std::string media = Lower(Trim(content_type.substr(0, content_type.find(';'))));
    if (media == kJson) {
      return Fail(415, kRpcUnimplemented,
                  "OTLP/JSON is not supported: send OTLP/HTTP with protobuf encoding "
                  "(Content-Type: application/x-protobuf; e.g. "
                  "@opentelemetry/exporter-metrics-otlp-proto, or OTEL_EXPORTER_OTLP_PROTOCOL="
                  "http/protobuf)",
                  /*json=*/true);
    }
    if (media != kProtobuf) {
      return Fail(415, kRpcUnimplemented,
                  media.empty() ? "missing Content-Type; expected application/x-protobuf"
                                : "unsupported Content-Type \"" + std::string(Trim(content_type)) +
                                      "\"; expected application/x-protobuf");
    }
    const std::string encoding = Lower(Trim(content_encoding));
    std::string inflated;
    std::string_view data = body;
    if (encoding == "gzip") {
      remote::DecompressResult raw =
          remote::DecompressBody("gzip", body, options_.max_decoded_bytes);
      if (raw.status != 200) {
        return Fail(raw.status, raw.status == 413 ? kRpcResourceExhausted : kRpcInvalidArgument,
                    std::move(raw.message));
      }
      inflated = std::move(raw.data);
      data = inflated;
    } else if (!encoding.empty() && encoding != "identity") {
      return Fail(415, kRpcUnimplemented,
                  "unsupported Content-Encoding \"" + std::string(Trim(content_encoding)) +
                      "\"; expected gzip or none");
    } else if (body.size() > options_.max_decoded_bytes) {
      return Fail(413, kRpcResourceExhausted,
                  "request body of " + std::to_string(body.size()) +
                      " bytes exceeds the limit of " + std::to_string(options_.max_decoded_bytes) +
                      " bytes");
    }

    otlp::ExportMetricsServiceRequest request;
    if (Status st = ParseOtlpRequest(data, &request); !st.ok()) {
      return Fail(400, kRpcInvalidArgument, st.message());
    }
    inflated = std::string();

    OtlpDeltaAccumulator::Txn txn = deltas_.Begin();
    Result<OtlpTranslation> translated = TranslateOtlpRequest(request, options_.decode, txn);
    if (!translated.ok()) return Fail(400, kRpcInvalidArgument, translated.status().message());
    OtlpTranslation& t = *translated;

    int64_t accepted = 0;
    for (OtlpGroup& g : t.groups) {
      JobPlacement placement;
      if (resolver_) {
        placement = g.pid ? resolver_->ForPid(*g.pid) : resolver_->ForPeer(remote_address);
      }
      Status st =
          store_.Push(g.grouping, std::move(g.families), PushMode::kMerge, std::move(placement));
      if (st.ok()) {
        txn.Commit(g.grouping);
        accepted += g.points;
      } else {
        t.Reject(g.points, "group {" + GroupName(g.grouping) + "} rejected: " + st.message());
      }
    }

    OtlpOutcome ok;
    ok.accepted_points = accepted;
    ok.rejected_points = t.rejected_points;
    ok.message = Cut(t.Message());
    if (t.rejected_points > 0 && accepted == 0) {
      OtlpOutcome bad = Fail(
          400, kRpcInvalidArgument,
          "all " + std::to_string(t.rejected_points) + " data points were rejected: " + ok.message);
      bad.rejected_points = t.rejected_points;
      return bad;
    }
    otlp::ExportMetricsServiceResponse response;
    if (t.rejected_points > 0 || !ok.message.empty()) {
      response.mutable_partial_success()->set_rejected_data_points(t.rejected_points);
      response.mutable_partial_success()->set_error_message(ok.message);
    }
    ok.status = 200;
    ok.content_type = std::string(kProtobuf);
    ok.body = response.SerializeAsString();
    return ok;
  }();
  if (out.status >= 400) stats_.errors.fetch_add(1, std::memory_order_relaxed);
  stats_.points_accepted.fetch_add(static_cast<uint64_t>(out.accepted_points),
                                   std::memory_order_relaxed);
  stats_.points_rejected.fetch_add(static_cast<uint64_t>(out.rejected_points),
                                   std::memory_order_relaxed);
  return out;
}

std::shared_ptr<OtlpReceiver> RegisterOtlpReceiver(http::Router& router, PushStore& store,
                                                   JobGpuResolver* resolver,
                                                   OtlpReceiverOptions options) {
  const size_t max_body = options.max_body_bytes;
  auto receiver = std::make_shared<OtlpReceiver>(store, resolver, std::move(options));
  router.Post(
      kOtlpMetricsPath,
      [receiver](const http::HttpRequest& req, http::HttpResponse& res) {
        OtlpOutcome out =
            receiver->Handle(req.Header("Content-Type"), req.Header("Content-Encoding"), req.body,
                             req.remote_address);
        res.status = out.status;
        res.SetContent(std::move(out.body), out.content_type);
      },
      http::RouteOptions{.max_body_bytes = max_body});
  return receiver;
}

}  // namespace gpumon::ingest
