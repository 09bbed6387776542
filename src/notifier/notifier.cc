#include "notifier/notifier.h"

#include <algorithm>
#include <chrono>

#include "common/log.h"
#include "notifier/alert_json.h"
#include "notifier/alertmanager_client.h"
#include "scrape/relabel.h"

namespace gpumon::notifier {
namespace {

using Clock = std::chrono::steady_clock;

// Adds the external labels an alert lacks, then runs the rules; false
// when a rule dropped the alert.
bool RelabelAlert(Alert& alert, const Labels& external,
                  const std::vector<scrape::RelabelConfig>& rules) {
  if (!external.empty()) {
    std::vector<Label> items = alert.labels.items();
    bool added = false;
    for (const Label& l : external) {
      if (alert.labels.Get(l.name).empty()) {
        items.push_back(l);
        added = true;
      }
    }
    if (added) alert.labels = Labels::FromUnsorted(std::move(items));
  }
  if (rules.empty()) return true;
  auto out = scrape::Relabel(alert.labels, rules);
  if (!out) return false;
  alert.labels = std::move(*out);
  return true;
}

Status CheckCompiled(const std::vector<scrape::RelabelConfig>& rules, const std::string& what) {
  for (const auto& r : rules) {
    if (!r.compiled) return Status::Error(what + ": relabel rule was not compiled");
  }
  return Status::Ok();
}

}  // namespace

Notifier::Notifier(Options options) : options_(std::move(options)) {
  stats_.queue_capacity = options_.queue_capacity;
  thread_ = std::thread([this] { Run(); });
}

Notifier::~Notifier() { Stop(); }

Status Notifier::ApplyConfig(const scrape::AlertingConfig& config, Labels external_labels) {
  if (Status s = CheckCompiled(config.alert_relabel_configs, "alert_relabel_configs"); !s.ok()) {
    return s;
  }
  Sets sets;
  for (size_t i = 0; i < config.alertmanagers.size(); ++i) {
    const auto& am = config.alertmanagers[i];
    const std::string where = "alertmanagers[" + std::to_string(i) + "]";
    if (Status s = CheckCompiled(am.relabel_configs, where); !s.ok()) return s;
    if (Status s = CheckCompiled(am.alert_relabel_configs, where); !s.ok()) return s;
    auto set = std::make_shared<AlertmanagerSet>();
    set->config = am;
    set->files_fingerprint = TargetFilesFingerprint(am);
    std::vector<std::string> errors;
    set->discovered = BuildAlertmanagers(CollectTargetGroups(am, &errors), am);
    for (auto& e : set->discovered.errors) errors.push_back(std::move(e));
    set->discovered.errors = errors;
    for (const auto& e : errors) LogWarn("notifier: " + where + ": " + e);
    sets.push_back(std::move(set));
  }
  std::lock_guard lk(mu_);
  config_ = config;
  external_labels_ = std::move(external_labels);
  sets_ = std::move(sets);
  if (config_.alertmanagers.empty()) {
    // Alerting was switched off: what is queued can no longer go anywhere.
    stats_.dropped += queue_.size();
    queue_.clear();
  }
  config_changed_ = true;
  cv_.notify_all();
  return Status::Ok();
}

void Notifier::Send(std::vector<Alert> alerts) {
  std::vector<scrape::RelabelConfig> rules;
  Labels external;
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    // With nothing configured there is nowhere to send to, ever.
    if (config_.alertmanagers.empty()) return;
    rules = config_.alert_relabel_configs;
    external = external_labels_;
  }
  std::vector<Alert> kept;
  kept.reserve(alerts.size());
  for (Alert& a : alerts) {
    if (RelabelAlert(a, external, rules)) kept.push_back(std::move(a));
  }
  if (kept.empty()) return;
  std::lock_guard lk(mu_);
  if (stopping_) return;
  for (Alert& a : kept) queue_.push_back(std::move(a));
  TrimQueueLocked();
  cv_.notify_all();
}

void Notifier::TrimQueueLocked() {
  while (queue_.size() > options_.queue_capacity) {
    queue_.pop_front();
    ++stats_.dropped;
  }
}

void Notifier::Stop() {
  {
    std::lock_guard lk(mu_);
    if (stopping_) {
      // A second caller waits for nothing: the first one joins.
      return;
    }
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Stats Notifier::stats() const {
  std::lock_guard lk(mu_);
  Stats s = stats_;
  s.queue_length = queue_.size() + in_flight_;
  s.alertmanagers_discovered = 0;
  for (const auto& set : sets_) s.alertmanagers_discovered += set->discovered.active.size();
  return s;
}

std::vector<std::string> Notifier::ActiveAlertmanagers() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (const auto& set : sets_) {
    for (const auto& e : set->discovered.active) out.push_back(e.url);
  }
  return out;
}

std::vector<std::string> Notifier::DroppedAlertmanagers() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (const auto& set : sets_) {
    for (const auto& e : set->discovered.dropped) out.push_back(e.url);
  }
  return out;
}

void Notifier::Rediscover(bool force) {
  Sets current;
  {
    std::lock_guard lk(mu_);
    current = sets_;
    config_changed_ = false;
  }
  Sets next;
  bool changed = false;
  for (const auto& set : current) {
    const std::string fp = TargetFilesFingerprint(set->config);
    if (!force && fp == set->files_fingerprint) {
      next.push_back(set);
      continue;
    }
    auto updated = std::make_shared<AlertmanagerSet>();
    updated->config = set->config;
    updated->files_fingerprint = fp;
    std::vector<std::string> errors;
    updated->discovered =
        BuildAlertmanagers(CollectTargetGroups(set->config, &errors), set->config);
    for (auto& e : updated->discovered.errors) errors.push_back(std::move(e));
    updated->discovered.errors = errors;
    for (const auto& e : errors) LogWarn("notifier: " + e);
    next.push_back(std::move(updated));
    changed = true;
  }
  if (!changed) return;
  std::lock_guard lk(mu_);
  // A configuration applied meanwhile wins over this older view.
  if (config_changed_) return;
  sets_ = std::move(next);
}

bool Notifier::SendBatch(const std::vector<Alert>& batch, std::unique_lock<std::mutex>& lk) {
  const Sets sets = sets_;
  lk.unlock();
  struct Job {
    std::string url;
    const scrape::AlertmanagerConfig* config;
    std::shared_ptr<const std::string> body;
    size_t count;
    Status result;
  };
  std::vector<Job> jobs;
  bool any_endpoint = false;
  for (const auto& set : sets) {
    if (set->discovered.active.empty()) continue;
    any_endpoint = true;
    std::vector<Alert> alerts;
    if (set->config.alert_relabel_configs.empty()) {
      alerts = batch;
    } else {
      for (Alert a : batch) {
        if (RelabelAlert(a, Labels(), set->config.alert_relabel_configs)) {
          alerts.push_back(std::move(a));
        }
      }
    }
    if (alerts.empty()) continue;
    auto body = std::make_shared<const std::string>(EncodeAlertsV2(alerts));
    for (const auto& e : set->discovered.active) {
      jobs.push_back({e.url, &set->config, body, alerts.size(), Status::Ok()});
    }
  }
  if (!any_endpoint || jobs.empty()) {
    lk.lock();
    return any_endpoint;  // with endpoints, relabeling left nothing to send
  }
  auto post = [](Job& j) {
    j.result = PostAlerts(j.url, j.config->http, j.config->timeout_ms, *j.body);
  };
  if (jobs.size() == 1) {
    post(jobs[0]);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(jobs.size());
    for (Job& j : jobs) threads.emplace_back([&post, &j] { post(j); });
    for (auto& t : threads) t.join();
  }
  bool any_ok = false;
  lk.lock();
  for (const Job& j : jobs) {
    AlertmanagerStats& per = stats_.by_alertmanager[j.url];
    if (j.result.ok()) {
      any_ok = true;
      per.sent += j.count;
      stats_.sent += j.count;
    } else {
      per.errors += j.count;
      stats_.errors += j.count;
      LogWarn("notifier: " + j.result.message());
    }
  }
  return any_ok;
}

void Notifier::Run() {
  std::unique_lock lk(mu_);
  int64_t backoff_ms = 0;
  auto next_attempt = Clock::now();
  auto next_discovery = Clock::now() + std::chrono::milliseconds(options_.discovery_check_ms);
  auto take_batch = [&] {
    const size_t n = std::min(options_.max_batch_size, queue_.size());
    std::vector<Alert> batch(std::make_move_iterator(queue_.begin()),
                             std::make_move_iterator(queue_.begin() + static_cast<long>(n)));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(n));
    in_flight_ = n;
    return batch;
  };
  while (!stopping_) {
    auto wake = next_discovery;
    if (!queue_.empty()) wake = std::min(wake, next_attempt);
    cv_.wait_until(lk, wake);
    if (stopping_) break;
    const auto now = Clock::now();
    if (now >= next_discovery) {
      lk.unlock();
      Rediscover(false);
      lk.lock();
      next_discovery = Clock::now() + std::chrono::milliseconds(options_.discovery_check_ms);
      continue;
    }
    if (queue_.empty() || now < next_attempt) continue;
    std::vector<Alert> batch = take_batch();
    const bool done = SendBatch(batch, lk);
    in_flight_ = 0;
    if (done) {
      backoff_ms = 0;
      continue;
    }
    if (config_.alertmanagers.empty()) {
      // Alerting was switched off while the batch was out: nowhere to retry.
      stats_.dropped += batch.size();
      continue;
    }
    // Keep the batch, in order, ahead of what arrived meanwhile.
    queue_.insert(queue_.begin(), std::make_move_iterator(batch.begin()),
                  std::make_move_iterator(batch.end()));
    TrimQueueLocked();
    backoff_ms = backoff_ms == 0 ? options_.retry_min_backoff_ms
                                 : std::min(backoff_ms * 2, options_.retry_max_backoff_ms);
    next_attempt = Clock::now() + std::chrono::milliseconds(backoff_ms);
  }
  // Shutting down: one try for what is left, then give up on the rest.
  while (!queue_.empty()) {
    if (!options_.drain_on_shutdown) break;
    std::vector<Alert> batch = take_batch();
    const bool done = SendBatch(batch, lk);
    in_flight_ = 0;
    if (!done) {
      stats_.dropped += batch.size();
      break;
    }
  }
  stats_.dropped += queue_.size();
  queue_.clear();
}

}  // namespace gpumon::notifier
