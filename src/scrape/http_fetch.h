// Fetching a target's exposition over HTTP(S) with cpp-httplib.
//
// Contract:
// - One GET of `url` with an Accept header preferring OpenMetrics 1.0 over
//   text 0.0.4, Accept-Encoding gzip (decompressed transparently) and
//   X-Prometheus-Scrape-Timeout-Seconds.
// - The whole request, connect included, is bounded by timeout_ms: the body
//   is read incrementally and abandoned once the deadline passes. A body
//   over body_limit bytes (0: unlimited) is an error, as is any status but
//   200. Errors read like Prometheus's ("server returned HTTP status 500
//   Internal Server Error", "context deadline exceeded").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace gpumon::scrape {

struct FetchResult {
  std::string body;
  std::string content_type;
};

using Fetcher =
    std::function<Result<FetchResult>(const std::string& url, int64_t timeout_ms, uint64_t limit)>;

Result<FetchResult> HttpFetch(const std::string& url, int64_t timeout_ms, uint64_t body_limit);

}  // namespace gpumon::scrape
