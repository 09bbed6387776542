// WalSink: where the head logs what a commit changes before making it
// visible, so the DB's write-ahead log can rebuild the head after a crash.
//
// Contract:
// - Head::Commit calls LogSeries (only if the commit references series that
//   were never logged) and then LogSamples, both under the head's commit
//   lock, so the order of calls is the order in which commits apply. A
//   series record always precedes the first sample record that refers to it.
// - If either call fails, the commit fails and nothing of it becomes
//   visible; the caller of Commit sees the sink's status.
// - Head::Delete calls LogTombstones before deleting.
// - The spans are only valid during the call. The sink must not call back
//   into the head (the commit lock is held).
// - Record structs are the WAL's own (tsdb/record/record.h), so the sink can
//   encode them without conversion.
#pragma once

#include <span>

#include "common/status.h"
#include "tsdb/record/record.h"

namespace gpumon::tsdb::head {

using RefSeries = record::RefSeries;
using RefSample = record::RefSample;

class WalSink {
 public:
  virtual ~WalSink() = default;
  virtual Status LogSeries(std::span<const RefSeries> series) = 0;
  virtual Status LogSamples(std::span<const RefSample> samples) = 0;
  // Head::Delete logs what it deletes before applying it.
  virtual Status LogTombstones(std::span<const record::RefTombstone> tombstones) {
    (void)tombstones;
    return Status::Ok();
  }
};

}  // namespace gpumon::tsdb::head
