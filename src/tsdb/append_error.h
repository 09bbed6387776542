// AppendFailure: why the storage did not take a sample, read back from the
// error an appender returned, so every caller (scrape loops, the
// remote-write receiver, self-monitoring) classifies errors the same way.
//
// Contract:
// - ClassifyAppendError maps the messages the head and the WAL produce
//   (head.cc, head_appender.cc, wal_writer.cc) to a cause; those messages
//   keep the phrases listed in append_error.cc, and the head tests check
//   each one. Context prefixes ("commit: logging samples to the WAL: ...")
//   do not change the cause.
// - IsPermanentAppendFailure: the same samples would be refused again, so
//   a sender must not retry (remote write answers 400); the others are
//   storage trouble that may pass (disk full, I/O errors: 500, retry).
// - AppendFailureName is the label value of
//   gpumon_tsdb_append_failures_total{cause} (snake_case, stable).
#pragma once

#include <cstddef>
#include <string_view>

namespace gpumon::tsdb {

enum class AppendFailure {
  kOutOfOrder,     // older than the series' newest sample (no OOO window)
  kDuplicate,      // same timestamp, another value
  kOutOfBounds,    // before the head's minimum valid time, or too far ahead
  kTooOld,         // outside the out-of-order window
  kTooManyLabels,  // more labels than a series can hold
  kInvalidLabels,  // empty name, empty label set, ...
  kDiskFull,       // ENOSPC / EDQUOT writing the WAL
  kIoError,        // any other WAL write failure
  kOther,
};
inline constexpr size_t kAppendFailureCount = static_cast<size_t>(AppendFailure::kOther) + 1;

AppendFailure ClassifyAppendError(std::string_view message);
bool IsPermanentAppendFailure(AppendFailure cause);
std::string_view AppendFailureName(AppendFailure cause);

}  // namespace gpumon::tsdb
