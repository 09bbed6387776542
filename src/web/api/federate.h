// /federate: Prometheus's federation endpoint. Returns the newest sample of
// every series matching any match[] selector in the text exposition format,
// so another server can scrape this one.
//
// Contract (Prometheus web/federate.go):
// - Each match[] is a series selector; an unparsable one answers 400 with
//   the parser's message as plain text. No match[] selects nothing (an
//   empty 200 response, as Prometheus answers).
// - For each matching series (each once, across selectors) the newest
//   sample in [now - lookback, now] is written unless it is a stale marker;
//   series without a metric name are skipped.
// - Samples are grouped by metric name (stable: label order within a
//   name); each group starts with "# TYPE <name> untyped". Labels with empty
//   values are omitted; then every external label the series lacks is
//   appended (sorted by name), including instance="" when the external
//   labels have no instance. Each line ends with the sample's timestamp in
//   ms. Values are formatted as Go's strconv 'g' (shortest) formats them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/labels.h"
#include "web/api/backend.h"
#include "web/api/params.h"

namespace gpumon::web::api {

struct FederateReply {
  int status = 200;
  std::string content_type;
  std::string body;
};

class Federate {
 public:
  using Clock = std::function<int64_t()>;  // now, in ms
  Federate(ApiBackend& backend, Labels external_labels, Clock now,
           int64_t lookback_delta_ms = 5 * 60 * 1000)
      : backend_(backend),
        external_(std::move(external_labels)),
        now_(std::move(now)),
        lookback_ms_(lookback_delta_ms) {}

  FederateReply Handle(const Params& p);

 private:
  ApiBackend& backend_;
  Labels external_;
  Clock now_;
  int64_t lookback_ms_;
};

// Go's strconv.FormatFloat(v, 'g', -1, 64) with the exposition format's
// spelling of NaN and infinities (+Inf, -Inf).
void AppendGoFloat(double v, std::string* out);

}  // namespace gpumon::web::api
