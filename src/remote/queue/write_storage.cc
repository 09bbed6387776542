#include "remote/queue/write_storage.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <shared_mutex>

#include "common/log.h"
#include "remote/queue/series_refs.h"
#include "scrape/relabel.h"

namespace gpumon::remote {
namespace {

namespace fs = std::filesystem;

void Field(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

// Every field that changes what or how a queue sends.
std::string Fingerprint(const scrape::RemoteWriteConfig& c) {
  std::string f;
  Field(f, c.url);
  Field(f, c.name);
  Field(f, std::to_string(c.remote_timeout_ms));
  for (const auto& [k, v] : c.headers) {
    Field(f, k);
    Field(f, v);
  }
  f += '|';
  for (const scrape::RelabelConfig& r : c.write_relabel_configs) {
    for (const std::string& s : r.source_labels) Field(f, s);
    Field(f, r.separator);
    Field(f, r.regex);
    Field(f, std::to_string(r.modulus));
    Field(f, r.target_label);
    Field(f, r.replacement);
    Field(f, scrape::RelabelActionName(r.action));
  }
  f += '|';
  const scrape::RemoteWriteQueueConfig& q = c.queue;
  for (int64_t v : {int64_t{q.capacity}, int64_t{q.max_shards}, int64_t{q.min_shards},
                    int64_t{q.max_samples_per_send}, q.batch_send_deadline_ms, q.min_backoff_ms,
                    q.max_backoff_ms, int64_t{q.retry_on_http_429}, q.sample_age_limit_ms}) {
    Field(f, std::to_string(v));
  }
  const scrape::HttpClientConfig& h = c.http;
  for (const std::string* s :
       {&h.basic_auth_username, &h.basic_auth_password, &h.basic_auth_password_file,
        &h.authorization_type, &h.authorization_credentials, &h.authorization_credentials_file,
        &h.tls_ca_file, &h.tls_cert_file, &h.tls_key_file, &h.tls_server_name}) {
    Field(f, *s);
  }
  f += h.tls_insecure_skip_verify ? '1' : '0';
  f += h.follow_redirects ? '1' : '0';
  return f;
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string RemoteWriteQueueName(const scrape::RemoteWriteConfig& config) {
  std::string name = config.name;
  if (name.empty()) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%08llx",
                  static_cast<unsigned long long>(Fnv1a(Fingerprint(config)) >> 32));
    name = buf;
  }
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  if (name == "." || name == "..") name = "_" + name;
  return name;
}

struct WriteStorage::State {
  mutable std::shared_mutex mu;  // exclusive while queues are swapped
  struct Entry {
    std::string dir_name;
    std::string fingerprint;
    Labels external_labels;
    std::shared_ptr<QueueManager> queue;
  };
  std::vector<Entry> entries;
  std::atomic<bool> active{false};  // any queue: appenders buffer only then

  SeriesRefs refs;
  std::atomic<int64_t> last_sweep_s{0};

  void Enqueue(std::span<const QueuedSample> samples) {
    std::shared_lock<std::shared_mutex> lock(mu);
    for (Entry& e : entries) {
      Status s = e.queue->Append(samples);
      if (!s.ok()) LogError("remote_write " + e.dir_name + ": " + s.message());
    }
  }

  // Forgets series refs unused for three hours or more (callers re-resolve a
  // forgotten ref by labels), so churned series do not pile up.
  void MaybeSweep() {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    int64_t last = last_sweep_s.load(std::memory_order_relaxed);
    if (last == 0) {
      last_sweep_s.compare_exchange_strong(last, now);
      return;
    }
    if (now - last < kSweepIntervalS) return;
    if (last_sweep_s.compare_exchange_strong(last, now)) refs.Sweep();
  }
  static constexpr int64_t kSweepIntervalS = 3 * 3600;
};

namespace {

class QueueingAppender : public scrape::Appender {
 public:
  QueueingAppender(std::unique_ptr<scrape::Appender> inner,
                   std::shared_ptr<WriteStorage::State> state)
      : inner_(std::move(inner)), state_(std::move(state)), active_(state_->active.load()) {}

  Status Append(const Labels& labels, int64_t t_ms, double v) override {
    Status s = inner_->Append(labels, t_ms, v);
    if (s.ok() && active_) buffer_.push_back({labels, t_ms, v});
    return s;
  }
  // With remote write active, hands out our own refs so that the labels of
  // every sample are known even when the caller passes only a ref. With no
  // queue configured it passes the storage's refs through (tagged), keeping
  // no per-series state at all.
  Result<uint64_t> AppendRef(uint64_t ref, const Labels& labels, int64_t t_ms, double v) override {
    if (!active_) return PassThrough(ref, labels, t_ms, v);
    if ((ref & kPassThroughTag) != 0) {
      if (!labels.empty()) {
        ref = 0;  // resolve by labels below
      } else {
        // A ref from before remote write was enabled: the sample is stored,
        // and the error makes the caller pass labels next time, from when
        // on its samples are queued too.
        auto r = inner_->AppendRef(ref & ~kPassThroughTag, labels, t_ms, v);
        if (!r.ok()) return r.status();
        return Status::Error("series ref predates remote write; labels needed");
      }
    }
    std::optional<SeriesRefs::Series> series = state_->refs.Resolve(ref, labels);
    if (!series) return Status::Error("series ref unknown to this appender");
    auto inner_ref = inner_->AppendRef(series->inner_ref, series->labels, t_ms, v);
    if (!inner_ref.ok()) return inner_ref.status();
    if (*inner_ref != series->inner_ref) state_->refs.SetInner(series->ref, *inner_ref);
    if (active_) buffer_.push_back({series->labels, t_ms, v});
    return series->ref;
  }
  void Prefetch(uint64_t ref) override {
    if (!active_ && (ref & kPassThroughTag) != 0) inner_->Prefetch(ref & ~kPassThroughTag);
  }
  Status Commit() override {
    Status s = inner_->Commit();
    if (s.ok() && !buffer_.empty()) state_->Enqueue(buffer_);
    buffer_.clear();
    state_->MaybeSweep();
    return s;
  }
  void Rollback() override {
    inner_->Rollback();
    buffer_.clear();
  }

 private:
  static constexpr uint64_t kPassThroughTag = uint64_t{1} << 63;

  Result<uint64_t> PassThrough(uint64_t ref, const Labels& labels, int64_t t_ms, double v) {
    uint64_t inner_ref = 0;
    if ((ref & kPassThroughTag) != 0) {
      inner_ref = ref & ~kPassThroughTag;
    } else if (ref != 0) {
      // One of our refs from while remote write was active.
      std::optional<SeriesRefs::Series> series = state_->refs.Resolve(ref, labels);
      if (!series && labels.empty()) return Status::Error("series ref unknown to this appender");
      if (series) inner_ref = series->inner_ref;
    }
    auto r = inner_->AppendRef(inner_ref, labels, t_ms, v);
    if (!r.ok()) return r.status();
    // An inner storage without refs (0) keeps the caller passing labels.
    return *r == 0 ? uint64_t{0} : (*r | kPassThroughTag);
  }

  std::unique_ptr<scrape::Appender> inner_;
  std::shared_ptr<WriteStorage::State> state_;
  bool active_;
  std::vector<QueuedSample> buffer_;
};

}  // namespace

WriteStorage::WriteStorage(std::string dir, WriteStorageOptions options)
    : dir_(std::move(dir)), options_(std::move(options)), state_(std::make_shared<State>()) {}

WriteStorage::~WriteStorage() { Stop(); }

scrape::AppenderFactory WriteStorage::Wrap(scrape::AppenderFactory inner) {
  return [inner = std::move(inner), state = state_]() -> std::unique_ptr<scrape::Appender> {
    return std::make_unique<QueueingAppender>(inner(), state);
  };
}

Status WriteStorage::ApplyConfig(const std::vector<scrape::RemoteWriteConfig>& configs,
                                 Labels external_labels) {
  // Validate everything first so that a bad reload changes nothing.
  std::vector<scrape::RemoteWriteConfig> checked = configs;
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < checked.size(); ++i) {
    scrape::RemoteWriteConfig& c = checked[i];
    const std::string where = "remote_write[" + std::to_string(i) + "]";
    if (c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0) {
      return Status::Error(where + ": field \"url\": \"" + c.url + "\" is not an http(s) URL");
    }
    for (const auto& [header, value] : c.headers) {
      if (scrape::IsReservedRemoteWriteHeader(header)) {
        return Status::Error(where + ": field \"headers\": " + header +
                             " is a reserved header. It must not be changed");
      }
    }
    for (size_t r = 0; r < c.write_relabel_configs.size(); ++r) {
      if (c.write_relabel_configs[r].compiled) continue;
      Status s = c.write_relabel_configs[r].Compile();
      if (!s.ok()) {
        return s.WithContext(where + ": field \"write_relabel_configs[" + std::to_string(r) +
                             "]\"");
      }
    }
    if (c.queue.max_samples_per_send <= 0 || c.queue.min_shards <= 0 ||
        c.queue.max_shards < c.queue.min_shards) {
      return Status::Error(where +
                           ": field \"queue_config\": need max_samples_per_send > 0 and "
                           "0 < min_shards <= max_shards");
    }
    std::string dir_name = RemoteWriteQueueName(c);
    if (auto [it, fresh] = names.emplace(dir_name, i); !fresh) {
      return Status::Error(where + ": found multiple remote write configs with job name \"" +
                           dir_name + "\" (also remote_write[" + std::to_string(it->second) + "])");
    }
    if (c.name.empty()) c.name = dir_name;
  }

  std::unique_lock<std::shared_mutex> lock(state_->mu);
  std::vector<State::Entry> old = std::move(state_->entries);
  state_->entries.clear();
  std::vector<State::Entry> next;
  Status failed;
  for (const scrape::RemoteWriteConfig& c : checked) {
    const std::string dir_name = RemoteWriteQueueName(c);
    const std::string fingerprint = Fingerprint(c);
    auto it = std::find_if(old.begin(), old.end(),
                           [&](const State::Entry& e) { return e.dir_name == dir_name; });
    if (it != old.end()) {
      if (it->fingerprint == fingerprint && it->external_labels == external_labels) {
        next.push_back(std::move(*it));
        old.erase(it);
        continue;
      }
      // Changed: the old sender must let go of the directory first.
      it->queue->Stop();
      old.erase(it);
    }
    QueueManagerOptions qo;
    qo.disk = options_.disk;
    qo.user_agent = options_.user_agent;
    auto q = QueueManager::Start(c, external_labels, dir_ + "/" + dir_name, qo);
    if (!q.ok()) {
      failed = q.status();
      continue;  // keep going: the other endpoints still deserve their data
    }
    next.push_back({dir_name, fingerprint, external_labels, std::move(q).value()});
  }
  for (State::Entry& e : old) e.queue->Stop();
  // Directories no configured endpoint claims hold data with no receiver.
  std::error_code ec;
  if (fs::is_directory(dir_, ec)) {
    for (const auto& d : fs::directory_iterator(dir_, ec)) {
      std::string name = d.path().filename().string();
      bool claimed = std::any_of(checked.begin(), checked.end(),
                                 [&](const auto& c) { return RemoteWriteQueueName(c) == name; });
      if (!claimed && d.is_directory()) {
        LogInfo("remote_write: removing queue of unconfigured endpoint " + d.path().string());
        fs::remove_all(d.path(), ec);
      }
    }
  }
  state_->entries = std::move(next);
  state_->active = !state_->entries.empty();
  return failed;
}

void WriteStorage::Stop() {
  std::unique_lock<std::shared_mutex> lock(state_->mu);
  for (State::Entry& e : state_->entries) e.queue->Stop();
  state_->entries.clear();
  state_->active = false;
}

std::vector<QueueStats> WriteStorage::Stats() const {
  std::shared_lock<std::shared_mutex> lock(state_->mu);
  std::vector<QueueStats> out;
  for (const State::Entry& e : state_->entries) out.push_back(e.queue->Stats());
  return out;
}

}  // namespace gpumon::remote
