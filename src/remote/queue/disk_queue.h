// DiskQueue: the durable, segmented log of samples waiting to be sent to
// one remote-write endpoint. Format: docs/formats/remote-write-queue.md.
//
// Contract:
// - Append writes one checksummed record per call (one commit) to the head
//   segment; a new segment starts when the head would exceed
//   segment_bytes. Records survive a process restart (written with
//   write(2), not buffered in the process); a machine crash may lose the
//   unflushed tail, which the checksum detects.
// - Read returns whole records from the read position, in append order,
//   and advances the read position (in memory only). Ack(position)
//   persists the cursor: everything before it is delivered. After a
//   restart reading resumes at the persisted cursor, so delivery is
//   at-least-once. Segments entirely before the cursor are deleted.
// - Open scans every segment. A damaged record (bad checksum, cut short,
//   undecodable) ends its segment: the file is truncated there, a warning
//   naming file and offset is logged and kept in warnings(), and
//   Stats().corrupt_segments counts it.
// - Bounds, never silent: when the log exceeds max_bytes, the oldest
//   segments (never the head) are deleted and their unread samples counted
//   in samples_dropped_size. With sample_age_limit_ms, Read drops samples
//   older than now - limit and whole old segments are deleted; both count
//   in samples_dropped_age.
// - Thread-safe: appends from committing threads, reads/acks from a sender.
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::remote {

// One committed sample with its series.
struct QueuedSample {
  Labels labels;
  int64_t t = 0;
  double v = 0;
};

struct DiskQueueOptions {
  uint64_t segment_bytes = 16u << 20;
  uint64_t max_bytes = 1ull << 30;  // 0: unlimited
  int64_t sample_age_limit_ms = 0;  // 0: no limit
  // Wall clock in Unix milliseconds; tests substitute their own.
  std::function<int64_t()> now_ms;
};

// A place in the log: segment number and byte offset within it.
struct QueuePosition {
  uint64_t segment = 0;
  uint64_t offset = 0;
  auto operator<=>(const QueuePosition&) const = default;
};

struct DiskQueueStats {
  uint64_t bytes = 0;  // size of all segment files
  uint64_t segments = 0;
  uint64_t samples_appended = 0;      // since Open
  uint64_t samples_pending = 0;       // on disk and not acknowledged
  uint64_t samples_dropped_size = 0;  // deleted to stay under max_bytes
  uint64_t samples_dropped_age = 0;   // older than sample_age_limit
  uint64_t corrupt_segments = 0;      // segments truncated at Open
  uint64_t bytes_truncated = 0;
  int64_t highest_appended_ms = 0;  // newest sample timestamp appended
};

class DiskQueue {
 public:
  struct Batch {
    std::vector<QueuedSample> samples;
    QueuePosition end;  // pass to Ack once the samples are delivered
    uint64_t records = 0;
  };

  // Creates `dir` when missing and recovers what is in it.
  static Result<std::unique_ptr<DiskQueue>> Open(const std::string& dir, DiskQueueOptions options);
  ~DiskQueue();
  DiskQueue(const DiskQueue&) = delete;
  DiskQueue& operator=(const DiskQueue&) = delete;

  Status Append(std::span<const QueuedSample> samples);

  // Whole records from the read position until at least max_samples are
  // gathered or no more are written. An empty batch means nothing unread.
  Result<Batch> Read(size_t max_samples);

  // Persists the cursor at `upto` (a Batch::end, not beyond the read
  // position). Positions in segments already deleted are ignored.
  Status Ack(QueuePosition upto);

  // Moves the read position back to the acknowledged cursor, so what was
  // read and not acknowledged is read again.
  void Rewind();

  // Deletes segments wholly older than the age limit (also done by Append).
  void EnforceAgeLimit();

  bool HasUnread() const;
  DiskQueueStats Stats() const;
  std::vector<std::string> warnings() const;
  const std::string& dir() const { return dir_; }

 private:
  struct Segment {
    uint64_t index = 0;
    uint64_t bytes = 0;
    uint64_t samples = 0;
    uint64_t read = 0;   // samples in records before the read position
    uint64_t acked = 0;  // samples in records before the cursor
    int64_t max_t = INT64_MIN;
  };
  // End position of a read record and its sample count, until acked.
  struct InFlight {
    QueuePosition end;
    uint64_t samples;
  };

  DiskQueue(std::string dir, DiskQueueOptions options);
  Status Recover();
  Status ScanSegment(Segment& seg, QueuePosition cursor);
  Status StartHead(uint64_t index);
  Status WriteCursorLocked(QueuePosition pos);
  void DropFrontLocked(uint64_t* counter);
  void DeleteAckedLocked();
  void NormalizeReadLocked();
  std::string SegmentPath(uint64_t index) const;
  int64_t Now() const;

  const std::string dir_;
  const DiskQueueOptions options_;
  mutable std::mutex mu_;
  std::deque<Segment> segments_;  // oldest first; back() is the head
  int head_fd_ = -1;
  QueuePosition read_;    // next record to read
  QueuePosition cursor_;  // persisted acknowledgement
  std::deque<InFlight> in_flight_;
  DiskQueueStats stats_;
  std::vector<std::string> warnings_;
};

}  // namespace gpumon::remote
