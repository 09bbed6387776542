// HeadAppender: a batch of samples for the head, validated as they are
// added and applied atomically by Commit (the unit a scrape writes).
//
// Contract:
// - Append(ref, labels, t, v) returns the series ref. With ref != 0 (a ref
//   this head returned for the same labels) the label lookup is skipped;
//   with ref == 0 or a ref the head no longer holds, labels decide (and the
//   series is created when new).
// - Append rejects a sample with an error naming the series and times (out
//   of order, duplicate timestamp with another value, out of bounds); the
//   rest of the batch is unaffected. A sample equal to the last one (same
//   timestamp, same value bits) is accepted and ignored. A series' first
//   sample is never a duplicate, whatever its timestamp (kMinTime too).
// - Rejected samples, and every sample of a failed commit, are counted by
//   cause in the head's StorageHealth.
// - Commit re-validates against what other appenders committed meanwhile
//   and applies all samples or none; then the appender is empty and
//   reusable. Rollback discards the batch; destruction rolls back.
// - One appender is used by one thread at a time; many appenders may run
//   concurrently.
#pragma once

#include <cstdint>
#include <vector>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::tsdb::head {

class Head;
class Series;

class HeadAppender {
 public:
  ~HeadAppender();
  HeadAppender(const HeadAppender&) = delete;
  HeadAppender& operator=(const HeadAppender&) = delete;

  Result<uint64_t> Append(uint64_t ref, const Labels& labels, int64_t t, double v);
  // A hint: an Append with `ref` follows soon; starts fetching its series
  // into the cache (a large head's series are cold).
  void Prefetch(uint64_t ref) const;
  Status Commit();
  void Rollback();
  // Samples buffered (excluding ignored duplicates).
  size_t NumPending() const { return samples_.size(); }

 private:
  friend class Head;
  explicit HeadAppender(Head* head) : head_(head) {}

  // One series touched by this batch.
  struct Entry {
    Series* series = nullptr;
    bool has_buffered = false;
    int64_t last_t = 0;  // newest buffered sample
    uint64_t last_v = 0;
    int64_t sim_t = 0;  // Commit's validation state
    uint64_t sim_v = 0;
    bool sim_has = false;  // sim_t/sim_v hold a sample
  };
  enum Kind : uint8_t { kInOrder, kOutOfOrder, kSkip };
  struct Pending {
    uint32_t entry;
    Kind kind;
    int64_t t;
    uint64_t v;  // value bits
  };
  struct Slot {
    uint64_t ref = 0;  // 0: empty
    uint32_t entry = 0;
  };

  Result<uint64_t> AppendOne(uint64_t ref, const Labels& labels, int64_t t, double v);
  int FindEntry(uint64_t ref) const;
  uint32_t AddEntry(Series* s);
  void Release();

  Head* head_;
  std::vector<Entry> entries_;
  std::vector<Pending> samples_;
  std::vector<Slot> slots_;  // ref → entry, open addressing
};

}  // namespace gpumon::tsdb::head
