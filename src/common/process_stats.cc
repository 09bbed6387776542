#include "common/process_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace gpumon {

std::optional<ProcessStats> ReadProcessStats() {
  std::ifstream stat_file("/proc/self/stat");
  std::string line;
  if (!std::getline(stat_file, line)) return std::nullopt;
  // Fields after the command name, which is in parentheses and may hold spaces.
  auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(line.substr(close + 2));
  std::string field[64];
  int n = 0;
  while (n < 64 && in >> field[n]) ++n;
  if (n < 22) return std::nullopt;
  // field[0] is "state" (proc(5) field 3), so field k is proc field k + 3.
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  ProcessStats s;
  s.cpu_seconds = (std::stod(field[11]) + std::stod(field[12])) / ticks;
  s.virtual_bytes = std::stoull(field[20]);
  s.resident_bytes = std::stoull(field[21]) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  double start_ticks = std::stod(field[19]);
  std::ifstream stat_all("/proc/stat");
  std::string key;
  double btime = 0;
  while (stat_all >> key) {
    if (key == "btime") {
      stat_all >> btime;
      break;
    }
  }
  s.start_time_seconds = btime + start_ticks / ticks;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (struct dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ++s.open_fds;
    }
    closedir(d);
  }
  return s;
}

}  // namespace gpumon
