// CollectionScheduler: runs collector groups at their intervals on one
// background thread, so collection is decoupled from scrapes.
//
// Contract: each (collector, group) job first runs at a random offset within
// its interval (spreading many collectors over time), then every interval.
// A job that overruns is rescheduled from now, never run back to back to
// catch up. Stop() (or destruction) joins the thread promptly.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu/collector.h"

namespace gpumon::gpu {

class CollectionScheduler {
 public:
  CollectionScheduler() = default;
  ~CollectionScheduler();

  // Adds a job; call before Start().
  void Add(GpuCollector* collector, Group group, std::chrono::milliseconds interval);
  void Start(uint64_t seed = 1);
  void Stop();

 private:
  struct Job {
    GpuCollector* collector;
    Group group;
    std::chrono::milliseconds interval;
    std::chrono::steady_clock::time_point due;
  };
  void Loop();

  std::vector<Job> jobs_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpumon::gpu
