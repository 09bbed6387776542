// The remote-write receiver: POST /api/v1/write, as Prometheus serves it with
// --web.enable-remote-write-receiver (remote-write 1.0 messages only).
//
// Contract:
// - Only POST is routed, with a body limit of kMaxRemoteWriteBodyBytes
//   (the server answers 413 beyond it, before the handler runs).
// - Content-Type must be absent or application/x-protobuf without a proto=
//   parameter, or proto=prometheus.WriteRequest (a 2.0 request gets 415).
//   Content-Encoding: absent or snappy (a snappy block, as Prometheus
//   assumes), or gzip (a gzip stream of the protobuf); anything else 415.
// - The decoded message may be at most max_decoded_bytes (default
//   kMaxRemoteWriteDecodedBytes): snappy's declared length is checked
//   before anything is allocated, gzip is inflated in steps up to the
//   limit; beyond it the answer is 413 (see body_decompress.h).
// - A body that does not decode (see write_request.h) gets 400 with the
//   decoder's error text; nothing is appended.
// - Series are decoded one at a time straight into one Appender from the
//   factory (created at the first series) and committed once: 204 on
//   success. Memory is bounded by the decoded body plus the samples the
//   appender buffers: a series repeated many times costs no more than its
//   samples (repeats of a sample are not even buffered).
// - The first sample the appender rejects ends the request: the batch is
//   rolled back. 400 (the sender must not retry) for every permanent
//   rejection (tsdb::IsPermanentAppendFailure: out of order, duplicate, out
//   of bounds, too old, too many or invalid labels) and for timestamps more
//   than 10 minutes in the future; 500 (the sender retries) only for
//   storage trouble (disk full, I/O errors, anything unclassified) and a
//   failed commit of that kind. Never a partial commit.
// - Handlers may run concurrently; the factory must hand out independent
//   appenders (HeadAppenderFactory does).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http/router.h"
#include "scrape/appender.h"

namespace gpumon::remote {

inline constexpr char kRemoteWritePath[] = "/api/v1/write";
// What the route accepts on the wire (compressed).
inline constexpr size_t kMaxRemoteWriteBodyBytes = 64u << 20;
// The decoded protobuf: 32 MiB, the limit Prometheus applies when decoding
// remote-read requests and VictoriaMetrics' default for inserts; senders
// batch far less (Prometheus: 2,000 samples, ~100 KiB, per request).
inline constexpr size_t kMaxRemoteWriteDecodedBytes = 32u << 20;

// Self-monitoring counters; read them from any thread.
struct ReceiverStats {
  std::atomic<uint64_t> requests{0};  // every request to the endpoint
  std::atomic<uint64_t> samples{0};   // samples committed
  std::atomic<uint64_t> errors{0};    // requests answered with 4xx/5xx
};

// The outcome of one request, for callers that are not HTTP handlers (and
// for tests): status is 204, 400, 413, 415 or 500; message is the error text.
struct WriteOutcome {
  int status = 204;
  std::string message;
  uint64_t samples = 0;  // committed
};

// Decodes `body` and appends it in one commit. `content_type` and
// `content_encoding` are the request's header values ("" when absent).
WriteOutcome HandleRemoteWrite(std::string_view content_type, std::string_view content_encoding,
                               std::string_view body, const scrape::AppenderFactory& appenders,
                               int64_t now_ms,
                               size_t max_decoded_bytes = kMaxRemoteWriteDecodedBytes);

// The route's handler (what RegisterRemoteWriteReceiver installs).
// `stats` (optional) must outlive it.
http::Handler RemoteWriteHandler(scrape::AppenderFactory appenders, ReceiverStats* stats = nullptr);

// Routes POST /api/v1/write on `router` with the body limit above.
void RegisterRemoteWriteReceiver(http::Router& router, scrape::AppenderFactory appenders,
                                 ReceiverStats* stats = nullptr);

}  // namespace gpumon::remote
