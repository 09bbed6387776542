#include "cli/runtime.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/log.h"

namespace gpumon::cli {

std::string ExecutableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return exe.parent_path().string();
}

std::string FakeNvmlPath() { return ExecutableDir() + "/libgpumon-fake-nvml.so"; }

std::string EnableSimulation(const std::string& spec, const std::string& seed) {
  setenv("GPUMON_SIM_SPEC", spec.c_str(), 1);
  setenv("GPUMON_SIM_SEED", seed.c_str(), 1);
  LogWarn("SIMULATION MODE: serving a simulated GPU fleet (" + spec +
          "), not real hardware; every series carries simulated=\"true\"");
  return FakeNvmlPath();
}

std::string LocalHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

void OnTerminationSignal(std::function<void()> on_signal) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, on_signal = std::move(on_signal)] {
    int sig = 0;
    sigwait(&set, &sig);
    LogInfo(std::string("received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + ", stopping");
    on_signal();
  }).detach();
}

}  // namespace gpumon::cli
