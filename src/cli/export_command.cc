// `gpumon simulate-export`: writes GPU-shaped history as one OpenMetrics text
// file, the input `promtool tsdb create-blocks-from openmetrics` (and
// `gpumon tsdb import`) takes, for storage benchmarks and demos.
//
// The data goes through the agent's real path: fake NVML on its virtual clock
// -> one collector per simulated node -> family builder -> text writer. Each
// step sets the simulated time, collects every GPU group of every node (the
// agent's own process metrics are left out: they are not GPU-shaped) and
// keeps the values. Output: each family once, its series in order of first
// appearance, each series' samples in time order, timestamps in seconds,
// "# EOF" at the end. The same flags (seed, start, interval, ...) give a
// byte-identical file. XID events are read synchronously after each step's
// collection, so gpu_xid_errors_total counts them at the step they happened
// in. With --speed X, the sample at export time start + k * interval holds
// the simulator's state at k * interval * X (what a scraper of an agent
// running at --speed X records); --ground-truth writes the run's ground
// truth with t_unix_ms = start + t_ms / X.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/runtime.h"
#include "common/duration.h"
#include "exposition/text_writer.h"
#include "gpu/nvml_session.h"

namespace gpumon::cli {
namespace {

constexpr const char* kUsage =
    "usage: gpumon simulate-export --out FILE --nodes N [--gpus 8] [--model h200]\n"
    "                              [--duration 4h] [--interval 15s] [--start UNIX_SECONDS]\n"
    "                              [--seed K] [--names native|dcgm|both]\n"
    "                              [--scenario SPEC]... [--speed X] [--ground-truth FILE]\n"
    "Writes simulated GPU metrics over a span of time as one OpenMetrics file\n"
    "(timestamps in seconds, as `promtool tsdb create-blocks-from openmetrics`\n"
    "takes). --start defaults to now minus --duration, rounded down to --interval.\n"
    "Every series carries simulated=\"true\". --scenario (repeatable) runs simulator\n"
    "scenarios (node=N is N's --gpus GPUs); --speed X puts X simulated ms in each ms of\n"
    "the export; --ground-truth writes what really happened, times also in the export's\n"
    "unix ms (t_unix_ms).\n";

// Samples per rendered batch: bounds the scratch memory of the writer.
constexpr size_t kBatch = 2048;

using SetTimeFn = void (*)(int64_t);

std::string NodeName(long i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "sim-node-%04ld", i);
  return buf;
}

// One series' history. Steps are indexes into the export's time grid; while
// every step from the first on has a value (the usual case) they are implied
// and only the values are kept, 8 bytes a sample.
struct SeriesData {
  uint32_t family = 0;
  std::vector<exposition::Label> labels;
  uint32_t first_step = 0;
  bool sparse = false;
  std::vector<uint32_t> steps;  // only when sparse
  std::vector<double> values;

  uint32_t last_step() const {
    return sparse ? steps.back() : first_step + static_cast<uint32_t>(values.size()) - 1;
  }
  uint32_t step_at(size_t i) const {
    return sparse ? steps[i] : first_step + static_cast<uint32_t>(i);
  }

  void Add(uint32_t step, double value) {
    if (!sparse && step != first_step + values.size()) {
      steps.reserve(values.capacity());
      for (size_t i = 0; i < values.size(); ++i) {
        steps.push_back(first_step + static_cast<uint32_t>(i));
      }
      sparse = true;
    }
    if (sparse) steps.push_back(step);
    values.push_back(value);
  }
};

// Families and series seen so far, in order of first appearance.
class History {
 public:
  explicit History(size_t expected_steps) : expected_steps_(expected_steps) {}

  void Add(const std::vector<exposition::MetricFamily>& families, uint32_t step) {
    for (const auto& f : families) {
      const uint32_t family = FamilyIndex(f);
      for (const auto& s : f.samples) {
        key_.assign(reinterpret_cast<const char*>(&family), sizeof family);
        for (const auto& l : s.labels) {
          key_ += l.name;
          key_ += '\0';
          key_ += l.value;
          key_ += '\0';
        }
        auto it = series_index_.find(key_);
        if (it == series_index_.end()) {
          it = series_index_.emplace(key_, static_cast<uint32_t>(series_.size())).first;
          SeriesData d;
          d.family = family;
          d.labels = s.labels;
          d.first_step = step;
          d.values.reserve(expected_steps_);
          series_.push_back(std::move(d));
          families_[family].series.push_back(it->second);
        } else if (series_[it->second].last_step() >= step) {
          continue;  // a repeated series within one step keeps its first value
        }
        series_[it->second].Add(step, s.value);
        ++samples_;
      }
    }
  }

  struct Family {
    exposition::MetricFamily meta;  // name, type, help, unit; no samples
    std::vector<uint32_t> series;
  };
  const std::vector<Family>& families() const { return families_; }
  const std::vector<SeriesData>& series() const { return series_; }
  uint64_t samples() const { return samples_; }

 private:
  uint32_t FamilyIndex(const exposition::MetricFamily& f) {
    auto it = family_index_.find(f.name);
    if (it != family_index_.end()) return it->second;
    const auto index = static_cast<uint32_t>(families_.size());
    Family fam;
    fam.meta.name = f.name;
    fam.meta.type = f.type;
    fam.meta.help = f.help;
    fam.meta.unit = f.unit;
    families_.push_back(std::move(fam));
    family_index_.emplace(f.name, index);
    return index;
  }

  size_t expected_steps_;
  std::vector<Family> families_;
  std::unordered_map<std::string, uint32_t> family_index_;
  std::vector<SeriesData> series_;
  std::unordered_map<std::string, uint32_t> series_index_;
  std::string key_;  // scratch, reused to avoid an allocation per lookup
  uint64_t samples_ = 0;
};

// Progress on stderr, only when it is a terminal.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1) {}
  void Update(const char* what, uint64_t done, uint64_t total) {
    if (!tty_ || total == 0) return;
    const auto percent = static_cast<int>(done * 100 / total);
    if (percent == last_percent_ && done != total) return;
    last_percent_ = percent;
    std::fprintf(stderr, "\r%s: %3d%% (%" PRIu64 "/%" PRIu64 ")", what, percent, done, total);
    if (done == total) {
      std::fputc('\n', stderr);
      last_percent_ = -1;
    }
  }

 private:
  bool tty_;
  int last_percent_ = -1;
};

// Renders the history as OpenMetrics into `file`. Returns bytes written, or
// -1 on a write error.
int64_t WriteHistory(const History& history, int64_t start_ms, int64_t interval_ms,
                     std::FILE* file) {
  std::string out;
  int64_t written = 0;
  auto flush = [&]() -> bool {
    if (!out.empty() && std::fwrite(out.data(), 1, out.size(), file) != out.size()) return false;
    written += static_cast<int64_t>(out.size());
    out.clear();
    return true;
  };
  Progress progress;
  uint64_t done = 0;
  std::vector<exposition::MetricFamily> batch(1);
  std::string rendered;
  for (const auto& family : history.families()) {
    exposition::MetricFamily& f = batch[0];
    f.name = family.meta.name;
    f.type = family.meta.type;
    f.help = family.meta.help;
    f.unit = family.meta.unit;
    // The writer starts every rendering with the family's metadata lines; the
    // family is declared once, so later batches drop that (identical) prefix.
    std::string header;
    bool first = true;
    for (uint32_t index : family.series) {
      const SeriesData& s = history.series()[index];
      for (size_t i = 0; i < s.values.size(); i += kBatch) {
        const size_t n = std::min(kBatch, s.values.size() - i);
        f.samples.resize(n);
        for (size_t k = 0; k < n; ++k) {
          exposition::Sample& sample = f.samples[k];
          sample.labels = s.labels;  // reuses the previous strings' storage
          sample.value = s.values[i + k];
          sample.timestamp_ms = start_ms + static_cast<int64_t>(s.step_at(i + k)) * interval_ms;
        }
        rendered.clear();
        exposition::AppendFamilies(batch, exposition::Format::kOpenMetrics1, &rendered);
        if (first) {
          size_t pos = 0;
          while (pos < rendered.size() && rendered[pos] == '#') {
            pos = rendered.find('\n', pos);
            pos = pos == std::string::npos ? rendered.size() : pos + 1;
          }
          header = rendered.substr(0, pos);
          out += rendered;
          first = false;
        } else if (rendered.compare(0, header.size(), header) == 0) {
          out.append(rendered, header.size());
        } else {
          std::fprintf(stderr, "gpumon simulate-export: internal error: header of %s changed\n",
                       f.name.c_str());
          return -1;
        }
        done += n;
        progress.Update("writing", done, history.samples());
        if (out.size() >= (1u << 20) && !flush()) return -1;
      }
    }
  }
  exposition::FinishText(exposition::Format::kOpenMetrics1, &out);
  if (!flush()) return -1;
  return written;
}

}  // namespace

int RunSimulateExport(const std::vector<std::string>& args) {
  auto flags = Flags::Parse(args, {{"out", true},
                                   {"nodes", true},
                                   {"gpus", true},
                                   {"model", true},
                                   {"duration", true},
                                   {"interval", true},
                                   {"start", true},
                                   {"seed", true},
                                   {"names", true},
                                   {"scenario", true},
                                   {"speed", true},
                                   {"ground-truth", true},
                                   {"help", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon simulate-export: " << flags.status().message() << "\n" << kUsage;
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  auto fail = [](const std::string& message) {
    std::cerr << "gpumon simulate-export: " << message << "\n";
    return 2;
  };
  const std::optional<std::string> out_path = flags->Get("out");
  if (!out_path || out_path->empty()) return fail(std::string("--out is required\n") + kUsage);
  if (!flags->Has("nodes")) return fail(std::string("--nodes is required\n") + kUsage);
  auto nodes = flags->GetInt("nodes", 1, 1, 10000);
  auto gpus = flags->GetInt("gpus", 8, 1, 64);
  auto seed = flags->GetInt("seed", 1, 0, 1L << 40);
  for (const Status* s : {&nodes.status(), &gpus.status(), &seed.status()}) {
    if (!s->ok()) return fail(s->message());
  }
  if (*nodes * *gpus > 100000) return fail("--nodes x --gpus must be at most 100000 GPUs");
  auto interval = ParseDuration(flags->Get("interval").value_or("15s"));
  if (!interval.ok() || interval->count() < 100) {
    return fail("--interval: " + (interval.ok() ? std::string("must be at least 100ms")
                                                : interval.status().message()));
  }
  auto duration = ParseDuration(flags->Get("duration").value_or("4h"));
  if (!duration.ok() || duration->count() < interval->count()) {
    return fail("--duration: " + (duration.ok() ? std::string("must be at least one --interval")
                                                : duration.status().message()));
  }
  const int64_t interval_ms = interval->count();
  const int64_t steps = duration->count() / interval_ms;
  if (steps > (int64_t{1} << 31)) return fail("--duration / --interval is too many steps");
  int64_t start_ms = 0;
  if (flags->Has("start")) {
    auto start = flags->GetInt("start", 0, 0, 1L << 40);
    if (!start.ok()) return fail(start.status().message());
    start_ms = *start * 1000;
  } else {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    start_ms = (now_ms - duration->count()) / interval_ms * interval_ms;
  }
  auto scheme = gpu::NameSchemeFromString(flags->Get("names").value_or("native"));
  if (!scheme) return fail("--names must be native, dcgm or both");

  const std::string model = flags->Get("model").value_or("h200");
  SimulationSettings sim;
  sim.spec = model + "x" + std::to_string(*nodes * *gpus);
  sim.seed = std::to_string(*seed);
  sim.node_size = static_cast<int>(*gpus);
  if (Status s = ReadScenarioFlags(*flags, &sim); !s.ok()) return fail(s.message());
  if (Status s = CheckSimulation(sim); !s.ok()) return fail(s.message());
  // The virtual clock does not scale; the export maps its own time.
  const double speed = sim.speed;
  sim.speed = 1;
  // The fleet's time moves only when set below, so hours of history take
  // only as long as the CPU needs.
  setenv("GPUMON_SIM_CLOCK", "virtual", 1);
  unsetenv("GPUMON_SIM_SPEED");
  const std::string library = EnableSimulation(sim);
  auto session = gpu::NvmlSession::Start(library);
  if (!session.ok()) {
    std::cerr << "gpumon simulate-export: " << session.status().message() << "\n";
    return 1;
  }
  // The session loaded the library; RTLD_NOLOAD only finds that copy.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto set_time = handle != nullptr
                      ? reinterpret_cast<SetTimeFn>(dlsym(handle, "gpumonSimSetTimeMs"))
                      : nullptr;
  if (set_time == nullptr) {
    std::cerr << "gpumon simulate-export: " << library
              << " has no virtual clock (gpumonSimSetTimeMs)\n";
    if (handle != nullptr) dlclose(handle);
    return 1;
  }

  std::unique_ptr<GroundTruthFile> truth;
  if (auto path = flags->Get("ground-truth")) {
    auto opened = GroundTruthFile::Open(library, *path, static_cast<double>(start_ms), speed);
    if (!opened.ok()) {
      std::cerr << "gpumon simulate-export: " << opened.status().message() << "\n";
      dlclose(handle);
      return 1;
    }
    truth = std::move(opened).value();
  }

  std::FILE* file = std::fopen(out_path->c_str(), "wb");
  if (file == nullptr) {
    std::cerr << "gpumon simulate-export: cannot write " << *out_path << ": "
              << std::strerror(errno) << "\n";
    dlclose(handle);
    return 1;
  }

  std::vector<std::unique_ptr<gpu::GpuCollector>> collectors;
  collectors.reserve(static_cast<size_t>(*nodes));
  for (long i = 0; i < *nodes; ++i) {
    gpu::CollectorOptions options;
    options.hostname = NodeName(i);
    options.simulated = true;
    options.enabled[static_cast<size_t>(gpu::Group::kAgent)] = false;
    auto c = std::make_unique<gpu::GpuCollector>(
        &(*session)->library(), options, (*session)->versions(), static_cast<unsigned>(i * *gpus),
        static_cast<int>(*gpus));
    c->Discover();
    collectors.push_back(std::move(c));
  }
  // XID events, read after each step's collection (no watcher thread, so
  // the file stays a function of the flags).
  gpu::NvmlLibrary& nvml = (*session)->library();
  nvmlEventSet_t events = nullptr;
  if (nvml.nvmlEventSetCreate && nvml.nvmlDeviceRegisterEvents && nvml.nvmlEventSetWait_v2 &&
      nvml.nvmlEventSetFree && nvml.nvmlEventSetCreate(&events) == NVML_SUCCESS) {
    for (auto& c : collectors) {
      for (const auto& d : c->devices()) {
        if (d.handle != nullptr) {
          nvml.nvmlDeviceRegisterEvents(d.handle, nvmlEventTypeXidCriticalError, events);
        }
      }
    }
  }
  auto drain_xids = [&] {
    if (events == nullptr) return;
    nvmlEventData_t data{};
    while (nvml.nvmlEventSetWait_v2(events, &data, 0) == NVML_SUCCESS) {
      if (!(data.eventType & nvmlEventTypeXidCriticalError)) continue;
      for (auto& c : collectors) c->RecordXid(data.device, static_cast<unsigned>(data.eventData));
    }
  };

  History history(static_cast<size_t>(steps));
  Progress progress;
  std::vector<exposition::MetricFamily> families;
  for (int64_t step = 0; step < steps; ++step) {
    set_time(std::llround(static_cast<double>(step * interval_ms) * speed));
    for (auto& c : collectors) {
      for (int g = 0; g < gpu::kGroupCount; ++g) {
        const auto group = static_cast<gpu::Group>(g);
        if (group != gpu::Group::kAgent && group != gpu::Group::kXid) c->Collect(group);
      }
    }
    drain_xids();
    for (auto& c : collectors) {
      c->Collect(gpu::Group::kXid);
      gpu::Snapshot snapshot = c->snapshot();
      snapshot.groups[static_cast<size_t>(gpu::Group::kAgent)] = nullptr;
      families.clear();
      gpu::BuildFamilies(*c, snapshot, *scheme, &families);
      history.Add(families, static_cast<uint32_t>(step));
    }
    progress.Update("simulating", static_cast<uint64_t>(step + 1), static_cast<uint64_t>(steps));
  }
  if (events != nullptr) nvml.nvmlEventSetFree(events);
  if (truth) {
    if (Status s = truth->Write(); !s.ok()) {
      std::cerr << "gpumon simulate-export: --ground-truth: " << s.message() << "\n";
      return 1;
    }
    truth.reset();
  }
  collectors.clear();
  session->reset();
  dlclose(handle);

  const int64_t bytes = WriteHistory(history, start_ms, interval_ms, file);
  const bool closed = std::fclose(file) == 0;
  if (bytes < 0 || !closed) {
    std::cerr << "gpumon simulate-export: writing " << *out_path
              << " failed: " << std::strerror(errno) << "\n";
    return 1;
  }
  std::fprintf(stderr,
               "gpumon simulate-export: wrote %s: %zu families, %zu series, %" PRIu64
               " samples, %" PRId64 " bytes, %" PRId64 " steps of %" PRId64 " ms from %" PRId64
               " ms\n",
               out_path->c_str(), history.families().size(), history.series().size(),
               history.samples(), bytes, steps, interval_ms, start_ms);
  return 0;
}

}  // namespace gpumon::cli
