#include "scrape/scrape_loop.h"

#include <chrono>
#include <unordered_set>

#include "common/log.h"
#include "exposition/format.h"
#include "exposition/parser.h"
#include "tsdb/sample.h"

namespace gpumon::scrape {
namespace {

constexpr const char* kSampleLimitExceeded = "sample limit exceeded";

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

LoopOptions LoopOptions::From(const ScrapeConfig& c) {
  LoopOptions o;
  o.honor_labels = c.honor_labels;
  o.honor_timestamps = c.honor_timestamps;
  o.sample_limit = c.sample_limit;
  o.label_limit = c.label_limit;
  o.label_name_length_limit = c.label_name_length_limit;
  o.label_value_length_limit = c.label_value_length_limit;
  o.body_size_limit = c.body_size_limit;
  o.metric_relabel_configs = c.metric_relabel_configs;
  return o;
}

const char* HealthName(Health h) {
  switch (h) {
    case Health::kUp:
      return "up";
    case Health::kDown:
      return "down";
    default:
      return "unknown";
  }
}

ScrapeLoop::ScrapeLoop(Target target, LoopOptions options, AppenderFactory appender,
                       Fetcher fetcher, Clock clock)
    : target_(std::move(target)),
      opts_(std::move(options)),
      make_appender_(std::move(appender)),
      fetch_(fetcher ? std::move(fetcher) : HttpFetcherFor(HttpClientConfig{})),
      clock_(clock ? std::move(clock) : Clock(WallMs)) {}

ScrapeLoop::~ScrapeLoop() { Stop(false); }

TargetStatus ScrapeLoop::Status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

int64_t ScrapeLoop::OffsetMs() const {
  return target_.interval_ms > 0 ? static_cast<int64_t>((target_.Hash() ^ opts_.offset_seed) %
                                                        static_cast<uint64_t>(target_.interval_ms))
                                 : 0;
}

Labels ScrapeLoop::MutateSampleLabels(std::vector<Label> scraped) const {
  auto find = [&scraped](std::string_view name) -> Label* {
    for (auto& l : scraped) {
      if (l.name == name) return &l;
    }
    return nullptr;
  };
  for (const auto& tl : target_.labels) {
    Label* existing = find(tl.name);
    if (opts_.honor_labels) {
      if (!existing) {
        scraped.push_back(tl);
      } else if (existing->value.empty()) {
        existing->value = tl.value;
      }
      continue;
    }
    if (existing && !existing->value.empty()) {
      // Keep the target's label; the scraped one moves aside, as far as
      // needed to find a free name.
      std::string name = "exported_" + tl.name;
      while (find(name)) name = "exported_" + name;
      existing = find(tl.name);
      existing->name = name;
    } else if (existing) {
      existing->value = tl.value;
      continue;
    }
    scraped.push_back(tl);
  }
  std::erase_if(scraped, [](const Label& l) { return l.value.empty(); });
  return Labels::FromUnsorted(std::move(scraped));
}

Labels ScrapeLoop::ReportLabels(std::string_view name) const {
  std::vector<Label> items(target_.labels.begin(), target_.labels.end());
  items.push_back({std::string(kMetricName), std::string(name)});
  return Labels::FromUnsorted(std::move(items));
}

gpumon::Status ScrapeLoop::NewEntry(std::vector<Label> scraped, CacheEntry& entry) const {
  Labels lset = MutateSampleLabels(std::move(scraped));
  if (!opts_.metric_relabel_configs.empty()) {
    auto relabeled = Relabel(lset, opts_.metric_relabel_configs);
    if (!relabeled || !relabeled->Has(kMetricName)) {  // dropped, or nothing to store under
      entry.dropped = true;
      return gpumon::Status::Ok();
    }
    lset = std::move(*relabeled);
  }
  if (opts_.label_limit > 0 && lset.size() > opts_.label_limit) {
    return gpumon::Status::Error("label_limit exceeded (metric: " + lset.ToString().substr(0, 50) +
                                 ", number of labels: " + std::to_string(lset.size()) +
                                 ", limit: " + std::to_string(opts_.label_limit) + ")");
  }
  for (const auto& l : lset) {
    if (opts_.label_name_length_limit > 0 && l.name.size() > opts_.label_name_length_limit) {
      return gpumon::Status::Error("label_name_length_limit exceeded (metric: " +
                                   lset.ToString().substr(0, 50) + ", label name: " + l.name + ")");
    }
    if (opts_.label_value_length_limit > 0 && l.value.size() > opts_.label_value_length_limit) {
      return gpumon::Status::Error("label_value_length_limit exceeded (metric: " +
                                   lset.ToString().substr(0, 50) + ", label: " + l.name + ")");
    }
  }
  entry.labels = std::move(lset);
  return gpumon::Status::Ok();
}

void ScrapeLoop::UpdateMetadata(const exposition::Entry& e) {
  std::lock_guard<std::mutex> lock(meta_mu_);
  auto it = meta_.find(e.name);
  if (it == meta_.end()) it = meta_.emplace(std::string(e.name), MetaEntry{}).first;
  MetaEntry& m = it->second;
  m.seen = iteration_;
  // Assign only on change: steady-state scrapes repeat the same text.
  switch (e.kind) {
    case exposition::EntryKind::kType:
      m.type = e.type;
      break;
    case exposition::EntryKind::kHelp:
      if (m.help != e.text) m.help.assign(e.text);
      break;
    case exposition::EntryKind::kUnit:
      if (m.unit != e.text) m.unit.assign(e.text);
      break;
    default:
      break;
  }
}

void ScrapeLoop::PruneMetadata() {
  std::lock_guard<std::mutex> lock(meta_mu_);
  std::erase_if(meta_, [this](const auto& kv) { return iteration_ - kv.second.seen > 10; });
}

std::vector<MetricMetadataEntry> ScrapeLoop::Metadata() const {
  std::vector<MetricMetadataEntry> out;
  std::lock_guard<std::mutex> lock(meta_mu_);
  out.reserve(meta_.size());
  for (const auto& [name, m] : meta_) {
    out.push_back({name, exposition::MetricTypeName(m.type), m.help, m.unit});
  }
  return out;
}

std::optional<MetricMetadataEntry> ScrapeLoop::GetMetadata(std::string_view metric) const {
  std::lock_guard<std::mutex> lock(meta_mu_);
  auto it = meta_.find(metric);
  if (it == meta_.end()) return std::nullopt;
  return MetricMetadataEntry{it->first, exposition::MetricTypeName(it->second.type),
                             it->second.help, it->second.unit};
}

gpumon::Status ScrapeLoop::Collect(const FetchResult& res, int64_t now_ms,
                                   std::vector<Pending>& out, uint64_t& scraped) {
  exposition::Parser parser(res.body, exposition::FormatFromContentType(res.content_type));
  exposition::Entry e;
  size_t cursor = 0;
  next_order_.clear();
  for (;;) {
    if (gpumon::Status s = parser.Next(e); !s.ok()) return s;
    if (e.kind == exposition::EntryKind::kEof) break;
    if (e.kind != exposition::EntryKind::kSample) {
      UpdateMetadata(e);
      continue;
    }
    ++scraped;
    // The series at the same place as in the last scrape, else a lookup.
    Cache::value_type* kv = nullptr;
    // Entries live in scattered heap nodes; fetch the ones a few samples
    // ahead (the node, then the key it points at) while parsing.
    if (cursor + 8 < order_.size()) __builtin_prefetch(order_[cursor + 8]);
    if (cursor + 4 < order_.size()) __builtin_prefetch(order_[cursor + 4]->first.data());
    if (cursor < order_.size() && order_[cursor]->first == e.series) {
      kv = order_[cursor];
    } else if (auto it = cache_.find(e.series); it != cache_.end()) {
      kv = &*it;
    } else {
      CacheEntry entry;
      std::vector<Label> items = exposition::ToLabels(e.labels);
      items.push_back({std::string(kMetricName), std::string(e.name)});
      if (gpumon::Status s = NewEntry(std::move(items), entry); !s.ok()) return s;
      kv = &*cache_.emplace(std::string(e.series), std::move(entry)).first;
    }
    if (kv->second.position < order_.size() && order_[kv->second.position] == kv) {
      cursor = kv->second.position + 1;
    }
    next_order_.push_back(kv);
    CacheEntry& entry = kv->second;
    if (entry.last_attempt == iteration_) continue;  // repeated series: first wins
    entry.last_attempt = iteration_;
    if (entry.dropped) continue;
    int64_t t = now_ms;
    if (opts_.honor_timestamps && e.timestamp_ms) t = *e.timestamp_ms;
    out.push_back({&entry, t, e.value});
    if (opts_.sample_limit > 0 && out.size() > opts_.sample_limit) {
      return gpumon::Status::Error(kSampleLimitExceeded);
    }
  }
  return gpumon::Status::Ok();
}

bool ScrapeLoop::AppendEntry(Appender& app, CacheEntry& e, int64_t t, double v) {
  auto ref = app.AppendRef(e.ref, e.labels, t, v);
  if (!ref.ok()) {
    // A ref the storage no longer holds, with no labels to fall back on:
    // forget the series so the next scrape builds its labels again.
    if (e.labels.empty()) {
      e.seen = 0;
      needs_sweep_ = true;
    }
    return false;
  }
  if (*ref != 0 && e.ref != *ref) {
    e.ref = *ref;
    e.labels = Labels();  // the ref is enough from now on
  }
  return true;
}

void ScrapeLoop::AppendReport(Appender& app, int64_t t, const double (&values)[5]) {
  static constexpr const char* kNames[5] = {
      "up", "scrape_duration_seconds", "scrape_samples_scraped",
      "scrape_samples_post_metric_relabeling", "scrape_series_added"};
  for (int i = 0; i < 5; ++i) {
    CacheEntry& e = report_[i];
    if (e.ref == 0 && e.labels.empty()) e.labels = ReportLabels(kNames[i]);
    if (!AppendEntry(app, e, t, values[i]) && e.labels.empty()) {
      e.labels = ReportLabels(kNames[i]);  // stale ref: retry by labels
      AppendEntry(app, e, t, values[i]);
    }
  }
}

void ScrapeLoop::ScrapeOnce(int64_t now_ms) {
  const auto start = std::chrono::steady_clock::now();
  const uint64_t previous = iteration_++;
  std::vector<Pending> samples;
  uint64_t scraped = 0;
  auto res = fetch_(target_.url, target_.timeout_ms, opts_.body_size_limit);
  gpumon::Status err = res.ok() ? Collect(*res, now_ms, samples, scraped) : res.status();
  if (err.ok()) PruneMetadata();
  const double duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Never write at or before the previous scrape's time (a clock step back
  // would make every sample out of order).
  now_ms = std::max(now_ms, last_t_ + 1);

  auto app = make_appender_();
  uint64_t added = 0;
  uint64_t appended = 0;
  uint64_t rejected = 0;
  if (err.ok()) {
    constexpr size_t kPrefetchDistance = 8;
    for (size_t i = 0; i < samples.size(); ++i) {
      if (i + kPrefetchDistance < samples.size()) {
        app->Prefetch(samples[i + kPrefetchDistance].entry->ref);
      }
      const Pending& p = samples[i];
      if (p.entry->seen != previous) ++added;
      p.entry->seen = iteration_;
      if (AppendEntry(*app, *p.entry, p.t, p.v)) {
        ++appended;
      } else {
        ++rejected;
      }
    }
  }
  // Series of the previous scrape missing from this one (all of them when
  // this one failed) go stale; long-gone series and entries of a failed
  // first sighting leave the cache.
  // Those are all in order_, the previous successful scrape's series.
  for (Cache::value_type* kv : order_) {
    CacheEntry& e = kv->second;
    if (e.seen == previous && !e.dropped) app->AppendRef(e.ref, e.labels, now_ms, tsdb::StaleNaN());
  }
  if (err.ok()) {
    for (size_t i = 0; i < next_order_.size(); ++i) {
      next_order_[i]->second.position = static_cast<uint32_t>(i);
    }
    order_.swap(next_order_);
  } else {
    order_.clear();
  }
  // A full pass over the cache is rare: when a scrape failed, a series
  // needs its labels again, or every 16 scrapes for series long gone.
  if (!err.ok() || needs_sweep_ || ++scrapes_since_sweep_ >= 16) {
    bool erased = false;
    for (auto it = cache_.begin(); it != cache_.end();) {
      CacheEntry& e = it->second;
      const bool gone =
          e.dropped ? e.last_attempt + 4 < iteration_ : e.seen == 0 || e.seen + 4 < iteration_;
      erased = erased || gone;
      it = gone ? cache_.erase(it) : std::next(it);
    }
    if (erased) order_.clear();  // it may point at erased entries
    needs_sweep_ = false;
    scrapes_since_sweep_ = 0;
  }
  const double report[5] = {err.ok() ? 1.0 : 0.0, duration_s, static_cast<double>(scraped),
                            static_cast<double>(samples.size()), static_cast<double>(added)};
  AppendReport(*app, now_ms, report);
  gpumon::Status committed = app->Commit();
  if (!committed.ok()) {
    LogWarn("scrape of " + target_.url + ": storage commit failed: " + committed.message());
    // Nothing of this scrape was stored (up included): it failed, as far
    // as anyone reading the data can tell, and the target page says why.
    if (err.ok()) err = gpumon::Status::Error("storing the scrape failed: " + committed.message());
    appended = 0;
  }
  if (rejected > 0) {
    Log(LogLevel::kDebug, "scrape of " + target_.url + ": " + std::to_string(rejected) +
                              " samples rejected by storage");
  }
  last_t_ = now_ms;
  wrote_report_ = true;

  std::lock_guard<std::mutex> lock(mu_);
  status_.health = err.ok() ? Health::kUp : Health::kDown;
  status_.last_error = err.ok() ? "" : err.message();
  status_.last_scrape_ms = now_ms;
  status_.last_duration_s = duration_s;
  status_.last_samples = appended;
  ++status_.scrapes_total;
  if (!err.ok()) ++status_.scrape_failures_total;
  if (!err.ok() && err.message() == kSampleLimitExceeded) ++status_.sample_limit_exceeded_total;
  status_.samples_appended_total += appended;
}

void ScrapeLoop::Start() {
  std::lock_guard<std::mutex> lock(run_mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void ScrapeLoop::Run() {
  const int64_t interval = std::max<int64_t>(target_.interval_ms, 1);
  const int64_t offset = OffsetMs();
  int64_t now = clock_();
  int64_t next = now - now % interval + offset;
  if (next < now) next += interval;
  std::unique_lock<std::mutex> lock(run_mu_);
  for (;;) {
    const int64_t wait = next - clock_();
    if (wait > 0 && cv_.wait_for(lock, std::chrono::milliseconds(wait), [this] { return stop_; })) {
      return;
    }
    if (stop_) return;
    lock.unlock();
    ScrapeOnce(clock_());
    lock.lock();
    next += interval;
    now = clock_();
    // A scrape that overran skips the slots it missed instead of bursting.
    if (next <= now) next += ((now - next) / interval + 1) * interval;
  }
}

void ScrapeLoop::Stop(bool mark_stale) {
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!mark_stale || !wrote_report_) return;
  const int64_t t = std::max(clock_(), last_t_ + 1);
  auto app = make_appender_();
  for (auto& [key, e] : cache_) {
    if (e.seen == iteration_ && !e.dropped) app->AppendRef(e.ref, e.labels, t, tsdb::StaleNaN());
  }
  const double stale = tsdb::StaleNaN();
  AppendReport(*app, t, {stale, stale, stale, stale, stale});
  if (gpumon::Status s = app->Commit(); !s.ok()) {
    LogWarn("stale markers for " + target_.url + ": " + s.message());
  }
  cache_.clear();
  order_.clear();
  next_order_.clear();
  wrote_report_ = false;
}

}  // namespace gpumon::scrape
