// `gpumon rules backtest`: evaluates rule files over simulated history, in
// one process and faster than real time, and records the life of every
// alert (pending, firing, resolved) as JSON lines.
//
// The data goes through the agent's real path, as in `simulate-export`: the
// fake NVML on its virtual clock (scenarios from --scenario) -> one collector
// per simulated node (hostname sim-node-NNNN) -> family builder (simulated
// GPUs carry simulated="true") -> samples appended, with the labels a scrape
// adds (job, instance) and an `up` series per node, into an in-memory TSDB
// head. Series that disappear get a stale marker, as a scrape writes. The
// rule groups are evaluated on their own interval grid (Group::EvalTimestamp)
// as simulated time passes, each evaluation at a time t seeing the samples
// collected at or before t, and rules::BacktestRecorder turns their alert
// state into episodes.
//
// Bounded memory: only the metric groups (and families) the rules can select
// are collected and stored (rules::RuleRequirements), and every simulated
// hour each metric's samples older than what the rules selecting it read
// (plus 15 minutes) are deleted, and the head is truncated to the longest
// history any rule reads plus 15 minutes (--retention caps both). So memory
// grows with the series and the history the rules need, not with the run.
// Deterministic: one thread, simulated time only, so the same flags give
// byte-identical output.
#include <dlfcn.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/backtest_node.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/runtime.h"
#include "common/duration.h"
#include "common/log.h"
#include "gpu/nvml_session.h"
#include "promql/engine.h"
#include "rules/backtest_recorder.h"
#include "rules/group.h"
#include "rules/manager.h"
#include "rules/rule_file.h"
#include "rules/rule_requirements.h"
#include "scrape/appender.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/sample.h"

namespace gpumon::cli {
namespace {

constexpr const char* kUsage =
    "usage: gpumon rules backtest --rules FILE [--rules FILE...] [--nodes 1] [--gpus 8]\n"
    "                             [--model h200] [--scenario SPEC...] [--faults SPEC...]\n"
    "                             [--seed 1] [--duration 24h] [--interval 15s]\n"
    "                             [--start 1700000000] [--evaluation-interval 1m]\n"
    "                             [--groups all|temperature,power,...] [--names native|dcgm|both]\n"
    "                             [--job gpu] [--retention DURATION] [--out FILE|-]\n"
    "                             [--ground-truth FILE] [--rule-stats] [--full-builds]\n"
    "                             [--verbose]\n"
    "Evaluates the rule files over simulated GPU history (the fake NVML on a\n"
    "virtual clock, through the agent's collectors) faster than real time and\n"
    "writes one JSON line per alert episode: alertname, labels, severity,\n"
    "pending_at_ms, firing_at_ms (null: never fired), resolved_at_ms (null:\n"
    "still active at the end), annotations at first firing. Times are Unix ms\n"
    "from --start. --ground-truth writes the simulator's ground truth with the\n"
    "same times (t_unix_ms). Same flags, same output. --rule-stats lists the\n"
    "rules by evaluation time on stderr. --full-builds turns the families\n"
    "builder's fast path off (same output, slower; for checking).\n";

using SetTimeFn = void (*)(int64_t);
using GroundTruthFn = size_t (*)(char*, size_t);

constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kTruncateEveryMs = 60 * kMinute;
constexpr int64_t kRetentionMarginMs = 15 * kMinute;

std::string NodeName(long i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "sim-node-%04ld", i);
  return buf;
}

// XID events, read synchronously after each step of the virtual clock (the
// agent's XidWatcher does the same on a thread), so gpu_xid_errors_total
// counts them deterministically.
class XidDrain {
 public:
  XidDrain(gpu::NvmlLibrary& nvml, const std::vector<gpu::GpuCollector*>& cs) : nvml_(nvml) {
    if (!nvml_.nvmlEventSetCreate || !nvml_.nvmlDeviceRegisterEvents ||
        !nvml_.nvmlEventSetWait_v2 || !nvml_.nvmlEventSetFree ||
        nvml_.nvmlEventSetCreate(&set_) != NVML_SUCCESS) {
      set_ = nullptr;
      return;
    }
    for (const auto& c : cs) {
      for (const auto& d : c->devices()) {
        if (d.handle == nullptr || d.lost) continue;
        if (nvml_.nvmlDeviceRegisterEvents(d.handle, nvmlEventTypeXidCriticalError, set_) ==
            NVML_SUCCESS) {
          owner_[d.handle] = c;
        }
      }
    }
  }
  ~XidDrain() {
    if (set_ != nullptr) nvml_.nvmlEventSetFree(set_);
  }
  XidDrain(const XidDrain&) = delete;
  XidDrain& operator=(const XidDrain&) = delete;

  void Drain() {
    if (set_ == nullptr || owner_.empty()) return;
    nvmlEventData_t data{};
    while (nvml_.nvmlEventSetWait_v2(set_, &data, 0) == NVML_SUCCESS) {
      if (!(data.eventType & nvmlEventTypeXidCriticalError)) continue;
      auto it = owner_.find(data.device);
      if (it != owner_.end()) it->second->RecordXid(data.device, data.eventData);
    }
  }

 private:
  gpu::NvmlLibrary& nvml_;
  nvmlEventSet_t set_ = nullptr;
  std::unordered_map<nvmlDevice_t, gpu::GpuCollector*> owner_;
};

// Progress on stderr, only when it is a terminal, at most twice a second.
class Progress {
 public:
  Progress(int64_t total_ms, double gpus) : total_ms_(total_ms), gpus_(gpus) {
    tty_ = isatty(STDERR_FILENO) == 1;
    t0_ = std::chrono::steady_clock::now();
  }
  void Update(int64_t done_ms, bool last = false) {
    if (!tty_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!last && now - shown_ < std::chrono::milliseconds(500)) return;
    shown_ = now;
    const double wall = std::chrono::duration<double>(now - t0_).count();
    const double gpu_days = gpus_ * static_cast<double>(done_ms) / 86400e3;
    std::fprintf(stderr, "\rbacktest: %s / %s simulated (%3d%%), %.2f GPU-days/s   ",
                 FormatDuration(std::chrono::milliseconds(done_ms / kMinute * kMinute)).c_str(),
                 FormatDuration(std::chrono::milliseconds(total_ms_)).c_str(),
                 static_cast<int>(total_ms_ > 0 ? done_ms * 100 / total_ms_ : 100),
                 wall > 0 ? gpu_days / wall : 0.0);
    if (last) std::fputc('\n', stderr);
  }

 private:
  int64_t total_ms_;
  double gpus_;
  bool tty_ = false;
  std::chrono::steady_clock::time_point t0_;
  std::chrono::steady_clock::time_point shown_{};
};

// The simulator's ground truth with Unix-ms times ("t_unix_ms" = start + t_ms)
// and, per GPU event, the node's host name and the GPU's index in its node
// (the "gpu" label the alerts carry).
Result<std::string> GroundTruth(GroundTruthFn fn, int64_t start_ms, int64_t end_ms, long gpus,
                                long nodes, int64_t interval_ms) {
  const size_t n = fn(nullptr, 0);
  std::string text(n + 1, '\0');
  if (fn(text.data(), text.size()) != n) {
    return Status::Error("the ground truth changed while it was read");
  }
  text.resize(n);
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return Status::Error("the simulator's ground truth is not a JSON object");
  }
  auto& a = doc.GetAllocator();
  if (doc.HasMember("events") && doc["events"].IsArray()) {
    rapidjson::Value& events = doc["events"];
    for (rapidjson::SizeType i = 0; i < events.Size(); ++i) {
      rapidjson::Value& e = events[i];
      if (!e.IsObject()) continue;
      if (e.HasMember("t_ms") && e["t_ms"].IsNumber() && !e.HasMember("t_unix_ms")) {
        e.AddMember("t_unix_ms", rapidjson::Value(start_ms + e["t_ms"].GetInt64()), a);
      }
      if (e.HasMember("gpu") && e["gpu"].IsInt64()) {
        const int64_t g = e["gpu"].GetInt64();
        if (g >= 0 && g < gpus * nodes) {
          const std::string host = NodeName(static_cast<long>(g / gpus));
          e.AddMember("hostname", rapidjson::Value(host.c_str(), a), a);
          e.AddMember("node_gpu", rapidjson::Value(g % gpus), a);
        }
      }
    }
  }
  doc.AddMember("start_unix_ms", rapidjson::Value(start_ms), a);
  doc.AddMember("end_unix_ms", rapidjson::Value(end_ms), a);
  doc.AddMember("interval_ms", rapidjson::Value(interval_ms), a);
  doc.AddMember("nodes", rapidjson::Value(static_cast<int64_t>(nodes)), a);
  doc.AddMember("gpus_per_node", rapidjson::Value(static_cast<int64_t>(gpus)), a);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  doc.Accept(w);
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

// Drops samples no rule can read any more at time t: per metric name those
// older than what the rules selecting that name read (HistoryFor) plus a
// margin, capped at `retention_ms`; then everything older than retention_ms
// (series left empty disappear from the head).
Status Evict(tsdb::head::Head* head, const rules::RuleRequirements& needs, int64_t retention_ms,
             int64_t start_ms, int64_t t) {
  constexpr int64_t kUnbounded = rules::RuleRequirements::kUnbounded;
  auto q = head->Querier(tsdb::kMinTime, tsdb::kMaxTime);
  auto names = q->LabelValues(std::string(kMetricName), {});
  q.reset();
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    const int64_t history = needs.HistoryFor(name);
    if (history == kUnbounded) continue;
    const int64_t keep = std::min(history + kRetentionMarginMs, retention_ms);
    if (keep == kUnbounded || t - keep <= start_ms) continue;
    auto m = tsdb::Matcher::Make(tsdb::MatchType::kEqual, std::string(kMetricName), name);
    if (!m.ok()) return m.status();
    const std::vector<tsdb::Matcher> matchers{std::move(m).value()};
    if (Status st = head->Delete(matchers, tsdb::kMinTime, t - keep - 1); !st.ok()) return st;
  }
  if (retention_ms != kUnbounded && t - retention_ms > start_ms) {
    return head->Truncate(t - retention_ms);
  }
  return Status::Ok();
}

std::string Join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

bool WriteFile(const std::string& path, const std::string& data) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int RunRulesBacktest(const std::vector<std::string>& args) {
  auto flags = Flags::Parse(args, {{"rules", true},
                                   {"nodes", true},
                                   {"gpus", true},
                                   {"model", true},
                                   {"scenario", true},
                                   {"faults", true},
                                   {"seed", true},
                                   {"duration", true},
                                   {"interval", true},
                                   {"start", true},
                                   {"evaluation-interval", true},
                                   {"groups", true},
                                   {"names", true},
                                   {"job", true},
                                   {"retention", true},
                                   {"out", true},
                                   {"ground-truth", true},
                                   {"rule-stats", false},
                                   {"full-builds", false},
                                   {"verbose", false},
                                   {"help", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon rules backtest: " << flags.status().message() << "\n" << kUsage;
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  auto fail = [](const std::string& message) {
    std::cerr << "gpumon rules backtest: " << message << "\n";
    return 2;
  };
  const std::vector<std::string> rule_files = flags->GetAll("rules");
  if (rule_files.empty()) return fail(std::string("--rules is required\n") + kUsage);
  auto nodes = flags->GetInt("nodes", 1, 1, 10000);
  auto gpus = flags->GetInt("gpus", 8, 1, 64);
  auto seed = flags->GetInt("seed", 1, 0, 1L << 40);
  auto start = flags->GetInt("start", 1700000000, 0, 1L << 40);
  for (const Status* s : {&nodes.status(), &gpus.status(), &seed.status(), &start.status()}) {
    if (!s->ok()) return fail(s->message());
  }
  if (*nodes * *gpus > 100000) return fail("--nodes x --gpus must be at most 100000 GPUs");
  auto duration_flag = [&](const char* name, const char* fallback, int64_t min_ms,
                           int64_t* out) -> std::string {
    auto d = ParseDuration(flags->Get(name).value_or(fallback));
    if (!d.ok()) return std::string("--") + name + ": " + d.status().message();
    if (d->count() < min_ms) {
      return std::string("--") + name + ": must be at least " +
             FormatDuration(std::chrono::milliseconds(min_ms));
    }
    *out = d->count();
    return "";
  };
  int64_t interval_ms = 0, duration_ms = 0, eval_interval_ms = 0, retention_ms = 0;
  for (const std::string& e : {duration_flag("interval", "15s", 100, &interval_ms),
                               duration_flag("evaluation-interval", "1m", 100, &eval_interval_ms),
                               duration_flag("retention", "0s", 0, &retention_ms)}) {
    if (!e.empty()) return fail(e);
  }
  if (std::string e = duration_flag("duration", "24h", interval_ms, &duration_ms); !e.empty()) {
    return fail(e);
  }
  if (duration_ms / interval_ms > (int64_t{1} << 31)) {
    return fail("--duration / --interval is too many steps");
  }
  auto scheme = gpu::NameSchemeFromString(flags->Get("names").value_or("native"));
  if (!scheme) return fail("--names must be native, dcgm or both");
  const std::string job = flags->Get("job").value_or("gpu");
  const std::string out_path = flags->Get("out").value_or("-");
  const std::optional<std::string> truth_path = flags->Get("ground-truth");
  const bool verbose = flags->Has("verbose");
  const bool rule_stats = flags->Has("rule-stats");
  const int64_t start_ms = *start * 1000;
  const int64_t end_ms = start_ms + duration_ms;

  // Rules first: a bad file fails before any simulation.
  tsdb::head::HeadOptions head_opts;
  head_opts.chunk_range_ms = 30 * kMinute;
  tsdb::head::Head head(head_opts);
  promql::Engine engine;
  int64_t sim_now = start_ms;
  rules::GroupDeps deps;
  deps.engine = &engine;
  deps.queryable = [&head](int64_t mint, int64_t maxt) { return head.Querier(mint, maxt); };
  deps.appender = scrape::HeadAppenderFactory([&head] { return head.Appender(); });
  deps.now_ms = [&sim_now] { return sim_now; };
  std::vector<std::shared_ptr<rules::Group>> groups;
  for (const auto& path : rule_files) {
    auto spec = rules::LoadRuleFile(path);
    if (!spec.ok()) return fail(spec.status().message());
    auto built = rules::BuildGroups(*spec, eval_interval_ms, Labels{}, "http://localhost:9090",
                                    /*should_restore=*/false, &deps);
    if (!built.ok()) return fail(built.status().message());
    groups.insert(groups.end(), built->begin(), built->end());
  }
  const rules::RuleRequirements needs =
      rules::AnalyzeRules(groups, engine.options().lookback_delta_ms);
  if (retention_ms == 0) {
    retention_ms = needs.history_ms == rules::RuleRequirements::kUnbounded
                       ? rules::RuleRequirements::kUnbounded
                       : needs.history_ms + kRetentionMarginMs;
  }

  // Which metric groups to collect and which families to store.
  gpu::CollectorOptions copts;
  copts.simulated = true;
  bool store_all = false;
  if (flags->Has("groups")) {
    const std::string list = *flags->Get("groups");
    copts.enabled.fill(list == "all");
    store_all = true;
    if (list != "all") {
      size_t pos = 0;
      while (pos <= list.size()) {
        size_t comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        const std::string name = list.substr(pos, comma - pos);
        pos = comma + 1;
        if (name.empty()) continue;
        auto g = gpu::GroupFromName(name);
        if (!g) return fail("--groups: unknown metric group \"" + name + "\"");
        copts.enabled[static_cast<size_t>(*g)] = true;
      }
    }
  } else {
    copts.enabled.fill(false);
    for (const auto& def : gpu::Catalog()) {
      bool wanted = !def.name.empty() && needs.Needs(def.name);
      if (*scheme != gpu::NameScheme::kNative) {
        for (const auto& alias : def.dcgm) {
          if (!alias.name.empty() && needs.Needs(alias.name)) wanted = true;
        }
      }
      if (wanted) copts.enabled[static_cast<size_t>(def.group)] = true;
    }
  }
  copts.enabled[static_cast<size_t>(gpu::Group::kHealth)] = true;
  BacktestNodeOptions nopts;
  nopts.job = job;
  nopts.scheme = *scheme;
  nopts.groups = copts.enabled;
  nopts.add_up = store_all || needs.Needs("up");
  nopts.fast_path = !flags->Has("full-builds");
  if (!store_all) {
    auto memo = std::make_shared<std::unordered_map<std::string, bool>>();
    nopts.keep = [memo, &needs](const std::string& name) {
      auto it = memo->find(name);
      if (it == memo->end()) it = memo->emplace(name, needs.Needs(name)).first;
      return it->second;
    };
  }

  // The simulated fleet on its virtual clock, configured by the flags only.
  setenv("GPUMON_SIM_CLOCK", "virtual", 1);
  unsetenv("GPUMON_SIM_SPEED");
  const std::string scenarios = Join(flags->GetAll("scenario"), ';');
  const std::string faults = Join(flags->GetAll("faults"), ';');
  if (scenarios.empty()) {
    unsetenv("GPUMON_SIM_SCENARIO");
  } else {
    setenv("GPUMON_SIM_SCENARIO", scenarios.c_str(), 1);
  }
  if (faults.empty()) {
    unsetenv("GPUMON_SIM_FAULTS");
  } else {
    setenv("GPUMON_SIM_FAULTS", faults.c_str(), 1);
  }
  // A node of the backtest is a node of the scenarios (node=, cooling-loss racks).
  setenv("GPUMON_SIM_NODE_SIZE", std::to_string(*gpus).c_str(), 1);
  const std::string model = flags->Get("model").value_or("h200");
  const std::string library =
      EnableSimulation(model + "x" + std::to_string(*nodes * *gpus), std::to_string(*seed));
  auto session = gpu::NvmlSession::Start(library);
  if (!session.ok()) {
    std::cerr << "gpumon rules backtest: " << session.status().message() << "\n";
    return 1;
  }
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto set_time = handle != nullptr
                      ? reinterpret_cast<SetTimeFn>(dlsym(handle, "gpumonSimSetTimeMs"))
                      : nullptr;
  auto ground_truth = handle != nullptr
                          ? reinterpret_cast<GroundTruthFn>(dlsym(handle, "gpumonSimGroundTruth"))
                          : nullptr;
  std::vector<std::unique_ptr<BacktestNode>> fleet;
  std::unique_ptr<XidDrain> xids;
  // Everything that calls into the library goes before it is unloaded.
  auto unload = [&](int rc) {
    xids.reset();
    fleet.clear();
    session->reset();
    if (handle != nullptr) dlclose(handle);
    return rc;
  };
  if (set_time == nullptr) {
    std::cerr << "gpumon rules backtest: " << library
              << " has no virtual clock (gpumonSimSetTimeMs)\n";
    return unload(1);
  }
  if (ground_truth == nullptr && (truth_path || !scenarios.empty())) {
    std::cerr << "gpumon rules backtest: " << library
              << " has no scenario support (no gpumonSimGroundTruth symbol): "
              << (truth_path ? "--ground-truth" : "--scenario") << " cannot be honoured\n";
    return unload(1);
  }

  std::FILE* out = out_path == "-" ? stdout : std::fopen(out_path.c_str(), "wb");
  if (out == nullptr) {
    std::cerr << "gpumon rules backtest: cannot write " << out_path << ": " << std::strerror(errno)
              << "\n";
    return unload(1);
  }
  std::string pending_out;
  bool write_ok = true;
  auto flush = [&] {
    if (!pending_out.empty() &&
        std::fwrite(pending_out.data(), 1, pending_out.size(), out) != pending_out.size()) {
      write_ok = false;
    }
    pending_out.clear();
  };
  rules::BacktestRecorder recorder([&](const rules::AlertEpisode& e) {
    pending_out += rules::EpisodeJson(e);
    pending_out += '\n';
    if (pending_out.size() >= (1u << 20)) flush();
  });

  fleet.reserve(static_cast<size_t>(*nodes));
  std::vector<gpu::GpuCollector*> collectors;
  set_time(0);
  for (long i = 0; i < *nodes; ++i) {
    copts.hostname = NodeName(i);
    auto c = std::make_unique<gpu::GpuCollector>(
        &(*session)->library(), copts, (*session)->versions(), static_cast<unsigned>(i * *gpus),
        static_cast<int>(*gpus));
    c->Discover();
    collectors.push_back(c.get());
    nopts.instance = copts.hostname + ":9400";
    fleet.push_back(std::make_unique<BacktestNode>(std::move(c), nopts));
  }
  if (copts.enabled[static_cast<size_t>(gpu::Group::kXid)]) {
    xids = std::make_unique<XidDrain>((*session)->library(), collectors);
  }

  // Group evaluations on their grids, from the first grid time >= start.
  std::vector<int64_t> next_eval(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    int64_t t = groups[i]->EvalTimestamp(start_ms);
    if (t < start_ms) t += groups[i]->interval_ms();
    next_eval[i] = t;
  }
  uint64_t evaluations = 0;
  double eval_seconds = 0;
  std::vector<std::vector<double>> rule_seconds(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) rule_seconds[i].resize(groups[i]->rules().size());
  std::set<std::string> reported_errors;
  if (!verbose) SetLogLevel(LogLevel::kError);  // failing rules are reported once below
  auto eval_until = [&](int64_t limit, bool inclusive) {
    while (true) {
      size_t best = groups.size();
      for (size_t i = 0; i < groups.size(); ++i) {
        if (next_eval[i] < limit || (inclusive && next_eval[i] == limit)) {
          if (best == groups.size() || next_eval[i] < next_eval[best]) best = i;
        }
      }
      if (best == groups.size()) return;
      rules::Group& g = *groups[best];
      sim_now = next_eval[best];
      const uint64_t failures = g.evaluation_failures_total();
      const auto t0 = std::chrono::steady_clock::now();
      g.Eval(sim_now);
      recorder.Observe(g, sim_now);
      eval_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++evaluations;
      if (rule_stats) {
        for (size_t r = 0; r < g.rules().size(); ++r) {
          rule_seconds[best][r] += g.rules()[r]->status().evaluation_seconds;
        }
      }
      if (g.evaluation_failures_total() != failures) {
        for (const auto& r : g.rules()) {
          const rules::RuleStatus st = r->status();
          if (st.health != rules::RuleHealth::kBad) continue;
          if (reported_errors.insert(g.file() + "/" + g.name() + "/" + r->name()).second) {
            std::fprintf(stderr,
                         "gpumon rules backtest: rule \"%s\" (group \"%s\" of %s) failed at "
                         "%" PRId64 ": %s\n",
                         r->name().c_str(), g.name().c_str(), g.file().c_str(), sim_now,
                         st.last_error.c_str());
          }
        }
      }
      next_eval[best] += g.interval_ms();
    }
  };

  const auto wall0 = std::chrono::steady_clock::now();
  const int64_t steps = duration_ms / interval_ms;
  Progress progress(duration_ms, static_cast<double>(*nodes * *gpus));
  uint64_t samples = 0, rejected = 0;
  size_t peak_series = 0;
  int64_t evicted_at = start_ms;
  for (int64_t step = 0; step <= steps; ++step) {
    const int64_t t = start_ms + step * interval_ms;
    eval_until(t, /*inclusive=*/false);
    sim_now = t;
    set_time(step * interval_ms);
    if (xids) xids->Drain();
    auto app = head.Appender();
    for (auto& node : fleet) {
      rejected += node->Step(t, static_cast<uint32_t>(step), app.get());
    }
    samples += app->NumPending();
    if (Status s = app->Commit(); !s.ok()) {
      std::cerr << "gpumon rules backtest: appending samples at " << t << " failed: " << s.message()
                << "\n";
      return unload(1);
    }
    peak_series = std::max(peak_series, head.NumSeries());
    if (t - evicted_at >= kTruncateEveryMs) {
      evicted_at = t;
      if (Status st = Evict(&head, needs, retention_ms, start_ms, t); !st.ok()) {
        std::cerr << "gpumon rules backtest: evicting old samples failed: " << st.message() << "\n";
        return unload(1);
      }
    }
    progress.Update(t - start_ms);
  }
  eval_until(end_ms, /*inclusive=*/true);
  recorder.Finish();
  flush();
  progress.Update(duration_ms, /*last=*/true);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  std::string truth;
  if (truth_path) {
    auto gt = GroundTruth(ground_truth, start_ms, end_ms, *gpus, *nodes, interval_ms);
    if (!gt.ok()) {
      std::cerr << "gpumon rules backtest: " << gt.status().message() << "\n";
      return unload(1);
    }
    truth = std::move(gt).value();
  }
  uint64_t fast_steps = 0, full_steps = 0;
  for (const auto& node : fleet) {
    fast_steps += node->fast_steps();
    full_steps += node->full_steps();
  }
  unload(0);

  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!write_ok || !closed) {
    std::cerr << "gpumon rules backtest: writing " << out_path
              << " failed: " << std::strerror(errno) << "\n";
    return 1;
  }
  if (truth_path && !WriteFile(*truth_path, truth)) {
    std::cerr << "gpumon rules backtest: cannot write " << *truth_path << ": "
              << std::strerror(errno) << "\n";
    return 1;
  }
  size_t rule_count = 0;
  for (const auto& g : groups) rule_count += g->rules().size();
  const double gpu_days =
      static_cast<double>(*nodes * *gpus) * static_cast<double>(duration_ms) / 86400e3;
  if (rule_stats) {
    struct Row {
      double seconds;
      std::string name;
    };
    std::vector<Row> rows;
    double total = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
      for (size_t r = 0; r < groups[i]->rules().size(); ++r) {
        rows.push_back({rule_seconds[i][r], groups[i]->file() + ": " + groups[i]->name() + ": " +
                                                groups[i]->rules()[r]->name()});
        total += rule_seconds[i][r];
      }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.seconds > b.seconds; });
    std::fprintf(stderr, "rule evaluation time (%.2f s in all):\n", total);
    for (const Row& row : rows) {
      std::fprintf(stderr, "%9.3f s %5.1f%%  %s\n", row.seconds,
                   total > 0 ? 100 * row.seconds / total : 0.0, row.name.c_str());
    }
  }
  std::fprintf(
      stderr,
      "gpumon rules backtest: %ld x %ld GPUs, %s simulated in %.2f s (%.2f GPU-days/s, "
      "%.2f s evaluating rules); "
      "%zu rules in %zu groups, %" PRIu64 " evaluations, %zu rules failing; %" PRIu64
      " samples (%" PRIu64 " rejected, node steps %" PRIu64 " fast / %" PRIu64
      " full), peak %zu series, longest history kept %s; %" PRIu64 " episodes, %" PRIu64 " fired\n",
      *nodes, *gpus, FormatDuration(std::chrono::milliseconds(duration_ms)).c_str(), wall,
      wall > 0 ? gpu_days / wall : 0.0, eval_seconds, rule_count, groups.size(), evaluations,
      reported_errors.size(), samples, rejected, fast_steps, full_steps, peak_series,
      retention_ms == rules::RuleRequirements::kUnbounded
          ? "unbounded"
          : FormatDuration(std::chrono::milliseconds(retention_ms)).c_str(),
      recorder.stats().episodes, recorder.stats().fired);
  return 0;
}

}  // namespace gpumon::cli
