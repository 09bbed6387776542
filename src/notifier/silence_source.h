// SilenceSource: the silences of every Alertmanager the server notifies,
// for the web UI (GET /api/gpumon/v1/silences).
//
// Contract:
// - ApplyConfig() takes the alerting section the notifier uses (call both
//   with the same configuration, at start-up and on reload) and drops the
//   cache. Alertmanagers are discovered from it as the notifier discovers
//   them (alertmanager_discovery.h), at each refresh, so file_sd changes
//   apply.
// - List() answers the silences of every active Alertmanager, each fetched
//   with GET <scheme>://<address><path_prefix>/api/v2/silences under its
//   entry's http settings (TLS, basic auth, authorization), bounded by the
//   smaller of the entry's timeout and Options::timeout_ms, all
//   Alertmanagers in parallel. Silences with the same id (Alertmanagers of
//   one cluster share them) appear once, the first seen in configuration
//   order. An Alertmanager that fails (unreachable, non-200, bad JSON), and
//   a discovery error, add a line to `warnings` naming it; the others
//   still count. No Alertmanager configured: an empty list, no warning.
// - The answer is cached for Options::cache_ms, so that many browsers
//   polling at once cost one fetch per Alertmanager per period; callers
//   arriving while a refresh runs wait for it instead of starting another.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "notifier/silence.h"
#include "scrape/config.h"

namespace gpumon::notifier {

struct SilenceList {
  std::vector<Silence> silences;
  std::vector<std::string> warnings;
};

class SilenceSource {
 public:
  // One GET of a silences URL; the body on a 200 answer.
  using Fetch = std::function<Result<std::string>(
      const std::string& url, const scrape::HttpClientConfig& http, int64_t timeout_ms)>;

  struct Options {
    int64_t cache_ms = 5'000;
    int64_t timeout_ms = 3'000;  // a page waits for this at most
    Fetch fetch;                 // empty: scrape::HttpFetchWith
  };

  SilenceSource();
  explicit SilenceSource(Options options);

  void ApplyConfig(const scrape::AlertingConfig& config);
  SilenceList List();

 private:
  SilenceList Refresh(const scrape::AlertingConfig& config) const;

  Options options_;
  std::mutex refresh_mu_;  // held while a refresh runs
  std::mutex mu_;          // guards the fields below
  scrape::AlertingConfig config_;
  uint64_t generation_ = 0;  // bumped by ApplyConfig
  std::shared_ptr<const SilenceList> cached_;
  uint64_t cached_generation_ = 0;
  std::chrono::steady_clock::time_point cached_at_;
};

// The silences endpoint of an Alertmanager whose alerts endpoint is
// `alerts_url` (".../api/v2/alerts" → ".../api/v2/silences"); "" when the
// URL does not end in /api/v2/alerts.
std::string SilencesUrlFor(const std::string& alerts_url);

}  // namespace gpumon::notifier
