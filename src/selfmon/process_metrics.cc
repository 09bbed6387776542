#include "selfmon/process_metrics.h"

#include <sys/resource.h>

#include <memory>
#include <optional>

#include "common/process_stats.h"

namespace gpumon::selfmon {
namespace {

struct ProcessState {
  std::optional<ProcessStats> stats;
  std::optional<double> max_fds;
};

std::optional<double> MaxFds() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<double>(lim.rlim_cur);
}

}  // namespace

Status RegisterProcessMetrics(Registry& registry) {
  auto state = std::make_shared<ProcessState>();
  // Families that read one field of the latest stats; absent without them.
  auto field = [state](double (*get)(const ProcessStats&)) {
    return [state, get](std::vector<CallbackSample>* out) {
      if (state->stats) out->push_back({{}, get(*state->stats)});
    };
  };
  struct Def {
    const char* name;
    const char* help;
    bool counter;
    double (*get)(const ProcessStats&);
  };
  const Def defs[] = {
      {"process_cpu_seconds_total", "CPU time used by this process, user plus system.", true,
       [](const ProcessStats& s) { return s.cpu_seconds; }},
      {"process_resident_memory_bytes", "Memory of this process resident in RAM.", false,
       [](const ProcessStats& s) { return static_cast<double>(s.resident_bytes); }},
      {"process_virtual_memory_bytes", "Virtual address space of this process.", false,
       [](const ProcessStats& s) { return static_cast<double>(s.virtual_bytes); }},
      {"process_open_fds", "File descriptors this process has open.", false,
       [](const ProcessStats& s) { return static_cast<double>(s.open_fds); }},
      {"process_start_time_seconds", "Unix time at which this process started.", false,
       [](const ProcessStats& s) { return s.start_time_seconds; }},
  };
  for (const Def& d : defs) {
    Status s = d.counter ? registry.AddCounterFunc(d.name, d.help, {}, field(d.get))
                         : registry.AddGaugeFunc(d.name, d.help, {}, field(d.get));
    if (!s.ok()) return s;
  }
  Status s = registry.AddGaugeFunc("process_max_fds",
                                   "Soft limit on the file descriptors this process may open.", {},
                                   [state](std::vector<CallbackSample>* out) {
                                     if (state->max_fds) out->push_back({{}, *state->max_fds});
                                   });
  if (!s.ok()) return s;
  registry.AddPreCollectHook([state] {
    state->stats = ReadProcessStats();
    state->max_fds = MaxFds();
  });
  return Status::Ok();
}

}  // namespace gpumon::selfmon
