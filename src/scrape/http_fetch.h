// Fetching a target's exposition over HTTP(S) with cpp-httplib.
//
// Contract:
// - One GET of `url` with an Accept header preferring OpenMetrics 1.0 over
//   text 0.0.4, X-Prometheus-Scrape-Timeout-Seconds, and Accept-Encoding
//   gzip (inflated as it arrives) except for loopback hosts, which get
//   identity: there gzip saves no bandwidth, and inflating a 350 KB GPU
//   node exposition cost the scraper about 10% more CPU than reading it
//   plain.
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
//   Secret files are read at every fetch, and a change of the CA,
//   certificate or key file (size, mtime, inode) is noticed at the next
//   fetch, so rotated secrets and certificates apply without a reload.
// - HttpFetch/HttpFetchWith open a connection per call. A KeepAliveFetcher
//   (and the Fetcher HttpFetcherFor returns) keeps one HTTP/1.1 connection
//   per origin (scheme, host, port) open between fetches, as Prometheus
//   does: a connection the server closed is re-dialled before the request,
//   and a request that fails on a reused connection before any response
//   arrived (the server closed it meanwhile) is retried once on a new one.
//   Fetches of different origins run in parallel; fetches of one origin
//   are serialized. Origins idle for 10 minutes are forgotten.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

// What a fetch asks for in Accept-Encoding. kAuto: identity for loopback
// hosts, gzip otherwise; kIdentity is Prometheus's enable_compression:
// false.
enum class Compression { kAuto, kGzip, kIdentity };

// Keeps connections alive between fetches (see the contract above).
// Thread-safe.
class KeepAliveFetcher {
 public:
  explicit KeepAliveFetcher(HttpClientConfig http, Compression compression = Compression::kAuto);
  ~KeepAliveFetcher();
  KeepAliveFetcher(const KeepAliveFetcher&) = delete;
  KeepAliveFetcher& operator=(const KeepAliveFetcher&) = delete;

  Result<FetchResult> Fetch(const std::string& url, int64_t timeout_ms, uint64_t body_limit);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A Fetcher that applies `http` to every fetch and keeps its connections
// alive. Copies of the returned Fetcher share its connections; call it once
// per scrape loop so that each target has its own.
Fetcher HttpFetcherFor(HttpClientConfig http, Compression compression = Compression::kAuto);

}  // namespace gpumon::scrape
