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
// - With an HttpClientConfig (a scrape job's `http` settings): https URLs
//   verify the server against tls_config.ca_file (the system CAs when
//   empty) unless insecure_skip_verify, checking the name in
//   tls_config.server_name instead of the URL's host when set (also sent
//   as SNI; the Host header stays the URL's); cert_file/key_file present a
//   client certificate. basic_auth sends the password or the trimmed
//   content of password_file; authorization sends "<type> <credentials>"
//   (type Bearer by default) with credentials_file read the same way.
//   Files are read at every fetch, so rotated secrets and certificates are
//   picked up without a reload.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "scrape/config.h"

namespace gpumon::scrape {

struct FetchResult {
  std::string body;
  std::string content_type;
};

using Fetcher =
    std::function<Result<FetchResult>(const std::string& url, int64_t timeout_ms, uint64_t limit)>;

Result<FetchResult> HttpFetch(const std::string& url, int64_t timeout_ms, uint64_t body_limit);
Result<FetchResult> HttpFetchWith(const std::string& url, int64_t timeout_ms, uint64_t body_limit,
                                  const HttpClientConfig& http);

// A Fetcher that applies `http` to every fetch (for one scrape job).
Fetcher HttpFetcherFor(HttpClientConfig http);

}  // namespace gpumon::scrape
