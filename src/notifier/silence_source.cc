#include "notifier/silence_source.h"

#include <algorithm>
#include <future>
#include <set>
#include <utility>

#include "notifier/alertmanager_discovery.h"
#include "scrape/http_fetch.h"

namespace gpumon::notifier {
namespace {

// Alertmanager keeps expired silences for days (--data.retention, 120 h by
// default); a busy one lists thousands. Far more than that is not a
// silences list.
constexpr uint64_t kBodyLimit = 64ull << 20;

Result<std::string> HttpGet(const std::string& url, const scrape::HttpClientConfig& http,
                            int64_t timeout_ms) {
  auto r = scrape::HttpFetchWith(url, timeout_ms, kBodyLimit, http);
  if (!r.ok()) return r.status();
  return std::move(r->body);
}

}  // namespace

std::string SilencesUrlFor(const std::string& alerts_url) {
  constexpr std::string_view kAlerts = "/api/v2/alerts";
  if (!alerts_url.ends_with(kAlerts)) return "";
  return alerts_url.substr(0, alerts_url.size() - kAlerts.size()) + "/api/v2/silences";
}

SilenceSource::SilenceSource() : SilenceSource(Options{}) {}

SilenceSource::SilenceSource(Options options) : options_(std::move(options)) {
  if (!options_.fetch) options_.fetch = HttpGet;
}

void SilenceSource::ApplyConfig(const scrape::AlertingConfig& config) {
  std::lock_guard<std::mutex> lock(mu_);
  config_ = config;
  ++generation_;
  cached_.reset();
}

SilenceList SilenceSource::List() {
  auto fresh = [this] {
    return cached_ && cached_generation_ == generation_ &&
           std::chrono::steady_clock::now() - cached_at_ <
               std::chrono::milliseconds(options_.cache_ms);
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fresh()) return *cached_;
  }
  // One refresh at a time; those who waited find its answer cached.
  std::lock_guard<std::mutex> refreshing(refresh_mu_);
  scrape::AlertingConfig config;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fresh()) return *cached_;
    config = config_;
    generation = generation_;
  }
  auto list = std::make_shared<const SilenceList>(Refresh(config));
  std::lock_guard<std::mutex> lock(mu_);
  if (generation == generation_) {
    cached_ = list;
    cached_generation_ = generation;
    cached_at_ = std::chrono::steady_clock::now();
  }
  return *list;
}

SilenceList SilenceSource::Refresh(const scrape::AlertingConfig& config) const {
  SilenceList out;
  struct Target {
    std::string url;
    const scrape::AlertmanagerConfig* config;
  };
  std::vector<Target> targets;
  std::set<std::string> seen_urls;
  for (const scrape::AlertmanagerConfig& am : config.alertmanagers) {
    std::vector<std::string> errors;
    const DiscoveredAlertmanagers found = BuildAlertmanagers(CollectTargetGroups(am, &errors), am);
    errors.insert(errors.end(), found.errors.begin(), found.errors.end());
    for (const std::string& e : errors) out.warnings.push_back("alertmanager discovery: " + e);
    for (const AlertmanagerEndpoint& e : found.active) {
      const std::string url = SilencesUrlFor(e.url);
      if (url.empty()) {
        out.warnings.push_back("cannot list silences of Alertmanager \"" + e.url +
                               "\": its alerts path does not end in /api/v2/alerts");
        continue;
      }
      if (seen_urls.insert(url).second) targets.push_back({url, &am});
    }
  }
  std::vector<std::future<Result<std::string>>> bodies;
  bodies.reserve(targets.size());
  for (const Target& t : targets) {
    const int64_t timeout = std::min(t.config->timeout_ms, options_.timeout_ms);
    bodies.push_back(std::async(std::launch::async, [this, &t, timeout] {
      return options_.fetch(t.url, t.config->http, timeout);
    }));
  }
  std::set<std::string> seen_ids;
  for (size_t i = 0; i < targets.size(); ++i) {
    Result<std::string> body = bodies[i].get();
    Result<std::vector<Silence>> silences =
        body.ok() ? ParseSilences(*body) : Result<std::vector<Silence>>(body.status());
    if (!silences.ok()) {
      out.warnings.push_back("cannot list silences of Alertmanager \"" + targets[i].url +
                             "\": " + silences.status().message());
      continue;
    }
    for (Silence& s : *silences) {
      if (seen_ids.insert(s.id).second) out.silences.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace gpumon::notifier
