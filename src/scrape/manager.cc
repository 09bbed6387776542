#include "scrape/manager.h"

#include <glob.h>

#include <chrono>
#include <set>

#include "common/log.h"

namespace gpumon::scrape {
namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

void StopAll(std::vector<std::unique_ptr<ScrapeLoop>>& loops, bool stale) {
  for (auto& l : loops) l->Stop(stale);
  loops.clear();
}

}  // namespace

Manager::Manager(AppenderFactory appender, Fetcher fetcher)
    : appender_(std::move(appender)), fetcher_(std::move(fetcher)) {
  discovery_ = std::thread([this] { DiscoveryLoop(); });
}

Manager::~Manager() { Stop(); }

std::vector<std::unique_ptr<ScrapeLoop>> Manager::SyncLocked(Pool& pool, bool force) {
  const ScrapeConfig& sc = pool.config;
  const int64_t now = SteadyMs();
  if (!sc.file_sd_configs.empty() && (force || now >= pool.next_refresh_ms)) {
    int64_t refresh = INT64_MAX;
    std::set<std::string> present;
    for (const auto& fsd : sc.file_sd_configs) {
      refresh = std::min(refresh, std::max<int64_t>(fsd.refresh_interval_ms, 100));
      for (const auto& pattern : fsd.files) {
        for (const auto& path : Glob(pattern)) {
          present.insert(path);
          auto groups = ReadTargetFile(path);
          if (!groups.ok()) {
            LogWarn("file discovery for job \"" + sc.job_name + "\": " + groups.status().message());
            continue;  // keep what the file gave before
          }
          pool.file_groups[path] = std::move(*groups);
        }
      }
    }
    std::erase_if(pool.file_groups, [&](const auto& kv) { return !present.count(kv.first); });
    pool.next_refresh_ms = now + refresh;
  } else if (!force) {
    return {};
  }
  std::vector<TargetGroup> groups = sc.static_configs;
  for (const auto& [path, gs] : pool.file_groups) groups.insert(groups.end(), gs.begin(), gs.end());
  std::vector<std::string> errors;
  std::vector<Target> targets = BuildTargets(groups, sc, &errors);
  for (const auto& e : errors) LogWarn("creating target failed: " + e);
  if (sc.target_limit > 0 && targets.size() > sc.target_limit) {
    LogError("job \"" + sc.job_name + "\": target_limit exceeded (number of targets: " +
             std::to_string(targets.size()) + ", limit: " + std::to_string(sc.target_limit) + ")");
    targets.clear();
  }
  std::vector<std::unique_ptr<ScrapeLoop>> gone;
  std::set<uint64_t> want;
  const LoopOptions opts = LoopOptions::From(sc);
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
    std::set<std::string> jobs;
    for (const auto& sc : config.scrape_configs) {
      jobs.insert(sc.job_name);
      auto it = pools_.find(sc.job_name);
      if (it != pools_.end() && it->second->config.fingerprint == sc.fingerprint &&
          it->second->config.scrape_interval_ms == sc.scrape_interval_ms &&
          it->second->config.scrape_timeout_ms == sc.scrape_timeout_ms) {
        continue;  // unchanged: keep its loops running
      }
      auto pool = std::make_unique<Pool>();
      pool->config = sc;
      if (it != pools_.end()) {
        // The job changed: its loops restart (targets that stay are not
        // marked stale, those that go are, after the new pool syncs).
        for (auto& [h, loop] : it->second->loops) restarted.push_back(std::move(loop));
        pools_.erase(it);
      }
      auto gone = SyncLocked(*pool, true);
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
  for (auto& l : restarted) {
    if (l) l->Stop(false);
  }
  StopAll(stale, true);
  return Status::Ok();
}

void Manager::DiscoveryLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(200));
    if (stop_) break;
    std::vector<std::unique_ptr<ScrapeLoop>> gone;
    for (auto& [name, pool] : pools_) {
      auto g = SyncLocked(*pool, false);
      for (auto& l : g) gone.push_back(std::move(l));
    }
    if (!gone.empty()) {
      lock.unlock();
      StopAll(gone, true);
      lock.lock();
    }
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

std::vector<TargetSnapshot> Manager::Targets() const {
  std::vector<TargetSnapshot> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, pool] : pools_) {
    for (const auto& [h, loop] : pool->loops) {
      const Target& t = loop->target();
      TargetStatus st = loop->Status();
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
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::map<std::string, size_t> Manager::PoolSizes() const {
  std::map<std::string, size_t> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, pool] : pools_) out[name] = pool->loops.size();
  return out;
}

}  // namespace gpumon::scrape
