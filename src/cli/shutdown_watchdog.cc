#include "cli/shutdown_watchdog.h"

#include <unistd.h>

#include <cstdio>
#include <thread>

#include "common/duration.h"
#include "common/log.h"

namespace gpumon::cli {

// A component that hangs while stopping must not keep the process alive: an
// orchestrator would SIGKILL it later anyway, without a log line saying why.
void ArmShutdownWatchdog(std::chrono::milliseconds timeout, std::string flag) {
  std::thread([timeout, flag = std::move(flag)] {
    std::this_thread::sleep_for(timeout);
    LogError("shutdown did not finish within " + FormatDuration(timeout) +
             (flag.empty() ? "" : " (" + flag + ")") + ", exiting");
    std::fflush(nullptr);
    _exit(1);
  }).detach();
}

}  // namespace gpumon::cli
