// Decoding a Pushgateway push body into metric families.
//
// Contract:
// - Content-Encoding "gzip" is inflated (up to max_decoded_bytes, else
//   413); "" and "identity" are taken as they are; anything else is 415.
// - Content-Type "application/openmetrics-text" selects OpenMetrics text;
//   anything else (text/plain; version=0.0.4, empty) the Prometheus text
//   format 0.0.4. Pushgateway's delimited protobuf is not supported (415,
//   saying so).
// - The body is parsed with exposition::ParseToFamilies (one family per
//   sample name, metadata attached); a parse error is 400 with the parser's
//   "line L, column C: ..." message. A sample with a timestamp is 400, as
//   Pushgateway rejects them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "exposition/metric_family.h"

namespace gpumon::ingest {

struct DecodedPushBody {
  int status = 200;     // 200: ok; else the HTTP status to answer
  std::string message;  // set on error
  std::vector<exposition::MetricFamily> families;
};

DecodedPushBody DecodePushBody(std::string_view content_type, std::string_view content_encoding,
                               std::string_view body, size_t max_decoded_bytes);

}  // namespace gpumon::ingest
