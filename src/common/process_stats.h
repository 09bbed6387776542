// The process's own resource use, read from /proc/self (Linux), for the
// standard process_* self-metrics and for benchmarks.
#pragma once

#include <cstdint>
#include <optional>

namespace gpumon {

struct ProcessStats {
  double cpu_seconds = 0;       // user + system
  uint64_t resident_bytes = 0;  // RSS
  uint64_t virtual_bytes = 0;
  double start_time_seconds = 0;  // Unix time the process started
  uint64_t open_fds = 0;
};

// Returns nullopt where /proc is unavailable.
std::optional<ProcessStats> ReadProcessStats();

}  // namespace gpumon
