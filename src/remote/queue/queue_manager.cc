#include "remote/queue/queue_manager.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

#include "common/log.h"
#include "http/response.h"
#include "remote/write_request.h"
#include "scrape/relabel.h"

namespace gpumon::remote {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxCachedSeries = 200000;

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(kAlphabet[(n >> (6 * k)) & 63]);
  }
  if (i < in.size()) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// Secrets in files are re-read per request (so rotation needs no reload)
// and trimmed of surrounding whitespace, as Prometheus does.
Result<std::string> ReadSecret(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("cannot read \"" + path + "\"");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return std::string();
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// "413 Request Entity Too Large", as Go's resp.Status reads.
std::string StatusLine(int status) {
  std::string out = std::to_string(status);
  if (std::string_view text = http::ReasonPhrase(status); !text.empty()) {
    out += ' ';
    out += text;
  }
  return out;
}

}  // namespace

// One shard: sends its share of a chunk over a persistent connection.
class QueueManager::Shard {
 public:
  explicit Shard(QueueManager* m) : m_(m) {}

  // Sends `samples` in order, in batches; false when stopped midway.
  bool Send(std::span<const QueuedSample> samples, bool* retried);

  // Breaks an in-flight request (called by Stop from another thread).
  void Interrupt() {
    std::lock_guard<std::mutex> lock(mu_);
    if (client_) client_->stop();
  }

 private:
  enum class Outcome { kSent, kRetry, kDrop };
  Outcome Post(const std::string& body, std::string* error);
  httplib::Client& Client();

  QueueManager* m_;
  std::mutex mu_;  // guards client_ creation against Interrupt
  std::unique_ptr<httplib::Client> client_;
};

httplib::Client& QueueManager::Shard::Client() {
  std::lock_guard<std::mutex> lock(mu_);
  if (client_) return *client_;
  const scrape::RemoteWriteConfig& c = m_->config_;
  size_t scheme_end = c.url.find("://");
  size_t path_start = c.url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  std::string origin = path_start == std::string::npos ? c.url : c.url.substr(0, path_start);
  if (!c.http.tls_cert_file.empty()) {
    client_ = std::make_unique<httplib::Client>(origin, c.http.tls_cert_file, c.http.tls_key_file);
  } else {
    client_ = std::make_unique<httplib::Client>(origin);
  }
  const time_t sec = c.remote_timeout_ms / 1000;
  const time_t usec = (c.remote_timeout_ms % 1000) * 1000;
  client_->set_connection_timeout(sec, usec);
  client_->set_read_timeout(sec, usec);
  client_->set_write_timeout(sec, usec);
  client_->set_keep_alive(true);
  client_->set_follow_location(c.http.follow_redirects);
  if (!c.http.tls_ca_file.empty()) client_->set_ca_cert_path(c.http.tls_ca_file);
  if (c.http.tls_insecure_skip_verify) client_->enable_server_certificate_verification(false);
  return *client_;
}

QueueManager::Shard::Outcome QueueManager::Shard::Post(const std::string& body,
                                                       std::string* error) {
  const scrape::RemoteWriteConfig& c = m_->config_;
  httplib::Headers headers;
  for (const auto& [name, value] : c.headers) headers.emplace(name, value);
  if (c.http.has_basic_auth()) {
    std::string password = c.http.basic_auth_password;
    if (!c.http.basic_auth_password_file.empty()) {
      auto p = ReadSecret(c.http.basic_auth_password_file);
      if (!p.ok()) {
        *error = "basic_auth: " + p.status().message();
        return Outcome::kRetry;
      }
      password = *p;
    }
    headers.emplace("Authorization",
                    "Basic " + Base64(c.http.basic_auth_username + ":" + password));
  } else if (c.http.has_authorization()) {
    std::string credentials = c.http.authorization_credentials;
    if (!c.http.authorization_credentials_file.empty()) {
      auto p = ReadSecret(c.http.authorization_credentials_file);
      if (!p.ok()) {
        *error = "authorization: " + p.status().message();
        return Outcome::kRetry;
      }
      credentials = *p;
    }
    std::string type = c.http.authorization_type.empty() ? "Bearer" : c.http.authorization_type;
    headers.emplace("Authorization", type + " " + credentials);
  }
  headers.emplace("Content-Encoding", "snappy");
  headers.emplace("User-Agent", m_->options_.user_agent);
  headers.emplace("X-Prometheus-Remote-Write-Version", "0.1.0");

  size_t scheme_end = c.url.find("://");
  size_t path_start = c.url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  std::string path = path_start == std::string::npos ? "/" : c.url.substr(path_start);
  auto res = Client().Post(path, headers, body, "application/x-protobuf");
  if (!res) {
    *error = "Post \"" + c.url + "\": " + httplib::to_string(res.error());
    return Outcome::kRetry;
  }
  if (res->status / 100 == 2) return Outcome::kSent;
  std::string text = res->body.substr(0, 256);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  *error = "server returned HTTP status " + StatusLine(res->status) + ": " + text;
  if (res->status / 100 == 5) return Outcome::kRetry;
  if (res->status == 429 && c.queue.retry_on_http_429) return Outcome::kRetry;
  return Outcome::kDrop;
}

bool QueueManager::Shard::Send(std::span<const QueuedSample> samples, bool* retried) {
  const scrape::RemoteWriteConfig& c = m_->config_;
  const size_t max = static_cast<size_t>(std::max(1, c.queue.max_samples_per_send));
  for (size_t i = 0; i < samples.size(); i += max) {
    std::span<const QueuedSample> part = samples.subspan(i, std::min(max, samples.size() - i));
    std::vector<QueuedSample> batch(part.begin(), part.end());
    int64_t backoff = std::max<int64_t>(1, c.queue.min_backoff_ms);
    for (int attempt = 0;; ++attempt) {
      if (attempt > 0 && c.queue.sample_age_limit_ms > 0) {
        // A batch stuck in retries must not deliver data past its age.
        const int64_t limit = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count() -
                              c.queue.sample_age_limit_ms;
        auto old = std::remove_if(batch.begin(), batch.end(),
                                  [&](const QueuedSample& s) { return s.t < limit; });
        m_->samples_dropped_age_ += static_cast<uint64_t>(batch.end() - old);
        batch.erase(old, batch.end());
        if (batch.empty()) break;
      }
      // Group by series, keeping each series' samples in order.
      std::vector<TimeSeries> series;
      std::unordered_map<uint64_t, std::vector<size_t>> index;
      int64_t highest = 0;
      for (const QueuedSample& s : batch) {
        auto& candidates = index[s.labels.Hash()];
        size_t at = series.size();
        for (size_t k : candidates) {
          if (series[k].labels == s.labels) at = k;
        }
        if (at == series.size()) {
          candidates.push_back(at);
          series.push_back({s.labels, {}});
        }
        series[at].samples.push_back({s.t, s.v});
        highest = std::max(highest, s.t);
      }
      const std::string body = EncodeWriteRequest(series);
      std::string error;
      Outcome outcome = Post(body, &error);
      if (outcome == Outcome::kSent) {
        m_->samples_sent_ += batch.size();
        m_->batches_sent_ += 1;
        m_->bytes_sent_ += body.size();
        int64_t prev = m_->highest_sent_.load();
        while (highest > prev && !m_->highest_sent_.compare_exchange_weak(prev, highest)) {
        }
        break;
      }
      {
        std::lock_guard<std::mutex> lock(m_->error_mu_);
        m_->last_error_ = error;
      }
      if (outcome == Outcome::kDrop) {
        m_->samples_failed_ += batch.size();
        LogError("remote_write " + c.name + ": dropping " + std::to_string(batch.size()) +
                 " samples: non-recoverable error: " + error);
        break;
      }
      m_->samples_retried_ += batch.size();
      *retried = true;
      LogWarn("remote_write " + c.name + ": retrying " + std::to_string(batch.size()) +
              " samples in " + std::to_string(backoff) + "ms: " + error);
      if (m_->SleepUntil(Clock::now() + std::chrono::milliseconds(backoff))) return false;
      backoff = std::min(backoff * 2, std::max(backoff, c.queue.max_backoff_ms));
    }
    std::lock_guard<std::mutex> lock(m_->mu_);
    if (m_->stopping_) return false;
  }
  return true;
}

QueueManager::QueueManager(scrape::RemoteWriteConfig config, Labels external_labels,
                           QueueManagerOptions options)
    : config_(std::move(config)),
      external_labels_(std::move(external_labels)),
      options_(std::move(options)) {}

Result<std::unique_ptr<QueueManager>> QueueManager::Start(const scrape::RemoteWriteConfig& config,
                                                          Labels external_labels,
                                                          const std::string& dir,
                                                          QueueManagerOptions options) {
  if (config.url.find("://") == std::string::npos) {
    return Status::Error("remote_write " + config.name + ": invalid url \"" + config.url + "\"");
  }
  for (const scrape::RelabelConfig& r : config.write_relabel_configs) {
    if (!r.compiled) {
      return Status::Error("remote_write " + config.name + ": write_relabel_configs not compiled");
    }
  }
  options.disk.sample_age_limit_ms = config.queue.sample_age_limit_ms;
  std::unique_ptr<QueueManager> m(
      new QueueManager(config, std::move(external_labels), std::move(options)));
  auto disk = DiskQueue::Open(dir, m->options_.disk);
  if (!disk.ok()) return disk.status();
  m->disk_ = std::move(disk).value();
  m->shard_count_ = std::max(1, config.queue.min_shards);
  m->shards_.resize(std::max(m->shard_count_.load(), config.queue.max_shards));
  m->thread_ = std::thread([p = m.get()] { p->Run(); });
  return m;
}

QueueManager::~QueueManager() { Stop(); }

void QueueManager::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  // shards_ only grows on the sender thread; Interrupt tolerates a race
  // with a shard being created (it only touches the shard's client).
  if (thread_.joinable()) {
    for (size_t i = 0; i < shard_slots_.load(); ++i) shards_[i]->Interrupt();
    thread_.join();
  }
}

Status QueueManager::Append(std::span<const QueuedSample> samples) {
  Status s = disk_->Append(samples);
  if (!s.ok()) {
    samples_dropped_disk_error_ += samples.size();
    std::lock_guard<std::mutex> lock(error_mu_);
    last_error_ = s.message();
    return s;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++appends_;
  }
  cv_.notify_all();
  return Status::Ok();
}

bool QueueManager::SleepUntil(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return stopping_; });
}

std::optional<Labels> QueueManager::Transform(const Labels& labels) {
  auto& bucket = cache_[labels.Hash()];
  for (const auto& [in, out] : bucket) {
    if (in == labels) return out;
  }
  std::optional<Labels> out;
  {
    std::vector<Label> items = labels.items();
    for (const Label& e : external_labels_) {
      if (!labels.Has(e.name)) items.push_back(e);
    }
    Labels with_external = Labels::FromUnsorted(std::move(items));
    out = scrape::Relabel(with_external, config_.write_relabel_configs);
    if (out && out->empty()) out.reset();
  }
  if (cache_size_ >= kMaxCachedSeries) {
    cache_.clear();
    cache_size_ = 0;
  }
  cache_[labels.Hash()].emplace_back(labels, out);
  ++cache_size_;
  return out;
}

bool QueueManager::SendChunk(std::vector<QueuedSample>& samples, int shards, bool* had_retries) {
  std::vector<QueuedSample> kept;
  kept.reserve(samples.size());
  for (QueuedSample& s : samples) {
    std::optional<Labels> out = Transform(s.labels);
    if (!out) {
      ++samples_dropped_relabel_;
      continue;
    }
    s.labels = std::move(*out);
    kept.push_back(std::move(s));
  }
  while (shard_slots_.load() < static_cast<size_t>(shards)) {
    shards_[shard_slots_.load()] = std::make_unique<Shard>(this);
    ++shard_slots_;
  }
  if (shards == 1) return shards_[0]->Send(kept, had_retries);
  std::vector<std::vector<QueuedSample>> parts(shards);
  for (QueuedSample& s : kept) parts[s.labels.Hash() % shards].push_back(std::move(s));
  std::vector<char> done(shards, 0);
  std::vector<char> retried(shards, 0);
  std::vector<std::thread> threads;
  for (int i = 1; i < shards; ++i) {
    if (parts[i].empty()) {
      done[i] = 1;
      continue;
    }
    threads.emplace_back([&, i] {
      bool r = false;
      done[i] = shards_[i]->Send(parts[i], &r);
      retried[i] = r;
    });
  }
  bool r0 = false;
  done[0] = shards_[0]->Send(parts[0], &r0);
  retried[0] = r0;
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < shards; ++i) *had_retries = *had_retries || retried[i];
  return std::all_of(done.begin(), done.end(), [](char d) { return d != 0; });
}

void QueueManager::Run() {
  const int max_per_send = std::max(1, config_.queue.max_samples_per_send);
  const int min_shards = std::max(1, config_.queue.min_shards);
  const int max_shards = std::max(min_shards, config_.queue.max_shards);
  while (true) {
    uint64_t seen;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      seen = appends_;
    }
    disk_->EnforceAgeLimit();
    const int shards = shard_count_.load();
    const size_t target = static_cast<size_t>(shards) * max_per_send;
    auto first = disk_->Read(target);
    if (!first.ok()) {
      LogError("remote_write " + config_.name + ": " + first.status().message());
      {
        std::lock_guard<std::mutex> lock(error_mu_);
        last_error_ = first.status().message();
      }
      disk_->Rewind();
      if (SleepUntil(Clock::now() + std::chrono::seconds(1))) return;
      continue;
    }
    DiskQueue::Batch chunk = std::move(first).value();
    if (chunk.records == 0) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_ || appends_ != seen; });
      continue;
    }
    // Fill the chunk, but send what there is once the deadline passes.
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(config_.queue.batch_send_deadline_ms);
    while (chunk.samples.size() < target) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        seen = appends_;
      }
      auto more = disk_->Read(target - chunk.samples.size());
      if (!more.ok()) break;  // reported on the next pass
      if (more->records > 0) {
        for (QueuedSample& s : more->samples) chunk.samples.push_back(std::move(s));
        chunk.end = more->end;
        continue;
      }
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_until(lock, deadline, [&] { return stopping_ || appends_ != seen; })) break;
      if (stopping_) return;
    }
    bool had_retries = false;
    if (!SendChunk(chunk.samples, shards, &had_retries)) return;  // stopping
    Status s = disk_->Ack(chunk.end);
    if (!s.ok()) {
      LogError("remote_write " + config_.name + ": " + s.message());
      std::lock_guard<std::mutex> lock(error_mu_);
      last_error_ = s.message();
    }
    // Reshard between chunks, so per-series order is never at stake.
    const uint64_t pending = disk_->Stats().samples_pending;
    int desired = static_cast<int>(
        std::min<uint64_t>(max_shards, (pending + max_per_send - 1) / max_per_send));
    desired = std::clamp(desired, min_shards, max_shards);
    if (desired > shards && had_retries) desired = shards;  // more shards won't help
    shard_count_ = desired;
  }
}

QueueStats QueueManager::Stats() const {
  QueueStats out;
  out.name = config_.name;
  out.url = config_.url;
  DiskQueueStats d = disk_->Stats();
  out.samples_sent = samples_sent_;
  out.samples_failed = samples_failed_;
  out.samples_retried = samples_retried_;
  out.samples_dropped_relabel = samples_dropped_relabel_;
  out.samples_dropped_size = d.samples_dropped_size;
  out.samples_dropped_disk_error = samples_dropped_disk_error_;
  out.samples_dropped_age = d.samples_dropped_age + samples_dropped_age_;
  out.samples_pending = d.samples_pending;
  out.batches_sent = batches_sent_;
  out.bytes_sent = bytes_sent_;
  out.disk_bytes = d.bytes;
  out.corrupt_segments = d.corrupt_segments;
  out.highest_sent_timestamp_ms = highest_sent_;
  out.highest_appended_timestamp_ms = d.highest_appended_ms;
  out.shards = shard_count_;
  out.min_shards = std::max(1, config_.queue.min_shards);
  out.max_shards = std::max(out.min_shards, config_.queue.max_shards);
  std::lock_guard<std::mutex> lock(error_mu_);
  out.last_error = last_error_;
  return out;
}

}  // namespace gpumon::remote
