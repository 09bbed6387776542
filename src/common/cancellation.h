// Cancellation: a flag one side raises and long-running work polls, so
// work stops when nobody waits for it any more.
//
// Contract: Cancel() may be called from any thread, any number of times;
// cancelled() becomes true after the first call and stays true. Polling is
// a relaxed atomic load, cheap enough for the inner loops of the PromQL
// evaluator. The HTTP server raises it when a request's client disconnects
// and when the server shuts down.
#pragma once

#include <atomic>

namespace gpumon {

class Cancellation {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace gpumon
