#include "tsdb/append_error.h"

namespace gpumon::tsdb {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

AppendFailure ClassifyAppendError(std::string_view m) {
  // Disk errors arrive wrapped in context, so they are found anywhere in
  // the message; the strerror() texts of ENOSPC and EDQUOT.
  if (Contains(m, "No space left on device") || Contains(m, "Disk quota exceeded")) {
    return AppendFailure::kDiskFull;
  }
  if (m.starts_with("out of order sample")) {
    return Contains(m, "outside the out-of-order window") ? AppendFailure::kTooOld
                                                          : AppendFailure::kOutOfOrder;
  }
  if (m.starts_with("too old sample")) return AppendFailure::kTooOld;
  if (m.starts_with("duplicate sample for timestamp")) return AppendFailure::kDuplicate;
  if (m.starts_with("out of bounds sample")) return AppendFailure::kOutOfBounds;
  if (m.starts_with("too many labels")) return AppendFailure::kTooManyLabels;
  if (m.starts_with("empty label name") || m.starts_with("empty label set") ||
      m.starts_with("invalid label")) {
    return AppendFailure::kInvalidLabels;
  }
  // The head's commit wraps every WAL sink failure in one of these.
  if (Contains(m, "to the WAL") || m.starts_with("wal: ")) return AppendFailure::kIoError;
  return AppendFailure::kOther;
}

bool IsPermanentAppendFailure(AppendFailure cause) {
  switch (cause) {
    case AppendFailure::kOutOfOrder:
    case AppendFailure::kDuplicate:
    case AppendFailure::kOutOfBounds:
    case AppendFailure::kTooOld:
    case AppendFailure::kTooManyLabels:
    case AppendFailure::kInvalidLabels:
      return true;
    default:
      return false;
  }
}

std::string_view AppendFailureName(AppendFailure cause) {
  switch (cause) {
    case AppendFailure::kOutOfOrder:
      return "out_of_order";
    case AppendFailure::kDuplicate:
      return "duplicate";
    case AppendFailure::kOutOfBounds:
      return "out_of_bounds";
    case AppendFailure::kTooOld:
      return "too_old";
    case AppendFailure::kTooManyLabels:
      return "too_many_labels";
    case AppendFailure::kInvalidLabels:
      return "invalid_labels";
    case AppendFailure::kDiskFull:
      return "disk_full";
    case AppendFailure::kIoError:
      return "io_error";
    case AppendFailure::kOther:
      break;
  }
  return "other";
}

}  // namespace gpumon::tsdb
