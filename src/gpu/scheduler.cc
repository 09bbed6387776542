#include "gpu/scheduler.h"

#include <algorithm>
#include <queue>
#include <random>

namespace gpumon::gpu {

CollectionScheduler::~CollectionScheduler() { Stop(); }

void CollectionScheduler::Add(GpuCollector* collector, Group group,
                              std::chrono::milliseconds interval) {
  jobs_.push_back(Job{collector, group, std::max(interval, std::chrono::milliseconds(10)), {}});
}

void CollectionScheduler::Start(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto now = std::chrono::steady_clock::now();
  for (auto& j : jobs_) {
    std::uniform_int_distribution<int64_t> offset(0, j.interval.count() - 1);
    j.due = now + std::chrono::milliseconds(offset(rng));
  }
  thread_ = std::thread([this] { Loop(); });
}

void CollectionScheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CollectionScheduler::Loop() {
  auto later = [this](size_t a, size_t b) { return jobs_[a].due > jobs_[b].due; };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> queue(later);
  for (size_t i = 0; i < jobs_.size(); ++i) queue.push(i);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_ && !queue.empty()) {
    size_t i = queue.top();
    Job& job = jobs_[i];
    if (wake_.wait_until(lock, job.due, [this] { return stop_; })) break;
    queue.pop();
    lock.unlock();
    job.collector->Collect(job.group);
    auto now = std::chrono::steady_clock::now();
    job.due += job.interval;
    if (job.due < now) job.due = now + job.interval;
    lock.lock();
    queue.push(i);
  }
}

}  // namespace gpumon::gpu
