// Process-level helpers shared by subcommands: where the fake NVML lives,
// how simulation is switched on, the host name, and waiting for a
// termination signal.
#pragma once

#include <functional>
#include <string>

namespace gpumon::cli {

// The directory of the running executable.
std::string ExecutableDir();

// Path of the simulator's NVML library beside the executable.
std::string FakeNvmlPath();

// Configures the fake NVML (through its environment variables) for a
// simulated fleet, logs loudly that data is simulated, and returns the
// library path to load.
std::string EnableSimulation(const std::string& spec, const std::string& seed);

std::string LocalHostname();

// Blocks SIGINT/SIGTERM in all threads and calls on_signal from a watcher
// thread when one arrives. Call before starting other threads.
void OnTerminationSignal(std::function<void()> on_signal);

}  // namespace gpumon::cli
