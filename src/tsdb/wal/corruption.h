// Where a WAL stops being readable: either a torn tail (the last append cut
// off by a crash: expected, dropped silently) or corruption (damage before
// the end: reported, and repaired by truncating there).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace gpumon::tsdb::wal {

struct Corruption {
  int segment = -1;     // segment index
  std::string path;     // segment file
  uint64_t offset = 0;  // byte offset in that file where damage starts
  std::string reason;

  // "wal corruption in <path> at offset <n>: <reason>"
  std::string ToString() const;
  Status ToStatus() const { return Status::Error(ToString()); }
};

struct TornTail {
  int segment = -1;
  std::string path;
  uint64_t offset = 0;         // where the torn record starts (truncate here)
  uint64_t dropped_bytes = 0;  // bytes from offset to the end of the file
  std::string reason;

  std::string ToString() const;
};

}  // namespace gpumon::tsdb::wal
