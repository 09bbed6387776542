// StreamState: the hand-over between a streamed response's producer (on a
// worker thread) and its connection (on the network strand).
//
// Contract: Write() queues a piece and returns at once while at most
// `high_water` bytes are unsent; past that it blocks until the connection
// has written enough, the connection dies, or `write_timeout` passes (then
// the stream is dead and Write returns false). Finish() says the producer
// is done (ok=false: abort, the response is truncated). The connection
// Take()s queued pieces, Release()s their bytes once written and
// MarkDead()s the stream when it closes. `schedule_pump` is called (from
// the producer's thread, never under the lock) when there is something
// new for the connection to take.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace gpumon::http {

class StreamState {
 public:
  StreamState(size_t high_water, std::chrono::milliseconds write_timeout,
              std::function<void()> schedule_pump);

  bool Write(const char* data, size_t size);
  void Finish(bool ok);

  struct Taken {
    std::vector<std::string> pieces;
    size_t bytes = 0;
    bool finished = false;
    bool aborted = false;
    bool dead = false;
  };
  Taken Take();
  void Release(size_t bytes);
  void MarkDead();

 private:
  const size_t high_water_;
  const std::chrono::milliseconds write_timeout_;
  const std::function<void()> schedule_pump_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  size_t unsent_ = 0;  // queued plus taken but not yet written
  bool pump_scheduled_ = false;
  bool finished_ = false;
  bool aborted_ = false;
  bool dead_ = false;
};

}  // namespace gpumon::http
