// Process-level helpers shared by subcommands: where the fake NVML lives,
// how simulation is switched on (fleet, scenarios, time scale), the
// simulator's ground-truth file, the host name, and waiting for a
// termination signal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cli/flags.h"
#include "common/status.h"

namespace gpumon::cli {

// The directory of the running executable.
std::string ExecutableDir();

// Path of the simulator's NVML library beside the executable.
std::string FakeNvmlPath();

// A simulated fleet as the command line describes it.
struct SimulationSettings {
  std::string spec;  // fleet spec, e.g. "h200x8"
  std::string seed = "1";
  std::string scenarios;  // scenario list, ';'-separated (docs/simulator.md)
  double speed = 1;       // steady clock multiplier
  int node_size = 0;      // GPUs per node for node= in scenarios; 0: the whole fleet
};

// Flags every simulating command takes: "--scenario SPEC" (repeatable,
// joined with ';') and "--speed X" (a number > 0). Reads them into
// `settings`; errors name the flag.
Status ReadScenarioFlags(const Flags& flags, SimulationSettings* settings);

// Checks the fleet spec, seed and scenarios exactly as the simulator will
// read them, so a bad value fails before anything starts; errors quote the
// bad item (`scenario "x:gpu=9": gpu 9 out of range (8 available)`).
Status CheckSimulation(const SimulationSettings& settings);

// Configures the fake NVML (through its environment variables) for a
// simulated fleet, logs loudly that data is simulated, and returns the
// library path to load. Scenarios are set when given (flags override the
// environment), the speed when not 1, the node size always.
std::string EnableSimulation(const SimulationSettings& settings);
// Only the fleet spec and seed; every other simulator variable is left as
// the environment has it.
std::string EnableSimulation(const std::string& spec, const std::string& seed);

// The unix time now, in milliseconds.
int64_t UnixNowMs();

// Writes the loaded simulator's ground truth (docs/formats/ground-truth.md)
// to a file, adding each event's time on the caller's clock:
//   t_unix_ms = t0_unix_ms + t_ms / sim_ms_per_unix_ms
// (rounded to whole ms; also written at the top level). Each write replaces
// the file atomically (a temporary file renamed over it). Ground truth is
// read through the library's gpumonSimGroundTruth; before nvmlInit (or
// after the last nvmlShutdown) there is none and nothing is written.
class GroundTruthFile {
 public:
  // `library` must already be loaded (by an NvmlSession). Fails when it is
  // not the simulator's. sim_ms_per_unix_ms <= 0: the simulator's own
  // steady-clock speed (its "speed").
  static Result<std::unique_ptr<GroundTruthFile>> Open(const std::string& library, std::string path,
                                                       double t0_unix_ms,
                                                       double sim_ms_per_unix_ms);
  ~GroundTruthFile();
  GroundTruthFile(const GroundTruthFile&) = delete;
  GroundTruthFile& operator=(const GroundTruthFile&) = delete;

  Status Write();
  // Rewrites the file every `every` on a background thread until Stop().
  void StartPeriodic(std::chrono::milliseconds every);
  // Stops the background thread and, if there was one, writes a last
  // time. Idempotent; the destructor calls it.
  void Stop();
  const std::string& path() const { return path_; }

 private:
  GroundTruthFile() = default;

  void* handle_ = nullptr;
  size_t (*read_)(char*, size_t) = nullptr;
  std::string path_;
  double t0_unix_ms_ = 0;
  double scale_ = 1;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

std::string LocalHostname();

// Blocks SIGINT/SIGTERM in all threads and calls on_signal from a watcher
// thread when one arrives. Call before starting other threads.
void OnTerminationSignal(std::function<void()> on_signal);

}  // namespace gpumon::cli
