// The remote-write receiver: POST /api/v1/write, as Prometheus serves it with
// --web.enable-remote-write-receiver (remote-write 1.0 messages only).
//
// Contract:
// - Only POST is routed (other methods get httplib's 404).
// - Content-Type must be absent or application/x-protobuf without a proto=
//   parameter, or proto=prometheus.WriteRequest (a 2.0 request gets 415);
//   Content-Encoding must be absent (assumed snappy, as Prometheus does) or
//   snappy (anything else gets 415). cpp-httplib itself inflates a gzip
//   body before the handler runs, and answers 400 when it cannot.
// - A body that does not decode (see write_request.h) gets 400 with the
//   decoder's error text; nothing is appended.
// - Every sample of the request goes through one Appender from the factory
//   and is committed once: 204 on success. The first sample the appender
//   rejects ends the request: the batch is rolled back and the answer is 400
//   with the appender's error for out-of-order / duplicate / out-of-bounds
//   samples and for timestamps more than 10 minutes in the future (the
//   sender must not retry those), 500 for any other append or commit
//   failure (the sender retries). Never a partial commit.
// - Handlers may run concurrently; the factory must hand out independent
//   appenders (HeadAppenderFactory does).
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "scrape/appender.h"

namespace gpumon::remote {

inline constexpr char kRemoteWritePath[] = "/api/v1/write";

// Self-monitoring counters; read them from any thread.
struct ReceiverStats {
  std::atomic<uint64_t> requests{0};  // every request to the endpoint
  std::atomic<uint64_t> samples{0};   // samples committed
  std::atomic<uint64_t> errors{0};    // requests answered with 4xx/5xx
};

// The outcome of one request, for callers that are not HTTP handlers (and
// for tests): status is 204, 400, 415 or 500; message is the error text.
struct WriteOutcome {
  int status = 204;
  std::string message;
  uint64_t samples = 0;  // committed
};

// Decodes `body` and appends it in one commit. `content_type` and
// `content_encoding` are the request's header values ("" when absent).
WriteOutcome HandleRemoteWrite(std::string_view content_type, std::string_view content_encoding,
                               std::string_view body, const scrape::AppenderFactory& appenders,
                               int64_t now_ms);

// Routes POST /api/v1/write on `server`. `stats` (optional) must outlive it.
void RegisterRemoteWriteReceiver(httplib::Server& server, scrape::AppenderFactory appenders,
                                 ReceiverStats* stats = nullptr);

}  // namespace gpumon::remote
