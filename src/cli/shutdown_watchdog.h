// A bound on how long a gpumon process takes to exit after SIGTERM/SIGINT.
//
// Contract: ArmShutdownWatchdog(timeout, flag) returns at once; if the
// process is still running `timeout` later, it logs that shutdown did not
// finish (naming `flag`, the setting that controls the timeout, when given)
// and ends the process with _exit(1), skipping destructors that might be
// what hangs. Arm it from the signal watcher, once.
#pragma once

#include <chrono>
#include <string>

namespace gpumon::cli {

void ArmShutdownWatchdog(std::chrono::milliseconds timeout, std::string flag = "");

}  // namespace gpumon::cli
