// WalReader: replays the records of a WAL directory in order, across
// segments, for the head to rebuild itself at start-up.
//
// Contract:
// - Next() yields every intact record in write order; record() is a view
//   valid until the next Next() call (segments are memory-mapped).
// - The reader never modifies files. It is not safe to run while a writer
//   appends to the same directory.
// - A torn tail in the newest segment ends the replay cleanly: Next()
//   returns false, status() is OK, torn_tail() describes what was dropped
//   (WalWriter::Open truncates it before appending).
// - Anything else unreadable — a bad checksum or length before the end,
//   a torn record in an older segment, a bad segment header, a missing
//   segment in the sequence — ends the replay with an error status naming
//   the file and byte offset; corruption() carries it for Repair(), which
//   keeps every record before it.
// - A record that passes its checksum but fails to decode is the caller's
//   to report: CorruptionAtRecord() turns the current position into a
//   Corruption that Repair() can cut at.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "tsdb/wal/corruption.h"
#include "tsdb/wal/frame.h"
#include "common/mmap_file.h"
#include "tsdb/wal/segment.h"

namespace gpumon::tsdb::wal {

struct ReplayProgress {
  int segment = 0;          // index of the segment being read
  int segments_done = 0;    // segments fully read so far
  int segments_total = 0;   // segments this replay will read
  uint64_t bytes_done = 0;  // bytes read so far
  uint64_t bytes_total = 0;
};

struct ReaderOptions {
  // Read only segments with index >= first_segment (e.g. those after a
  // checkpoint). When set, that segment must exist if any later one does.
  std::optional<int> first_segment;
  // Read only segments with index <= last_segment. The torn-tail allowance
  // still applies only to the newest segment in the directory.
  std::optional<int> last_segment;
  // Called after each segment and every few MiB within one.
  std::function<void(const ReplayProgress&)> progress;
};

class WalReader {
 public:
  static Result<std::unique_ptr<WalReader>> Open(const std::string& dir,
                                                 ReaderOptions options = {});

  bool Next();
  std::span<const uint8_t> record() const {
    return decoder_ ? decoder_->record() : std::span<const uint8_t>();
  }
  // Position of the current record's frame.
  int segment() const { return segment_index_; }
  uint64_t offset() const { return decoder_ ? decoder_->record_offset() : 0; }

  Status status() const { return corruption_ ? corruption_->ToStatus() : Status::Ok(); }
  const std::optional<Corruption>& corruption() const { return corruption_; }
  const std::optional<TornTail>& torn_tail() const { return torn_tail_; }

  Corruption CorruptionAtRecord(std::string reason) const;

  int segments_total() const { return static_cast<int>(segments_.size()); }
  uint64_t records_read() const { return records_read_; }

 private:
  WalReader(std::string dir, std::vector<SegmentFile> segments, int newest, ReaderOptions options);
  bool OpenSegment();
  void Report(bool force);

  std::string dir_;
  std::vector<SegmentFile> segments_;
  int newest_ = -1;  // highest segment index in the directory
  ReaderOptions options_;
  size_t next_ = 0;  // position in segments_ of the next segment to open
  int segment_index_ = -1;
  MmapFile file_;
  std::optional<SegmentDecoder> decoder_;
  std::optional<Corruption> corruption_;
  std::optional<TornTail> torn_tail_;
  bool done_ = false;
  uint64_t bytes_before_segment_ = 0;
  uint64_t bytes_total_ = 0;
  uint64_t last_report_ = 0;
  uint64_t records_read_ = 0;
};

}  // namespace gpumon::tsdb::wal
