#include "scrape/manager.h"

#include <unistd.h>

#include <chrono>
#include <set>

#include "common/log.h"

namespace gpumon::scrape {
namespace {

// Discovery never refreshes more often than this, whatever the config says.
constexpr int64_t kMinRefreshMs = 100;

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t NextRefresh(int64_t now, const discovery::Discoverer& d) {
  return now + std::max(d.RefreshIntervalMs(), kMinRefreshMs);
}

void StopAll(std::vector<std::unique_ptr<ScrapeLoop>>& loops, bool stale) {
  for (auto& l : loops) l->Stop(stale);
  loops.clear();
}

// FNV-1a over the host name and the external labels: servers that differ
// in either spread their scrapes of one target differently.
uint64_t OffsetSeed(const Labels& external_labels) {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  uint64_t h = 14695981039346656037ULL;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  mix(host);
  for (const auto& l : external_labels) {
    mix(l.name);
    mix(l.value);
  }
  return h;
}

}  // namespace

Manager::Manager(AppenderFactory appender, Fetcher fetcher, discovery::Options discovery)
    : appender_(std::move(appender)),
      fetcher_(std::move(fetcher)),
      discovery_options_(std::move(discovery)) {
  discovery_ = std::thread([this] { DiscoveryLoop(); });
}

Manager::~Manager() { Stop(); }

std::vector<std::unique_ptr<ScrapeLoop>> Manager::SyncLocked(Pool& pool) {
  const ScrapeConfig& sc = pool.config;
  std::vector<Target> targets;
  std::set<uint64_t> seen;
  pool.dropped.clear();
  std::unique_ptr<ScrapeConfig> unrelabeled;  // to recover a dropped target's labels
  for (const auto& source : pool.sources) {
    for (const auto& group : source.groups) {
      for (const auto& address : group.targets) {
        auto t = BuildTarget(address, group, sc);
        if (!t.ok()) {
          LogWarn("creating target failed: job \"" + sc.job_name + "\", target \"" + address +
                  "\": " + t.status().message());
          continue;
        }
        if (!t->has_value()) {
          // BuildTarget without rules yields the labels relabeling saw.
          if (!unrelabeled) {
            unrelabeled = std::make_unique<ScrapeConfig>(sc);
            unrelabeled->relabel_configs.clear();
          }
          auto bare = BuildTarget(address, group, *unrelabeled);
          if (bare.ok() && bare->has_value()) {
            pool.dropped.push_back({(*bare)->discovered, sc.job_name});
          }
          continue;
        }
        if (!seen.insert((*t)->Hash()).second) continue;
        targets.push_back(std::move(**t));
      }
    }
  }
  if (sc.target_limit > 0 && targets.size() > sc.target_limit) {
    LogError("job \"" + sc.job_name + "\": target_limit exceeded (number of targets: " +
             std::to_string(targets.size()) + ", limit: " + std::to_string(sc.target_limit) + ")");
    targets.clear();
  }
  std::vector<std::unique_ptr<ScrapeLoop>> gone;
  std::set<uint64_t> want;
  LoopOptions opts = LoopOptions::From(sc);
  opts.offset_seed = offset_seed_;
  for (auto& t : targets) {
    const uint64_t h = t.Hash();
    want.insert(h);
    if (pool.loops.count(h)) continue;
    Fetcher fetch = fetcher_ ? fetcher_ : HttpFetcherFor(pool.config.http);
    auto loop = std::make_unique<ScrapeLoop>(std::move(t), opts, appender_, std::move(fetch));
    loop->Start();
    pool.loops.emplace(h, std::move(loop));
  }
  for (auto it = pool.loops.begin(); it != pool.loops.end();) {
    if (want.count(it->first)) {
      ++it;
    } else {
      gone.push_back(std::move(it->second));
      it = pool.loops.erase(it);
    }
  }
  return gone;
}

Status Manager::ApplyConfig(const Config& config) {
  std::vector<std::unique_ptr<ScrapeLoop>> stale, restarted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::Error("scrape manager stopped");
    offset_seed_ = OffsetSeed(config.global.external_labels);
    const int64_t now = SteadyMs();
    std::set<std::string> jobs;
    for (const auto& sc : config.scrape_configs) {
      jobs.insert(sc.job_name);
      auto it = pools_.find(sc.job_name);
      if (it != pools_.end() && it->second->config.fingerprint == sc.fingerprint &&
          it->second->config.scrape_interval_ms == sc.scrape_interval_ms &&
          it->second->config.scrape_timeout_ms == sc.scrape_timeout_ms) {
        continue;  // unchanged: keep its loops and discoverers running
      }
      auto pool = std::make_unique<Pool>();
      pool->config = sc;
      pool->generation = next_generation_++;
      for (auto& d : discovery::NewDiscoverers(sc, discovery_options_)) {
        Source src;
        src.discoverer = std::move(d);
        pool->sources.push_back(std::move(src));
      }
      for (auto& src : pool->sources) {
        if (src.discoverer->Local()) {
          auto groups = src.discoverer->Refresh();
          if (groups.ok()) {
            src.groups = std::move(*groups);
          } else {
            LogWarn(src.discoverer->Name() + ": " + groups.status().message());
          }
          src.next_refresh_ms = NextRefresh(now, *src.discoverer);
        } else if (it != pools_.end()) {
          // Until its first refresh, a network mechanism of a changed job
          // keeps what the same entry of the old job found, so that
          // unchanged targets are not marked stale and restarted.
          for (const auto& old : it->second->sources) {
            if (old.discoverer->Name() == src.discoverer->Name()) src.groups = old.groups;
          }
        }
      }
      if (it != pools_.end()) {
        // The job changed: its loops restart (targets that stay are not
        // marked stale, those that go are, after the new pool syncs).
        for (auto& [h, loop] : it->second->loops) restarted.push_back(std::move(loop));
        pools_.erase(it);
      }
      auto gone = SyncLocked(*pool);
      for (auto& g : gone) stale.push_back(std::move(g));
      pools_[sc.job_name] = std::move(pool);
    }
    for (auto it = pools_.begin(); it != pools_.end();) {
      if (jobs.count(it->first)) {
        ++it;
        continue;
      }
      for (auto& [h, loop] : it->second->loops) stale.push_back(std::move(loop));
      it = pools_.erase(it);
    }
    // A restarted target still present in its new pool is not stale.
    for (auto& loop : restarted) {
      const auto& pool = pools_.find(loop->target().scrape_pool);
      bool kept = pool != pools_.end() && pool->second->loops.count(loop->target().Hash());
      if (!kept) stale.push_back(std::move(loop));
    }
  }
  cv_.notify_all();  // network discovery of new pools starts now
  for (auto& l : restarted) {
    if (l) l->Stop(false);
  }
  StopAll(stale, true);
  return Status::Ok();
}

void Manager::RefreshDue(std::unique_lock<std::mutex>& lock) {
  struct Due {
    std::string pool;
    uint64_t generation;
    size_t index;
    std::shared_ptr<discovery::Discoverer> discoverer;
  };
  std::vector<Due> due;
  const int64_t now = SteadyMs();
  for (auto& [name, pool] : pools_) {
    for (size_t i = 0; i < pool->sources.size(); ++i) {
      Source& src = pool->sources[i];
      if (now < src.next_refresh_ms) continue;
      src.next_refresh_ms = NextRefresh(now, *src.discoverer);
      due.push_back({name, pool->generation, i, src.discoverer});
    }
  }
  if (due.empty()) return;
  std::vector<Result<std::vector<TargetGroup>>> results;
  lock.unlock();
  for (auto& d : due) {
    results.push_back(d.discoverer->Refresh());
    // A reload or Stop while refreshing takes effect before the next one.
    std::lock_guard<std::mutex> check(mu_);
    if (stop_) break;
  }
  lock.lock();
  std::set<std::string> changed;
  for (size_t i = 0; i < results.size(); ++i) {
    const Due& d = due[i];
    auto it = pools_.find(d.pool);
    if (it == pools_.end() || it->second->generation != d.generation) continue;  // replaced
    if (!results[i].ok()) {
      LogWarn(d.discoverer->Name() +
              ": refresh failed, keeping the previous targets: " + results[i].status().message());
      continue;
    }
    it->second->sources[d.index].groups = std::move(results[i]).value();
    changed.insert(d.pool);
  }
  std::vector<std::unique_ptr<ScrapeLoop>> gone;
  for (const auto& name : changed) {
    for (auto& l : SyncLocked(*pools_[name])) gone.push_back(std::move(l));
  }
  if (!gone.empty()) {
    lock.unlock();
    StopAll(gone, true);
    lock.lock();
  }
}

void Manager::DiscoveryLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    RefreshDue(lock);
    if (stop_) break;
    cv_.wait_for(lock, std::chrono::milliseconds(200));
  }
}

void Manager::Stop() {
  std::vector<std::unique_ptr<ScrapeLoop>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& [name, pool] : pools_) {
      for (auto& [h, loop] : pool->loops) all.push_back(std::move(loop));
    }
    pools_.clear();
  }
  cv_.notify_all();
  if (discovery_.joinable()) discovery_.join();
  StopAll(all, true);
}

TargetSnapshot SnapshotOf(const ScrapeLoop& loop) {
  const Target& t = loop.target();
  const TargetStatus st = loop.Status();
  TargetSnapshot s;
  s.labels = t.labels;
  s.discovered_labels = t.discovered;
  s.scrape_pool = t.scrape_pool;
  s.scrape_url = t.url;
  s.last_error = st.last_error;
  s.last_scrape_ms = st.last_scrape_ms;
  s.last_scrape_duration_s = st.last_duration_s;
  s.health = st.health;
  s.scrape_interval_ms = t.interval_ms;
  s.scrape_timeout_ms = t.timeout_ms;
  s.scrapes_total = st.scrapes_total;
  s.scrape_failures_total = st.scrape_failures_total;
  s.samples_appended_total = st.samples_appended_total;
  s.sample_limit_exceeded_total = st.sample_limit_exceeded_total;
  return s;
}

std::vector<TargetMetadata> Manager::Metadata() const {
  std::vector<TargetMetadata> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, pool] : pools_) {
    for (const auto& [h, loop] : pool->loops) {
      out.push_back({loop->target().labels, loop->Metadata()});
    }
  }
  return out;
}

std::vector<TargetSnapshot> Manager::Targets() const {
  std::vector<TargetSnapshot> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, pool] : pools_) {
    for (const auto& [h, loop] : pool->loops) {
      out.push_back(SnapshotOf(*loop));
    }
  }
  return out;
}

std::vector<DroppedTargetSnapshot> Manager::DroppedTargets() const {
  std::vector<DroppedTargetSnapshot> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, pool] : pools_) {
    out.insert(out.end(), pool->dropped.begin(), pool->dropped.end());
  }
  return out;
}

std::map<std::string, size_t> Manager::DroppedTargetCounts() const {
  std::map<std::string, size_t> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, pool] : pools_) out[name] = pool->dropped.size();
  return out;
}

std::map<std::string, size_t> Manager::PoolSizes() const {
  std::map<std::string, size_t> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, pool] : pools_) out[name] = pool->loops.size();
  return out;
}

}  // namespace gpumon::scrape
