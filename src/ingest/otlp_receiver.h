// The OTLP/HTTP metrics receiver: POST /v1/metrics with an
// ExportMetricsServiceRequest (protobuf, optionally gzip-compressed), as an
// OpenTelemetry SDK's OTLP/HTTP exporter sends it, converted to Prometheus
// families and merged into the PushStore (docs/formats/otlp.md).
//
// Contract (OTLP/HTTP, opentelemetry-proto docs/specification.md):
// - Only POST /v1/metrics is routed, with a body limit of max_body_bytes
//   (the server answers 413 beyond it, before the handler runs).
// - Content-Type must be application/x-protobuf (parameters ignored).
//   application/json gets 415 with a JSON Status body saying only
//   protobuf is supported; anything else (also no Content-Type) 415.
// - Content-Encoding: absent or identity, or gzip (inflated in steps up to
//   max_decoded_bytes, remote/body_decompress.h); beyond the limit 413, a
//   corrupt stream 400, other encodings 415.
// - A body that is not an ExportMetricsServiceRequest, or that has text
//   fields that are not UTF-8, gets 400 (the sender must not retry) and
//   nothing is stored.
// - Each resource becomes one push group (otlp_decoder.h), pushed with
//   PushMode::kMerge. Placement: resource attribute process.pid →
//   resolver->ForPid(pid), else resolver->ForPeer(the TCP peer); no
//   resolver, no join. DELTA sums and histograms are accumulated per
//   series by the receiver (otlp_delta.h); a group the store rejects leaves
//   its totals untouched.
// - Answers: 200 with an ExportMetricsServiceResponse (protobuf); its
//   partial_success carries rejected_data_points and an error_message when
//   some points were rejected (by the translation or by the store's
//   limits), or only a message for warnings. When points were rejected and
//   none accepted: 400. Error bodies (4xx) are a protobuf google.rpc.Status
//   with the message (JSON for a JSON request); messages are cut to 4 KiB.
// - Handlers may run concurrently; requests carrying deltas are serialized
//   on the accumulator.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/router.h"
#include "ingest/job_gpus.h"
#include "ingest/otlp_decoder.h"
#include "ingest/otlp_delta.h"
#include "ingest/push_store.h"

namespace gpumon::ingest {

inline constexpr char kOtlpMetricsPath[] = "/v1/metrics";

struct OtlpReceiverOptions {
  size_t max_body_bytes = 16 << 20;     // as sent (compressed)
  size_t max_decoded_bytes = 64 << 20;  // after gzip (the spec's recommended limit)
  // Resource attributes promoted to grouping labels, and the per-request
  // sample limit (otlp_decoder.h).
  OtlpDecodeOptions decode;
  // Series the delta accumulator may hold; its expiry is the store's.
  size_t max_delta_series = 100'000;
};

struct OtlpReceiverStats {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> errors{0};  // answered 4xx
  std::atomic<uint64_t> points_accepted{0};
  std::atomic<uint64_t> points_rejected{0};
};

// The outcome of one request (what the handler answers).
struct OtlpOutcome {
  int status = 200;
  std::string content_type;  // of `body`
  std::string body;
  std::string message;  // the error or partial-success text ("" when none)
  int64_t accepted_points = 0;
  int64_t rejected_points = 0;
};

class OtlpReceiver {
 public:
  OtlpReceiver(PushStore& store, JobGpuResolver* resolver, OtlpReceiverOptions options);

  // `content_type` / `content_encoding`: the header values ("" when absent);
  // `remote_address`: the peer, "ip:port".
  OtlpOutcome Handle(std::string_view content_type, std::string_view content_encoding,
                     std::string_view body, std::string_view remote_address);

  const OtlpReceiverStats& stats() const { return stats_; }
  const OtlpReceiverOptions& options() const { return options_; }

 private:
  PushStore& store_;
  JobGpuResolver* resolver_;
  OtlpReceiverOptions options_;
  OtlpDeltaAccumulator deltas_;
  OtlpReceiverStats stats_;
};

// Registers POST /v1/metrics on `router`. `resolver` may be null (no join);
// `store` and `resolver` must outlive the router. Returns the receiver
// (also kept alive by the route) for its stats.
std::shared_ptr<OtlpReceiver> RegisterOtlpReceiver(http::Router& router, PushStore& store,
                                                   JobGpuResolver* resolver,
                                                   OtlpReceiverOptions options = {});

}  // namespace gpumon::ingest
