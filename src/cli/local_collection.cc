#include "cli/local_collection.h"

#include <chrono>
#include <mutex>

#include "cli/runtime.h"
#include "common/log.h"
#include "exposition/text_writer.h"
#include "gpu/collector.h"
#include "gpu/nvml_session.h"
#include "gpu/scheduler.h"
#include "gpu/xid_watcher.h"
#include "scrape/scrape_loop.h"
#include "scrape/target.h"

namespace gpumon::cli {
namespace {

scrape::Target LocalTarget(const std::string& job, const std::string& instance,
                           const std::string& url, int64_t interval_ms) {
  scrape::Target t;
  t.labels = Labels::FromUnsorted({{"instance", instance}, {"job", job}});
  t.discovered =
      Labels::FromUnsorted({{"__address__", instance}, {"job", job}, {"__scheme__", "local"}});
  t.scrape_pool = job;
  t.url = url;
  t.interval_ms = interval_ms;
  t.timeout_ms = interval_ms;
  return t;
}

// A fetch that renders in-process: the body a scrape over HTTP would get.
scrape::Fetcher InProcessFetch(std::function<void(exposition::Format, std::string*)> render) {
  return [render = std::move(render)](const std::string&, int64_t,
                                      uint64_t) -> Result<scrape::FetchResult> {
    scrape::FetchResult r;
    render(exposition::Format::kText004, &r.body);
    r.content_type = std::string(exposition::ContentTypeOf(exposition::Format::kText004));
    return r;
  };
}

}  // namespace

struct LocalCollection::Impl {
  std::unique_ptr<gpu::NvmlSession> session;
  std::unique_ptr<GroundTruthFile> ground_truth;  // before the session goes
  std::unique_ptr<gpu::GpuCollector> collector;
  gpu::CollectionScheduler scheduler;
  std::unique_ptr<gpu::XidWatcher> xids;
  bool scheduler_started = false;
  std::vector<std::unique_ptr<scrape::ScrapeLoop>> loops;
  std::mutex stop_mu;
  bool stopped = false;
};

LocalCollection::LocalCollection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LocalCollection::~LocalCollection() { Stop(); }

size_t LocalCollection::gpus() const {
  return impl_->collector ? impl_->collector->devices().size() : 0;
}

void LocalCollection::ScrapeNow(int64_t now_ms) {
  for (auto& loop : impl_->loops) loop->ScrapeOnce(now_ms);
}

std::vector<scrape::TargetSnapshot> LocalCollection::Targets() const {
  std::vector<scrape::TargetSnapshot> out;
  for (const auto& loop : impl_->loops) {
    out.push_back(scrape::SnapshotOf(*loop));
  }
  return out;
}

void LocalCollection::Stop() {
  std::lock_guard<std::mutex> lock(impl_->stop_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  // Loops first: their last act is writing stale markers, and the node
  // loop reads the collector.
  for (auto& loop : impl_->loops) loop->Stop(true);
  if (impl_->xids) impl_->xids->Stop();
  if (impl_->scheduler_started) impl_->scheduler.Stop();
  if (impl_->ground_truth) impl_->ground_truth->Stop();
}

Result<std::unique_ptr<LocalCollection>> StartLocalCollection(const LocalCollectionOptions& options,
                                                              scrape::AppenderFactory appender) {
  if (options.interval_ms <= 0) return Status::Error("local collection: interval must be > 0");
  if (!options.collect_node && !options.self_metrics) {
    return Status::Error("local collection: nothing to collect");
  }
  auto impl = std::make_unique<LocalCollection::Impl>();
  std::string description;
  bool simulated = false;

  if (options.collect_node) {
    gpu::CollectorOptions copts;
    copts.hostname = options.hostname.empty() ? LocalHostname() : options.hostname;
    std::string library = gpu::kDefaultNvmlLibrary;
    // Asked-for libraries must load; the default driver may be absent.
    bool required = false;
    if (options.simulate_spec) {
      SimulationSettings sim;
      sim.spec = *options.simulate_spec;
      sim.seed = options.seed;
      sim.scenarios = options.scenarios;
      sim.speed = options.speed;
      if (Status s = CheckSimulation(sim); !s.ok()) {
        return Status::Error("local collection: " + s.message());
      }
      library = EnableSimulation(sim);
      copts.simulated = true;
      required = true;
    }
    if (!options.nvml_library.empty()) {
      library = options.nvml_library;
      required = true;
    }
    // Simulated time 0 is (within a millisecond) this moment.
    const int64_t t0_unix_ms = UnixNowMs();
    auto started = gpu::NvmlSession::Start(library);
    std::string nvml_error;
    if (started.ok()) {
      impl->session = std::move(started).value();
      if (impl->session->library().simulated() && !copts.simulated) {
        LogWarn("SIMULATION MODE: " + library +
                " is the simulator's NVML, not a driver; every series carries simulated=\"true\"");
        copts.simulated = true;
      }
    } else if (required) {
      return Status::Error("local collection: cannot load NVML library " + library + ": " +
                           started.status().message());
    } else {
      nvml_error = started.status().message();
    }
    if (!options.ground_truth_file.empty()) {
      auto opened = impl->session ? GroundTruthFile::Open(library, options.ground_truth_file,
                                                          static_cast<double>(t0_unix_ms), 0)
                                  : Result<std::unique_ptr<GroundTruthFile>>(
                                        Status::Error("--ground-truth: NVML did not start"));
      if (!opened.ok()) return Status::Error("local collection: " + opened.status().message());
      impl->ground_truth = std::move(opened).value();
      if (options.run) impl->ground_truth->StartPeriodic(std::chrono::seconds(5));
    }
    gpu::NvmlLibrary* lib = impl->session ? &impl->session->library() : nullptr;
    impl->collector = std::make_unique<gpu::GpuCollector>(
        lib, copts, impl->session ? impl->session->versions() : gpu::SystemVersions{});
    impl->collector->Discover();
    simulated = copts.simulated;
    const std::string n = std::to_string(impl->collector->devices().size());
    if (!impl->session) {
      description = "no NVML found (" + nvml_error + "): agent metrics only, no GPU metrics";
    } else if (simulated) {
      description = "SIMULATED fleet" +
                    (options.simulate_spec ? " " + *options.simulate_spec : std::string()) + ": " +
                    n + " GPUs, not real hardware";
    } else {
      description =
          "collecting from NVML: " + n + " GPUs (driver " + impl->session->versions().driver + ")";
    }

    if (options.run) {
      for (int g = 0; g < gpu::kGroupCount; ++g) {
        auto group = static_cast<gpu::Group>(g);
        // The agent's default intervals: the scrape interval bounds how
        // fresh stored values are, not how often the GPUs are read.
        impl->scheduler.Add(impl->collector.get(), group,
                            gpu::IsSelectableGroup(group) ? gpu::DefaultInterval(group)
                                                          : std::chrono::milliseconds(1000));
      }
      impl->scheduler.Start();
      impl->scheduler_started = true;
      if (impl->session) {
        impl->xids = std::make_unique<gpu::XidWatcher>(impl->session->library());
        impl->xids->Start({impl->collector.get()});
      }
    }

    const gpu::GpuCollector* c = impl->collector.get();
    const gpu::NameScheme scheme = options.names;
    const bool drop_process = static_cast<bool>(options.self_metrics);
    auto render = [c, scheme, drop_process](exposition::Format format, std::string* out) {
      std::vector<exposition::MetricFamily> families;
      gpu::BuildFamilies(*c, c->snapshot(), scheme, &families);
      if (drop_process) {
        std::erase_if(families, [](const exposition::MetricFamily& f) {
          return f.name.starts_with("process_");
        });
      }
      exposition::AppendFamilies(families, format, out);
      exposition::FinishText(format, out);
    };
    impl->loops.push_back(std::make_unique<scrape::ScrapeLoop>(
        LocalTarget(options.node_job, copts.hostname, "local://" + copts.hostname + "/metrics",
                    options.interval_ms),
        scrape::LoopOptions{}, appender, InProcessFetch(render)));
  }

  if (options.self_metrics) {
    impl->loops.push_back(std::make_unique<scrape::ScrapeLoop>(
        LocalTarget(options.self_job, options.self_instance,
                    "local://" + options.self_instance + "/metrics", options.interval_ms),
        scrape::LoopOptions{}, appender, InProcessFetch(options.self_metrics)));
    if (description.empty()) description = "server self-metrics only";
  }

  if (options.run) {
    for (auto& loop : impl->loops) loop->Start();
  }
  auto lc = std::unique_ptr<LocalCollection>(new LocalCollection(std::move(impl)));
  lc->description_ = std::move(description);
  lc->simulated_ = simulated;
  return lc;
}

}  // namespace gpumon::cli
