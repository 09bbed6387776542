// gpumon_tsdb_bench: in-process TSDB measurements against the targets of
// the TSDB issue (docs/benchmarks.md, "TSDB"). A plain program printing a
// table rather than Google Benchmark, because the memory measurement needs
// one large head built once and RSS read around it.
//
//   append   single-thread appends in scrape-loop shape (N series, one
//            sample each per commit, refs reused); head alone and the DB
//            with its WAL. Target >= 3M samples/s.
//   memory   1M series of GPU-shaped labels, 4 samples each: RSS delta and
//            HeadStats.memory_bytes per series. Target <= 1 KiB.
//   full     1M series holding a full two-hour head (480 samples at 15 s),
//            three value sources: synthetic GPU-like values, pessimistic
//            ones, and the simulator's real value streams (`gpumon
//            simulate-export`, 1 node x 8 H200 x 2 h, cycled over with a
//            distinct host per replica). Each is built in a child process
//            so its RSS delta is not blurred by another's freed heap.
//            Target <= 1 KiB per series.
//   decode   every sample read back through a querier, of the head and of
//            a persisted block. Reported per core.
//
// Usage: gpumon_tsdb_bench [--series_memory=N] [--full_series=N] [--only=full]
//                          [--full_values=gpu,pessimistic,sim] [--sim_file=PATH] [--dir=D]
// Without --sim_file the simulator's file is written into the temporary
// directory by the `gpumon` binary next to this one.
#include <malloc.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tsdb/db/db.h"
#include "tsdb/head/head.h"

namespace {

using gpumon::Label;
using gpumon::Labels;

// Rates use this thread's CPU time: the benchmark is single-threaded, and
// wall time on a shared machine measures the other processes too.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
};

constexpr int64_t kT0 = 1'700'000'000'000;
constexpr int64_t kStep = 15'000;

double Seconds(double since) { return Clock::now() - since; }

// Resident set size in bytes, from /proc/self/statm.
size_t Rss() {
  std::ifstream f("/proc/self/statm");
  size_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// A realistic value stream: GPU readings change slowly, with a few digits.
double Value(int s, int64_t k) {
  return 30.0 + (s % 50) + static_cast<double>((k * 7 + s) % 20) * 0.5;
}

// Values of a pessimistic gauge: 40% of the samples are random decimals
// with 4 significant digits, the rest repeat the previous value.
double PessimisticValue(int s, int64_t k) {
  uint64_t x = (static_cast<uint64_t>(s) << 20) ^ static_cast<uint64_t>(k);
  x = (x ^ (x >> 31)) * 0x7fb5d329728ea185ULL;
  x = (x ^ (x >> 27)) * 0x81dadef4bc2dcd35ULL;
  x ^= x >> 33;
  if (x % 10 >= 4 && k > 0) return PessimisticValue(s, k - 1);
  return static_cast<double>(x % 10000) / 100.0;
}

// Labels of series i of a GPU fleet: 8 GPUs per host, 20 metric names.
Labels GpuLabels(int i) {
  static const char* kMetrics[] = {
      "gpu_utilization_ratio",     "gpu_memory_used_bytes",       "gpu_memory_total_bytes",
      "gpu_temperature_celsius",   "gpu_power_usage_watts",       "gpu_power_limit_watts",
      "gpu_sm_clock_hertz",        "gpu_memory_clock_hertz",      "gpu_pcie_tx_bytes_total",
      "gpu_pcie_rx_bytes_total",   "gpu_energy_joules_total",     "gpu_fan_speed_ratio",
      "gpu_ecc_errors_total",      "gpu_xid_errors_total",        "gpu_nvlink_tx_bytes_total",
      "gpu_nvlink_rx_bytes_total", "gpu_encoder_utilization",     "gpu_decoder_utilization",
      "gpu_throttle_reasons",      "gpu_memory_utilization_ratio"};
  int metric = i % 20;
  int gpu_global = i / 20;
  int gpu = gpu_global % 8;
  int host = gpu_global / 8;
  char uuid[64], pci[32], hostname[32], instance[48], dev[16], g[4];
  std::snprintf(uuid, sizeof uuid, "GPU-%08x-%04x-%04x-%04x-%012x", host * 2654435761u, gpu,
                host & 0xffff, (host >> 16) & 0xffff, gpu_global * 40503u);
  std::snprintf(pci, sizeof pci, "00000000:%02X:00.0", 0x18 + gpu * 0x10);
  std::snprintf(hostname, sizeof hostname, "gpu-node-%05d", host);
  std::snprintf(instance, sizeof instance, "gpu-node-%05d:9400", host);
  std::snprintf(dev, sizeof dev, "nvidia%d", gpu);
  std::snprintf(g, sizeof g, "%d", gpu);
  return Labels::FromUnsorted({{"__name__", kMetrics[metric]},
                               {"gpu", g},
                               {"uuid", uuid},
                               {"pci_bus_id", pci},
                               {"device", dev},
                               {"model", "NVIDIA H100 80GB HBM3"},
                               {"hostname", hostname},
                               {"job", "gpumon"},
                               {"instance", instance},
                               {"driver_version", "550.54.15"}});
}

void Check(const gpumon::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.message().c_str());
    std::exit(1);
  }
}

// Appends `scrapes` commits of one sample per series, refs reused.
// Returns samples per second (the first scrape, which creates the series,
// is not timed).
double AppendLoop(const std::function<std::unique_ptr<gpumon::tsdb::head::HeadAppender>()>& make,
                  int series, int scrapes) {
  std::vector<Labels> labels;
  labels.reserve(series);
  for (int i = 0; i < series; ++i) labels.push_back(GpuLabels(i));
  std::vector<uint64_t> refs(series, 0);
  auto app = make();
  auto start = Clock::now();
  for (int k = 0; k < scrapes; ++k) {
    if (k == 1) start = Clock::now();
    int64_t t = kT0 + k * kStep;
    for (int i = 0; i < series; ++i) {
      auto r = app->Append(refs[i], labels[i], t, Value(i, k));
      Check(r.status(), "append");
      refs[i] = *r;
    }
    Check(app->Commit(), "commit");
  }
  return static_cast<double>(series) * (scrapes - 1) / Seconds(start);
}

// Reads every sample of every series; returns {samples, samples/s}.
std::pair<uint64_t, double> DecodeAll(const gpumon::tsdb::Querier& q) {
  auto m = gpumon::tsdb::Matcher::Make(gpumon::tsdb::MatchType::kRegexMatch, "__name__", ".+");
  Check(m.status(), "matcher");
  std::vector<gpumon::tsdb::Matcher> ms{*m};
  auto start = Clock::now();
  uint64_t n = 0;
  double sum = 0;
  auto set = q.Select(ms);
  while (set->Next()) {
    auto it = set->Iterator();
    while (it->Next()) {
      sum += it->At().v;
      ++n;
    }
    Check(it->status(), "iterate");
  }
  Check(set->status(), "select");
  double secs = Seconds(start);
  if (sum == 42) std::printf(" ");  // keeps the loop from being optimized away
  return {n, static_cast<double>(n) / secs};
}

void Row(const char* name, const std::string& value, const char* target) {
  std::printf("| %-52s | %20s | %-12s |\n", name, value.c_str(), target);
  std::fflush(stdout);
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The simulator's value streams: every series of one `gpumon
// simulate-export` file, its labels and its first `samples` values.
struct SimStreams {
  std::vector<std::vector<Label>> labels;  // per stream, without job/instance
  std::vector<double> values;              // stream-major, `samples` per stream
  int samples = 0;
  size_t size() const { return labels.size(); }
};

// Splits `name{a="x",b="y"} value [timestamp]` (the simulator's OpenMetrics
// lines; escapes \\, \" and \n in values) into labels and a value.
bool ParseSampleLine(std::string_view line, std::vector<Label>* labels, std::string* key,
                     double* value) {
  labels->clear();
  size_t brace = line.find_first_of("{ ");
  if (brace == std::string_view::npos) return false;
  labels->push_back({"__name__", std::string(line.substr(0, brace))});
  size_t p = brace;
  if (line[p] == '{') {
    ++p;
    while (p < line.size() && line[p] != '}') {
      size_t eq = line.find('=', p);
      if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
        return false;
      }
      Label l{std::string(line.substr(p, eq - p)), {}};
      size_t q = eq + 2;
      for (; q < line.size() && line[q] != '"'; ++q) {
        if (line[q] == '\\' && q + 1 < line.size()) {
          ++q;
          l.value.push_back(line[q] == 'n' ? '\n' : line[q]);
        } else {
          l.value.push_back(line[q]);
        }
      }
      if (q >= line.size()) return false;
      labels->push_back(std::move(l));
      p = q + 1;
      if (p < line.size() && line[p] == ',') ++p;
    }
    if (p >= line.size()) return false;
    *key = std::string(line.substr(0, p + 1));
    ++p;
  } else {
    *key = std::string(line.substr(0, p));
  }
  while (p < line.size() && line[p] == ' ') ++p;
  size_t end = line.find(' ', p);
  std::string num(line.substr(p, end == std::string_view::npos ? line.size() - p : end - p));
  char* stop = nullptr;
  *value = std::strtod(num.c_str(), &stop);  // also takes NaN, +Inf, -Inf
  return stop != num.c_str() && *stop == '\0';
}

// Reads the simulator's file line by line (no whole-file buffer, so the
// children's RSS baseline is not inflated by freed parse memory).
SimStreams LoadSim(const std::string& path, int samples) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::map<std::string, size_t> index;
  std::vector<std::vector<double>> streams;
  SimStreams sim;
  std::string line, key;
  std::vector<Label> labels;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    double v = 0;
    if (!ParseSampleLine(line, &labels, &key, &v)) {
      std::fprintf(stderr, "%s:%zu: cannot parse sample line\n", path.c_str(), lineno);
      std::exit(1);
    }
    auto [it, inserted] = index.try_emplace(key, streams.size());
    if (inserted) {
      streams.emplace_back();
      sim.labels.push_back(labels);
    }
    streams[it->second].push_back(v);
  }
  sim.samples = samples;
  sim.values.reserve(streams.size() * static_cast<size_t>(samples));
  for (size_t s = 0; s < streams.size(); ++s) {
    if (streams[s].size() < static_cast<size_t>(samples)) {
      std::fprintf(stderr, "%s: series %zu has %zu samples, need %d (use --duration 2h)\n",
                   path.c_str(), s, streams[s].size(), samples);
      std::exit(1);
    }
    sim.values.insert(sim.values.end(), streams[s].begin(), streams[s].begin() + samples);
  }
  if (streams.empty()) {
    std::fprintf(stderr, "%s: no samples\n", path.c_str());
    std::exit(1);
  }
  return sim;
}

// Runs `gpumon simulate-export` (the binary next to this one): 1 node of 8
// H200 over 2 h at 15 s, the full metric set, a fixed seed and start.
std::string WriteSimFile(const std::string& dir) {
  std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string gpumon = exe.substr(0, exe.rfind('/') + 1) + "gpumon";
  std::string out = dir + "/sim.om";
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl(gpumon.c_str(), gpumon.c_str(), "simulate-export", "--out", out.c_str(), "--nodes", "1",
          "--gpus", "8", "--model", "h200", "--duration", "2h", "--interval", "15s", "--start",
          "1700000000", "--seed", "1", static_cast<char*>(nullptr));
    std::perror(gpumon.c_str());
    std::_Exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s simulate-export failed; pass --sim_file=PATH instead\n",
                 gpumon.c_str());
    std::exit(1);
  }
  return out;
}

// Labels of head series i built from the simulator's streams: stream
// i % streams, replica i / streams as its own host (hostname, instance and
// GPU UUIDs are per host, as on a real fleet; job as a scrape adds it).
Labels SimLabels(const SimStreams& sim, int i) {
  const size_t stream = static_cast<size_t>(i) % sim.size();
  const size_t replica = static_cast<size_t>(i) / sim.size();
  char host[32], instance[48];
  std::snprintf(host, sizeof host, "sim-node-%05zu", replica);
  std::snprintf(instance, sizeof instance, "sim-node-%05zu:9400", replica);
  std::vector<Label> ls = sim.labels[stream];
  for (auto& l : ls) {
    if (l.name == "hostname") {
      l.value = host;
    } else if ((l.name == "uuid" || l.name == "UUID") && l.value.size() >= 12) {
      // Same shape, distinct per host: the last 12 hex digits mixed with the replica.
      uint64_t x = std::strtoull(l.value.substr(l.value.size() - 12).c_str(), nullptr, 16);
      x = (x ^ (replica * 0x9e3779b97f4a7c15ULL)) & 0xffffffffffffULL;
      char tail[16];
      std::snprintf(tail, sizeof tail, "%012" PRIx64, x);
      l.value.replace(l.value.size() - 12, 12, tail);
    }
  }
  ls.push_back({"job", "gpumon"});
  ls.push_back({"instance", instance});
  return Labels::FromUnsorted(std::move(ls));
}

enum class Values { kGpuLike, kPessimistic, kSim };

// Builds a head of `series` series with `samples` samples each at a 15 s
// step (batches of 10,000 series per commit, refs reused), in a child
// process, and prints its memory rows.
void FullHead(int series, int samples, Values values, const SimStreams* sim) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid > 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::exit(1);
    return;
  }
  std::vector<uint64_t> refs(series, 0);
  const size_t rss0 = Rss();
  auto head = std::make_unique<gpumon::tsdb::head::Head>();
  const auto start = Clock::now();
  for (int k = 0; k < samples; ++k) {
    auto app = head->Appender();
    for (int i = 0; i < series; ++i) {
      double v = 0;
      Labels l;
      switch (values) {
        case Values::kGpuLike:
          if (refs[i] == 0) l = GpuLabels(i);
          v = Value(i, k);
          break;
        case Values::kPessimistic:
          if (refs[i] == 0) l = GpuLabels(i);
          v = PessimisticValue(i, k);
          break;
        case Values::kSim:
          if (refs[i] == 0) l = SimLabels(*sim, i);
          v = sim->values[(static_cast<size_t>(i) % sim->size()) * sim->samples + k];
          break;
      }
      auto r = app->Append(refs[i], l, kT0 + k * kStep, v);
      Check(r.status(), "append");
      refs[i] = *r;
      if (i % 10000 == 9999) Check(app->Commit(), "commit");
    }
    Check(app->Commit(), "commit");
  }
  const double secs = Seconds(start);
  const size_t rss1 = Rss();
  const auto st = head->Stats(0);
  const double n = static_cast<double>(st.series);
  const char* what = values == Values::kGpuLike       ? "GPU-like values"
                     : values == Values::kPessimistic ? "pessimistic values"
                                                      : "simulator values";
  Row(("full 2h head: " + std::to_string(st.series) + " series x " + std::to_string(samples) +
       " samples, " + what)
          .c_str(),
      std::to_string(st.chunks) + " chunks", "-");
  Row(("full 2h head: RSS delta per series (" + Fmt("%.0f CPU s)", secs)).c_str(),
      Fmt("%.0f B", static_cast<double>(rss1 - rss0) / n), "<= 1024 B");
  Row("full 2h head: HeadStats.memory_bytes per series",
      Fmt("%.0f B", static_cast<double>(st.memory_bytes) / n), "<= 1024 B");
  Row("full 2h head: series + chunks / index per series",
      Fmt("%.0f B", static_cast<double>(st.series_bytes) / n) + " / " +
          Fmt("%.0f B", static_cast<double>(st.index_bytes) / n),
      "-");
  std::fflush(stdout);
  std::_Exit(0);  // the parent owns the temporary directory
}

}  // namespace

int main(int argc, char** argv) {
  int memory_series = 1'000'000;
  int full_series = 1'000'000;
  bool only_full = false;
  std::string full_values = "gpu,pessimistic,sim";
  std::string sim_file;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--series_memory=", 0) == 0) {
      memory_series = std::atoi(a.c_str() + 16);
    } else if (a.rfind("--full_series=", 0) == 0) {
      full_series = std::atoi(a.c_str() + 14);
    } else if (a == "--only=full") {
      only_full = true;
    } else if (a.rfind("--full_values=", 0) == 0) {
      full_values = a.substr(14);
    } else if (a.rfind("--sim_file=", 0) == 0) {
      sim_file = a.substr(11);
    } else if (a.rfind("--dir=", 0) == 0) {
      dir = a.substr(6);
    } else {
      std::fprintf(stderr,
                   "usage: gpumon_tsdb_bench [--series_memory=N] [--full_series=N] [--only=full] "
                   "[--full_values=gpu,pessimistic,sim] [--sim_file=PATH] [--dir=D]\n");
      return 2;
    }
  }
  namespace fs = std::filesystem;
  bool own_dir = dir.empty();
  if (own_dir) {
    char tmpl[] = "/tmp/gpumon-tsdb-bench-XXXXXX";
    if (!mkdtemp(tmpl)) return 1;
    dir = tmpl;
  }

  std::printf("| %-52s | %20s | %-12s |\n", "measure", "result", "target");
  std::printf("|%s|%s|%s|\n", std::string(54, '-').c_str(), std::string(22, '-').c_str(),
              std::string(14, '-').c_str());

  // 1. Append throughput.
  constexpr int kSeries = 10'000, kScrapes = 361;
  if (!only_full) {
    gpumon::tsdb::head::Head head;
    double rate = AppendLoop([&] { return head.Appender(); }, kSeries, kScrapes);
    Row("append, head only, 10k series x 360 scrapes", Fmt("%.2fM samples/s", rate / 1e6),
        ">= 3M/s");
    auto [n, drate] = DecodeAll(*head.Querier(gpumon::tsdb::kMinTime, gpumon::tsdb::kMaxTime));
    Row(("decode, head querier, " + std::to_string(n) + " samples").c_str(),
        Fmt("%.1fM samples/s", drate / 1e6), "-");
  }
  if (!only_full) {
    gpumon::tsdb::db::DbOptions o;
    o.maintain_interval_ms = 0;
    o.downsample = false;
    o.retention_ms = 0;
    auto db = gpumon::tsdb::db::DB::Open(dir + "/append", o);
    Check(db.status(), "open");
    double rate = AppendLoop([&] { return (*db)->Appender(); }, kSeries, kScrapes);
    Row("append, DB with WAL (batch sync), same shape", Fmt("%.2fM samples/s", rate / 1e6),
        ">= 3M/s");
    Check((*db)->FlushHead(), "flush");
    uint64_t total = 0;
    double secs = 0;
    for (const auto& b : (*db)->blocks()) {
      auto [n, r] = DecodeAll(*b->NewQuerier(gpumon::tsdb::kMinTime, gpumon::tsdb::kMaxTime));
      total += n;
      secs += static_cast<double>(n) / r;
    }
    Row(("decode, persisted blocks, " + std::to_string(total) + " samples").c_str(),
        Fmt("%.1fM samples/s", static_cast<double>(total) / secs / 1e6), "-");
  }

  // 2. Head memory per series.
  if (!only_full && memory_series > 0) {
    size_t rss0 = Rss();
    auto head = std::make_unique<gpumon::tsdb::head::Head>();
    std::vector<uint64_t> refs(memory_series, 0);
    size_t rss_refs = Rss();
    auto start = Clock::now();
    for (int k = 0; k < 4; ++k) {
      auto app = head->Appender();
      for (int i = 0; i < memory_series; ++i) {
        Labels l = refs[i] == 0 ? GpuLabels(i) : Labels();
        auto r = app->Append(refs[i], l, kT0 + k * kStep, Value(i, k));
        Check(r.status(), "append");
        refs[i] = *r;
        if (i % 10000 == 9999) Check(app->Commit(), "commit");
      }
      Check(app->Commit(), "commit");
    }
    double secs = Seconds(start);
    size_t rss1 = Rss();
    auto st = head->Stats(0);
    double n = static_cast<double>(st.series);
    Row(("memory: series in head (4 samples each, built in " + Fmt("%.1f CPU s)", secs)).c_str(),
        std::to_string(st.series), "1M");
    Row("memory: RSS delta per series", Fmt("%.0f B", static_cast<double>(rss1 - rss_refs) / n),
        "<= 1024 B");
    Row("memory: HeadStats.memory_bytes per series",
        Fmt("%.0f B", static_cast<double>(st.memory_bytes) / n), "<= 1024 B");
    Row("memory: of which series + chunks / index per series",
        Fmt("%.0f B", static_cast<double>(st.series_bytes) / n) + " / " +
            Fmt("%.0f B", static_cast<double>(st.index_bytes) / n),
        "-");
    Row("memory: bench's own ref array (excluded)",
        Fmt("%.1f MiB", static_cast<double>(rss_refs - rss0) / (1 << 20)), "-");
  }
  // 3. A full two-hour head: 480 samples at 15 s per series.
  if (full_series > 0) {
    auto wants = [&](const char* v) {
      return ("," + full_values + ",").find("," + std::string(v) + ",") != std::string::npos;
    };
    if (wants("gpu")) FullHead(full_series, 480, Values::kGpuLike, nullptr);
    if (wants("pessimistic")) FullHead(full_series, 480, Values::kPessimistic, nullptr);
    if (wants("sim")) {
      SimStreams sim = LoadSim(sim_file.empty() ? WriteSimFile(dir) : sim_file, 480);
      malloc_trim(0);  // parse memory must not be reused by the child's head
      std::printf("| %-52s | %20s | %-12s |\n",
                  ("full 2h head: simulator streams (" + std::to_string(sim.size()) + ")").c_str(),
                  (std::to_string(full_series / static_cast<int>(sim.size())) + " hosts").c_str(),
                  "-");
      FullHead(full_series, 480, Values::kSim, &sim);
    }
  }
  if (own_dir) fs::remove_all(dir);
  return 0;
}
