#include "http/body_stream.h"

#include <algorithm>

namespace gpumon::http {
namespace {

// Pieces smaller than this are appended to the previous queued piece, so
// a producer writing line by line still goes out in large chunks.
constexpr size_t kCoalesceBelow = 16 * 1024;

}  // namespace

StreamState::StreamState(size_t high_water, std::chrono::milliseconds write_timeout,
                         std::function<void()> schedule_pump)
    : high_water_(high_water),
      write_timeout_(write_timeout),
      schedule_pump_(std::move(schedule_pump)) {}

bool StreamState::Write(const char* data, size_t size) {
  std::unique_lock<std::mutex> lock(mu_);
  if (dead_ || finished_) return false;
  if (size == 0) return true;
  if (!queue_.empty() && queue_.back().size() < kCoalesceBelow) {
    queue_.back().append(data, size);
  } else {
    queue_.emplace_back(data, size);
  }
  unsent_ += size;
  if (!pump_scheduled_) {
    pump_scheduled_ = true;
    lock.unlock();
    schedule_pump_();
    lock.lock();
  }
  const auto deadline = std::chrono::steady_clock::now() + write_timeout_;
  while (unsent_ > high_water_ && !dead_) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && unsent_ > high_water_ &&
        !dead_) {
      // The client reads too slowly; the connection's own write deadline
      // closes it, and the producer stops now.
      dead_ = true;
      lock.unlock();
      schedule_pump_();
      return false;
    }
  }
  return !dead_;
}

void StreamState::Finish(bool ok) {
  std::unique_lock<std::mutex> lock(mu_);
  finished_ = true;
  aborted_ = !ok;
  if (pump_scheduled_) return;
  pump_scheduled_ = true;
  lock.unlock();
  schedule_pump_();
}

StreamState::Taken StreamState::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  Taken t;
  t.pieces.reserve(queue_.size());
  for (std::string& p : queue_) {
    t.bytes += p.size();
    t.pieces.push_back(std::move(p));
  }
  queue_.clear();
  pump_scheduled_ = false;
  t.finished = finished_;
  t.aborted = aborted_;
  t.dead = dead_;
  return t;
}

void StreamState::Release(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    unsent_ -= std::min(bytes, unsent_);
  }
  cv_.notify_all();
}

void StreamState::MarkDead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dead_ = true;
  }
  cv_.notify_all();
}

}  // namespace gpumon::http
