// The simulated GPU processes: a text file the fake NVML serves through
// nvmlDevice{Compute,Graphics}RunningProcesses (GPUMON_SIM_PROCESSES).
//
// Format: one process per line, `pid gpu_index used_bytes [kind]`, fields
// separated by spaces or tabs; pid is an integer in 1..2^31-1, gpu_index the
// simulator's NVML device index (0..gpus-1), used_bytes the GPU memory it
// uses, kind `compute` (the default), `graphics` or `both`. `#` starts a
// comment; blank lines are ignored. A pid may appear on several GPUs, but
// only once per GPU. A malformed line fails the whole file with an error
// naming its line.
//
// ProcessFile watches such a file: Current() re-reads it when its size,
// modification time or inode changed since the last read (so a file
// replaced by rename is picked up at once), and keeps what it parsed
// otherwise. An absent file (or an empty path) means no processes. A file
// that fails to parse yields the error until it changes again; what was
// accepted before is never mixed with a bad version. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::sim {

struct SimProcess {
  unsigned int pid = 0;
  int gpu = 0;
  uint64_t used_bytes = 0;
  bool compute = true;
  bool graphics = false;
  bool operator==(const SimProcess&) const = default;
};

// Parses the file's text for a fleet of `gpus` GPUs. `origin` names the
// file in errors.
Result<std::vector<SimProcess>> ParseProcessFile(std::string_view text, int gpus,
                                                 std::string_view origin);

class ProcessFile {
 public:
  ProcessFile(std::string path, int gpus);
  // The processes now in the file (see above).
  Result<std::vector<SimProcess>> Current();
  const std::string& path() const { return path_; }

 private:
  struct Key {
    bool exists = false;
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Key&) const = default;
  };
  std::string path_;
  int gpus_;
  std::mutex mu_;
  bool loaded_ = false;
  Key key_;
  Result<std::vector<SimProcess>> current_{std::vector<SimProcess>{}};
};

}  // namespace gpumon::sim
