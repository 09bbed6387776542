// WorkerPool: a fixed set of threads running tasks from a bounded queue.
//
// Contract: TryPost() never blocks; it returns false when the queue already
// holds max_queued tasks or the pool is shut down (the server answers 503).
// Tasks run in FIFO order. Shutdown() (also run by the destructor) refuses
// new tasks, drops the queued ones (their destructors run, so captured
// state is released) and waits for the running ones to return; it is
// idempotent and must not be called from a worker thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpumon::http {

class WorkerPool {
 public:
  WorkerPool(int threads, size_t max_queued);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  bool TryPost(std::function<void()> task);
  void Shutdown();
  size_t queued() const;

 private:
  void Loop();

  const size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gpumon::http
