#include "scrape/scrape_loop.h"

#include <chrono>
#include <unordered_set>

#include "common/log.h"
#include "exposition/format.h"
#include "exposition/parser.h"
#include "tsdb/sample.h"

namespace gpumon::scrape {
namespace {

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
      fetch_(std::move(fetcher)),
      clock_(clock ? std::move(clock) : Clock(WallMs)) {}

ScrapeLoop::~ScrapeLoop() { Stop(false); }

TargetStatus ScrapeLoop::Status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

int64_t ScrapeLoop::OffsetMs() const {
  return target_.interval_ms > 0
             ? static_cast<int64_t>(target_.Hash() % static_cast<uint64_t>(target_.interval_ms))
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

gpumon::Status ScrapeLoop::Collect(const FetchResult& res, int64_t now_ms,
                                   std::vector<Scraped>& out, uint64_t& scraped) {
  exposition::Parser parser(res.body, exposition::FormatFromContentType(res.content_type));
  exposition::Entry e;
  for (;;) {
    if (gpumon::Status s = parser.Next(e); !s.ok()) return s;
    if (e.kind == exposition::EntryKind::kEof) break;
    if (e.kind != exposition::EntryKind::kSample) continue;
    ++scraped;
    std::vector<Label> items = exposition::ToLabels(e.labels);
    items.push_back({std::string(kMetricName), std::string(e.name)});
    Labels lset = MutateSampleLabels(std::move(items));
    if (!opts_.metric_relabel_configs.empty()) {
      auto relabeled = Relabel(lset, opts_.metric_relabel_configs);
      if (!relabeled) continue;
      lset = std::move(*relabeled);
      if (!lset.Has(kMetricName)) continue;  // nothing to store under
    }
    if (opts_.label_limit > 0 && lset.size() > opts_.label_limit) {
      return gpumon::Status::Error(
          "label_limit exceeded (metric: " + lset.ToString().substr(0, 50) +
          ", number of labels: " + std::to_string(lset.size()) +
          ", limit: " + std::to_string(opts_.label_limit) + ")");
    }
    for (const auto& l : lset) {
      if (opts_.label_name_length_limit > 0 && l.name.size() > opts_.label_name_length_limit) {
        return gpumon::Status::Error(
            "label_name_length_limit exceeded (metric: " + lset.ToString().substr(0, 50) +
            ", label name: " + l.name + ")");
      }
      if (opts_.label_value_length_limit > 0 && l.value.size() > opts_.label_value_length_limit) {
        return gpumon::Status::Error("label_value_length_limit exceeded (metric: " +
                                     lset.ToString().substr(0, 50) + ", label: " + l.name + ")");
      }
    }
    int64_t t = now_ms;
    if (opts_.honor_timestamps && e.timestamp_ms) t = *e.timestamp_ms;
    out.push_back({std::move(lset), t, e.value});
    if (opts_.sample_limit > 0 && out.size() > opts_.sample_limit) {
      return gpumon::Status::Error("sample limit exceeded");
    }
  }
  return gpumon::Status::Ok();
}

void ScrapeLoop::ScrapeOnce(int64_t now_ms) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Scraped> samples;
  uint64_t scraped = 0;
  auto res = fetch_(target_.url, target_.timeout_ms, opts_.body_size_limit);
  gpumon::Status err = res.ok() ? Collect(*res, now_ms, samples, scraped) : res.status();
  const double duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Never write at or before the previous scrape's time (a clock step back
  // would make every sample out of order).
  now_ms = std::max(now_ms, last_t_ + 1);

  auto app = make_appender_();
  std::unordered_map<uint64_t, Labels> current;
  uint64_t added = 0;
  uint64_t appended = 0;
  uint64_t rejected = 0;
  if (err.ok()) {
    for (auto& s : samples) {
      const uint64_t h = s.labels.Hash();
      if (!current.emplace(h, s.labels).second) continue;  // repeated series: first wins
      if (!last_series_.count(h)) ++added;
      if (app->Append(s.labels, s.t, s.v).ok()) {
        ++appended;
      } else {
        ++rejected;
      }
    }
  }
  for (const auto& [h, labels] : last_series_) {
    if (!current.count(h)) app->Append(labels, now_ms, tsdb::StaleNaN());
  }
  const uint64_t post_relabel = samples.size();
  app->Append(ReportLabels("up"), now_ms, err.ok() ? 1 : 0);
  app->Append(ReportLabels("scrape_duration_seconds"), now_ms, duration_s);
  app->Append(ReportLabels("scrape_samples_scraped"), now_ms, static_cast<double>(scraped));
  app->Append(ReportLabels("scrape_samples_post_metric_relabeling"), now_ms,
              static_cast<double>(post_relabel));
  app->Append(ReportLabels("scrape_series_added"), now_ms, static_cast<double>(added));
  gpumon::Status committed = app->Commit();
  if (!committed.ok()) {
    LogWarn("scrape of " + target_.url + ": storage commit failed: " + committed.message());
  }
  if (rejected > 0) {
    Log(LogLevel::kDebug, "scrape of " + target_.url + ": " + std::to_string(rejected) +
                              " samples rejected by storage");
  }
  last_series_ = std::move(current);
  last_t_ = now_ms;
  wrote_report_ = true;

  std::lock_guard<std::mutex> lock(mu_);
  status_.health = err.ok() ? Health::kUp : Health::kDown;
  status_.last_error = err.ok() ? "" : err.message();
  status_.last_scrape_ms = now_ms;
  status_.last_duration_s = duration_s;
  status_.last_samples = appended;
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
  if (!mark_stale || (!wrote_report_ && last_series_.empty())) return;
  const int64_t t = std::max(clock_(), last_t_ + 1);
  auto app = make_appender_();
  for (const auto& [h, labels] : last_series_) app->Append(labels, t, tsdb::StaleNaN());
  if (wrote_report_) {
    for (const char* name : {"up", "scrape_duration_seconds", "scrape_samples_scraped",
                             "scrape_samples_post_metric_relabeling", "scrape_series_added"}) {
      app->Append(ReportLabels(name), t, tsdb::StaleNaN());
    }
  }
  if (gpumon::Status s = app->Commit(); !s.ok()) {
    LogWarn("stale markers for " + target_.url + ": " + s.message());
  }
  last_series_.clear();
  wrote_report_ = false;
}

}  // namespace gpumon::scrape
