#include "cli/runtime.h"

#include <dlfcn.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/log.h"
#include "sim/fleet.h"
#include "sim/fleet_spec.h"
#include "sim/scenario.h"

namespace gpumon::cli {
namespace {

// Total GPUs of a spec; 0 when it does not parse.
int FleetSize(const std::string& spec) {
  auto parsed = sim::ParseFleetSpec(spec);
  return parsed.ok() ? parsed->total : 0;
}

int NodeSizeOf(const SimulationSettings& s) {
  if (s.node_size > 0) return s.node_size;
  return std::max(1, FleetSize(s.spec));
}

}  // namespace

std::string ExecutableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return exe.parent_path().string();
}

std::string FakeNvmlPath() { return ExecutableDir() + "/libgpumon-fake-nvml.so"; }

Status ReadScenarioFlags(const Flags& flags, SimulationSettings* settings) {
  std::string joined;
  for (const std::string& s : flags.GetAll("scenario")) {
    if (s.empty()) continue;
    if (!joined.empty()) joined += ';';
    joined += s;
  }
  settings->scenarios = joined;
  if (auto speed = flags.Get("speed")) {
    const double v = sim::ParseSpeed(*speed);
    if (v == 0) {
      return Status::Error("flag --speed: expected a number greater than 0, got \"" + *speed +
                           "\"");
    }
    settings->speed = v;
  }
  return Status::Ok();
}

Status CheckSimulation(const SimulationSettings& settings) {
  auto spec = sim::ParseFleetSpec(settings.spec);
  if (!spec.ok()) return spec.status();
  uint64_t seed = 0;
  for (char c : settings.seed) {
    if (c < '0' || c > '9')
      return Status::Error("seed \"" + settings.seed + "\" is not an unsigned integer");
    seed = seed * 10 + static_cast<uint64_t>(c - '0');
  }
  auto scenarios = sim::ParseScenarios(
      settings.scenarios, sim::ScenarioContext{&spec.value(), NodeSizeOf(settings), seed});
  if (!scenarios.ok()) return scenarios.status().WithContext("--scenario");
  return Status::Ok();
}

std::string EnableSimulation(const SimulationSettings& settings) {
  setenv("GPUMON_SIM_SPEC", settings.spec.c_str(), 1);
  setenv("GPUMON_SIM_SEED", settings.seed.c_str(), 1);
  // Flags override the environment; what they leave unset passes through.
  if (!settings.scenarios.empty()) setenv("GPUMON_SIM_SCENARIO", settings.scenarios.c_str(), 1);
  char speed[32];
  std::snprintf(speed, sizeof speed, "%.17g", settings.speed);
  if (settings.speed != 1) setenv("GPUMON_SIM_SPEED", speed, 1);
  setenv("GPUMON_SIM_NODE_SIZE", std::to_string(NodeSizeOf(settings)).c_str(), 1);
  std::string what = settings.spec;
  if (!settings.scenarios.empty()) what += "; scenarios " + settings.scenarios;
  if (settings.speed != 1) what += std::string("; ") + speed + "x speed";
  LogWarn("SIMULATION MODE: serving a simulated GPU fleet (" + what +
          "), not real hardware; every series carries simulated=\"true\"");
  return FakeNvmlPath();
}

std::string EnableSimulation(const std::string& spec, const std::string& seed) {
  // Only the fleet: scenarios, speed and node size stay as the environment has them.
  setenv("GPUMON_SIM_SPEC", spec.c_str(), 1);
  setenv("GPUMON_SIM_SEED", seed.c_str(), 1);
  LogWarn("SIMULATION MODE: serving a simulated GPU fleet (" + spec +
          "), not real hardware; every series carries simulated=\"true\"");
  return FakeNvmlPath();
}

int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<std::unique_ptr<GroundTruthFile>> GroundTruthFile::Open(const std::string& library,
                                                               std::string path, double t0_unix_ms,
                                                               double sim_ms_per_unix_ms) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  void* sym = handle != nullptr ? dlsym(handle, "gpumonSimGroundTruth") : nullptr;
  if (sym == nullptr) {
    if (handle != nullptr) dlclose(handle);
    return Status::Error("--ground-truth: " + library +
                         " is not a loaded simulator library (no gpumonSimGroundTruth)");
  }
  std::unique_ptr<GroundTruthFile> f(new GroundTruthFile());
  f->handle_ = handle;
  f->read_ = reinterpret_cast<size_t (*)(char*, size_t)>(sym);
  f->path_ = std::move(path);
  f->t0_unix_ms_ = t0_unix_ms;
  f->scale_ = sim_ms_per_unix_ms;
  return f;
}

GroundTruthFile::~GroundTruthFile() {
  Stop();
  if (handle_ != nullptr) dlclose(handle_);
}

Status GroundTruthFile::Write() {
  std::string json;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const size_t n = read_(nullptr, 0);
    if (n == 0) return Status::Ok();  // no fleet (yet, or any more)
    json.assign(n + 4096, '\0');      // room for events raised meanwhile
    const size_t m = read_(json.data(), json.size());
    if (m < json.size()) {
      json.resize(m);
      break;
    }
    json.clear();
  }
  if (json.empty()) return Status::Error("ground truth keeps growing; not written");
  rapidjson::Document d;
  d.Parse(json.c_str(), json.size());
  if (d.HasParseError() || !d.IsObject()) return Status::Error("ground truth is not JSON");
  auto& alloc = d.GetAllocator();
  // Without an explicit scale, the simulator's own steady-clock speed.
  double scale = scale_;
  if (!(scale > 0)) {
    scale = d.HasMember("speed") && d["speed"].IsNumber() ? d["speed"].GetDouble() : 1.0;
  }
  auto unix_ms = [&](int64_t t_ms) {
    return static_cast<int64_t>(std::llround(t0_unix_ms_ + static_cast<double>(t_ms) / scale));
  };
  d.AddMember("t0_unix_ms", static_cast<int64_t>(std::llround(t0_unix_ms_)), alloc);
  d.AddMember("sim_ms_per_unix_ms", scale, alloc);
  if (d.HasMember("now_ms") && d["now_ms"].IsInt64()) {
    d.AddMember("now_unix_ms", unix_ms(d["now_ms"].GetInt64()), alloc);
  }
  if (d.HasMember("events") && d["events"].IsArray()) {
    for (auto& e : d["events"].GetArray()) {
      if (e.IsObject() && e.HasMember("t_ms") && e["t_ms"].IsInt64()) {
        e.AddMember("t_unix_ms", unix_ms(e["t_ms"].GetInt64()), alloc);
      }
    }
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  d.Accept(w);
  const std::string tmp = path_ + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Status::Error("cannot write " + tmp + ": " + std::strerror(errno));
  const bool ok = std::fwrite(out.GetString(), 1, out.GetSize(), f) == out.GetSize() &&
                  std::fputc('\n', f) != EOF;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return Status::Error("writing " + tmp + " failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::Error("cannot replace " + path_ + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

void GroundTruthFile::StartPeriodic(std::chrono::milliseconds every) {
  if (thread_.joinable()) return;
  thread_ = std::thread([this, every] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (cv_.wait_for(lock, every, [this] { return stop_; })) break;
      lock.unlock();
      if (Status s = Write(); !s.ok()) LogWarn("ground truth: " + s.message());
      lock.lock();
    }
  });
}

void GroundTruthFile::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stop_ = true;
  }
  cv_.notify_all();
  if (!thread_.joinable()) return;
  thread_.join();
  if (Status s = Write(); !s.ok()) LogWarn("ground truth: " + s.message());
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
