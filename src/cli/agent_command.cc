// `gpumon agent`: the node agent. Wires NVML (real or simulated), the
// collector, its scheduler, the XID watcher, the push receivers for job
// metrics (Pushgateway paths, OTLP/HTTP) and the HTTP endpoint.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <stop_token>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/runtime.h"
#include "cli/shutdown_watchdog.h"
#include "common/duration.h"
#include "common/log.h"
#include "gpu/agent_config.h"
#include "gpu/nvml_session.h"
#include "gpu/scheduler.h"
#include "gpu/xid_watcher.h"
#include "ingest/nvml_job_gpus.h"
#include "ingest/otlp_receiver.h"
#include "ingest/push_store.h"
#include "ingest/pushgateway_routes.h"
#include "web/http_server.h"
#include "web/web_config.h"

namespace gpumon::cli {
namespace {

constexpr const char* kIndexPage =
    "<!doctype html><html><head><title>gpumon agent</title></head><body>"
    "<h1>gpumon agent</h1><ul><li><a href=\"/metrics\">/metrics</a></li>"
    "<li><a href=\"/healthz\">/healthz</a></li></ul>%s%s</body></html>";

constexpr const char* kUsage =
    "usage: gpumon agent [--listen HOST:PORT] [--config FILE] [--names native|dcgm|both]\n"
    "                    [--simulate SPEC] [--seed N] [--nvml-lib PATH] [--hostname NAME]\n"
    "                    [--scenario SPEC]... [--speed X] [--ground-truth FILE]\n"
    "                    [--web.config.file FILE]\n"
    "--web.config.file: TLS and basic auth for every endpoint, as for the server.\n"
    "Jobs push metrics to PUT/POST/DELETE /metrics/job/<job>{/<label>/<value>}\n"
    "(Pushgateway) and POST /v1/metrics (OTLP/HTTP); see the config's push: section.\n"
    "With --simulate: --scenario (repeatable) runs simulator scenarios, e.g.\n"
    "thermal-runaway:gpu=3:start=20m; --speed runs simulated time X times faster;\n"
    "--ground-truth rewrites FILE with what really happened every few seconds and at exit.\n";

// After a termination signal the agent exits within this, even when a
// component hangs while stopping.
constexpr std::chrono::seconds kShutdownTimeout{30};

// The GPU series' label names under a naming scheme (both: native).
ingest::GpuLabelNames GpuLabelsFor(gpu::NameScheme scheme, const std::string& hostname) {
  ingest::GpuLabelNames names;
  if (scheme == gpu::NameScheme::kDcgm) {
    names.hostname_label = "Hostname";
    names.uuid_label = "UUID";
  }
  names.hostname = hostname;
  return names;
}

// A generation that changes whenever either of two sources' does.
class CombinedGeneration {
 public:
  uint64_t Get(uint64_t a, uint64_t b) {
    std::lock_guard lock(mu_);
    if (a != a_ || b != b_) {
      a_ = a;
      b_ = b;
      ++generation_;
    }
    return generation_;
  }

 private:
  std::mutex mu_;
  uint64_t a_ = UINT64_MAX, b_ = UINT64_MAX, generation_ = 0;
};

// Calls store.ExpireStale() every `period` until stopped.
class ExpiryLoop {
 public:
  ExpiryLoop(ingest::PushStore& store, std::chrono::milliseconds period)
      : thread_([&store, period, this](std::stop_token stop) {
          std::unique_lock lock(mu_);
          while (true) {
            cv_.wait_for(lock, stop, period, [] { return false; });
            if (stop.stop_requested()) return;
            size_t n = store.ExpireStale();
            if (n > 0) LogInfo("expired " + std::to_string(n) + " pushed group(s)");
          }
        }) {}

 private:
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::jthread thread_;  // last: stopped and joined first
};

}  // namespace

int RunAgent(const std::vector<std::string>& args) {
  // One malloc arena: each HTTP worker thread would otherwise get its own,
  // nearly doubling the agent's resident memory for no gain.
  mallopt(M_ARENA_MAX, 1);
  auto flags = Flags::Parse(args, {{"listen", true},
                                   {"config", true},
                                   {"names", true},
                                   {"simulate", true},
                                   {"seed", true},
                                   {"nvml-lib", true},
                                   {"hostname", true},
                                   {"scenario", true},
                                   {"speed", true},
                                   {"ground-truth", true},
                                   {"web.config.file", true},
                                   {"help", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon agent: " << flags.status().message() << "\n" << kUsage;
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  gpu::AgentConfig config;
  if (auto path = flags->Get("config")) {
    auto loaded = gpu::LoadAgentConfig(*path);
    if (!loaded.ok()) {
      std::cerr << "gpumon agent: bad config: " << loaded.status().message() << "\n";
      return 2;
    }
    config = std::move(loaded).value();
  }
  std::string listen = flags->Get("listen").value_or(config.listen.value_or(":9400"));
  gpu::NameScheme scheme = config.names.value_or(gpu::NameScheme::kNative);
  if (auto n = flags->Get("names")) {
    auto parsed = gpu::NameSchemeFromString(*n);
    if (!parsed) {
      std::cerr << "gpumon agent: --names must be native, dcgm or both\n";
      return 2;
    }
    scheme = *parsed;
  }

  gpu::CollectorOptions options;
  options.hostname = flags->Get("hostname").value_or(config.hostname.value_or(LocalHostname()));
  options.enabled = config.enabled;
  std::string library = config.nvml_library.value_or(gpu::kDefaultNvmlLibrary);
  if (auto spec = flags->Get("simulate")) {
    SimulationSettings sim;
    sim.spec = *spec;
    sim.seed = flags->Get("seed").value_or("1");
    if (Status s = ReadScenarioFlags(*flags, &sim); !s.ok()) {
      std::cerr << "gpumon agent: " << s.message() << "\n";
      return 2;
    }
    if (Status s = CheckSimulation(sim); !s.ok()) {
      std::cerr << "gpumon agent: " << s.message() << "\n";
      return 2;
    }
    library = EnableSimulation(sim);
    options.simulated = true;
  } else if (flags->Has("scenario") || flags->Has("speed")) {
    std::cerr << "gpumon agent: --scenario and --speed need --simulate\n";
    return 2;
  }
  if (auto lib = flags->Get("nvml-lib")) library = *lib;

  std::optional<web::WebConfig> web_config;
  if (auto path = flags->Get("web.config.file")) {
    auto loaded = web::LoadWebConfig(*path);
    if (!loaded.ok()) {
      std::cerr << "gpumon agent: " << loaded.status().message() << "\n";
      return 2;
    }
    web_config = std::move(*loaded);
  }

  // Reserve the port first so a conflict fails fast, before NVML work.
  web::HttpServer server(web::HttpServerOptions{}, web_config);
  if (Status s = server.Reserve(listen); !s.ok()) {
    std::cerr << "gpumon agent: " << s.message() << "\n";
    return 1;
  }
  OnTerminationSignal([&server] {
    ArmShutdownWatchdog(kShutdownTimeout);
    server.Stop();
  });

  std::unique_ptr<gpu::NvmlSession> session;
  // Simulated time 0 is (within a millisecond) this moment.
  const int64_t t0_unix_ms = UnixNowMs();
  auto started = gpu::NvmlSession::Start(library);
  if (started.ok()) {
    session = std::move(started).value();
    if (session->library().simulated() && !options.simulated) {
      LogWarn("SIMULATION MODE: " + library +
              " is the simulator's NVML, not a driver; every series carries simulated=\"true\"");
      options.simulated = true;
    }
    if (!session->library().missing().empty()) {
      LogInfo("NVML library lacks " + std::to_string(session->library().missing().size()) +
              " optional entry points; their metrics are absent (see `gpumon doctor`)");
    }
  } else {
    LogError("NVML unavailable, serving agent metrics only (gpumon_nvml_up 0): " +
             started.status().message());
  }
  std::unique_ptr<GroundTruthFile> truth;
  if (auto path = flags->Get("ground-truth")) {
    auto opened = session
                      ? GroundTruthFile::Open(library, *path, static_cast<double>(t0_unix_ms), 0)
                      : Result<std::unique_ptr<GroundTruthFile>>(
                            Status::Error("--ground-truth: NVML did not start"));
    if (!opened.ok()) {
      std::cerr << "gpumon agent: " << opened.status().message() << "\n";
      return 2;
    }
    truth = std::move(opened).value();
    truth->StartPeriodic(std::chrono::seconds(5));
  }
  gpu::GpuCollector collector(session ? &session->library() : nullptr, options,
                              session ? session->versions() : gpu::SystemVersions{});
  collector.Discover();
  LogInfo("discovered " + std::to_string(collector.devices().size()) + " GPU(s)" +
          (session ? ", driver " + session->versions().driver : ""));

  gpu::CollectionScheduler scheduler;
  for (int g = 0; g < gpu::kGroupCount; ++g) {
    auto group = static_cast<gpu::Group>(g);
    if (!gpu::IsSelectableGroup(group)) {
      scheduler.Add(&collector, group, std::chrono::seconds(1));
    } else if (config.enabled[g]) {
      scheduler.Add(&collector, group, config.interval[g]);
    }
  }
  scheduler.Start();
  std::unique_ptr<gpu::XidWatcher> xids;
  if (session) {
    xids = std::make_unique<gpu::XidWatcher>(session->library());
    xids->Start({&collector});
  }

  // Job metrics pushed to the agent, served beside the GPU series.
  const gpu::AgentPushConfig& push = config.push;
  ingest::PushStore store(ingest::PushLimits{.max_series_per_group = push.max_series_per_group,
                                             .max_series_total = push.max_series,
                                             .max_labels_per_series = push.max_labels_per_series,
                                             .max_groups = push.max_groups,
                                             .expiry = push.expiry});
  // Pushed names must not pass for the agent's own series.
  const std::vector<std::string> reserved_prefixes = {"gpu_", "DCGM_", "gpumon_"};
  const std::vector<std::string> allowed_prefixes = {"gpumon_client_"};  // the Python client's
  store.ReserveNamePrefixes(reserved_prefixes, allowed_prefixes);
  const ingest::GpuLabelNames gpu_labels = GpuLabelsFor(scheme, options.hostname);
  std::unique_ptr<ExpiryLoop> expiry;
  if (push.enabled && push.expiry.count() > 0) {
    auto period = std::clamp<std::chrono::milliseconds>(push.expiry / 4, std::chrono::seconds(1),
                                                        std::chrono::seconds(10));
    expiry = std::make_unique<ExpiryLoop>(store, period);
  }
  CombinedGeneration generation;
  const gpu::GpuCollector* c = &collector;
  const bool push_enabled = push.enabled;
  web::MetricsEndpoint metrics_endpoint(
      [&generation, c, &store] {
        return generation.Get(c->snapshot().generation, store.generation());
      },
      [c, scheme, &store, &gpu_labels, push_enabled](exposition::Format format, std::string* out) {
        std::vector<exposition::MetricFamily> families;
        gpu::BuildFamilies(*c, c->snapshot(), scheme, &families);
        if (push_enabled) ingest::AppendPushStoreMetrics(store.stats(), &families);
        exposition::AppendFamilies(families, format, out);
        if (push_enabled) store.AppendText(gpu_labels, format, out);
        exposition::FinishText(format, out);
      });
  auto* endpoint = &metrics_endpoint;
  auto& router = server.router();
  std::shared_ptr<ingest::OtlpReceiver> otlp;
  // Joins a pushing process to the GPUs it runs on (NVML process lists,
  // /proc): the agent's GPUs by their `gpu` index and uuid.
  std::vector<ingest::GpuRef> gpu_refs;
  for (const auto& d : collector.devices()) gpu_refs.push_back({d.index, d.uuid});
  ingest::NvmlJobGpuResolver resolver(session ? &session->library() : nullptr, std::move(gpu_refs));
  if (push_enabled) {
    ingest::RegisterPushgatewayRoutes(
        router, store, &resolver,
        {.max_body_bytes = push.max_body_bytes, .max_decoded_bytes = 4 * push.max_body_bytes});
    ingest::OtlpReceiverOptions otlp_options;
    otlp_options.max_body_bytes = push.max_body_bytes;
    otlp_options.max_decoded_bytes = 4 * push.max_body_bytes;
    // As the store's: a reserved OTLP metric is rejected alone (partial_success),
    // not with the rest of its group.
    otlp_options.decode.reserved_name_prefixes = reserved_prefixes;
    otlp_options.decode.allowed_name_prefixes = allowed_prefixes;
    otlp = ingest::RegisterOtlpReceiver(router, store, &resolver, std::move(otlp_options));
  }
  router.Get("/metrics", [&](const http::HttpRequest& req, http::HttpResponse& res) {
    web::HttpServer::ServeMetrics(*endpoint, req, res);
  });
  router.Get("/healthz",
             [](const http::HttpRequest&, http::HttpResponse& res) {
               res.SetContent("ok\n", "text/plain; charset=utf-8");
             },
             {.max_body_bytes = std::nullopt, .run_inline = true});
  const bool simulated = options.simulated;
  router.Get("/", [simulated, push_enabled](const http::HttpRequest&, http::HttpResponse& res) {
    char page[1024];
    std::snprintf(page, sizeof page, kIndexPage,
                  simulated ? "<p><strong>Simulated GPUs: not real hardware.</strong></p>" : "",
                  push_enabled
                      ? "<p>Jobs push to /metrics/job/&lt;job&gt;{/&lt;label&gt;/&lt;value&gt;}"
                        " (Pushgateway) and /v1/metrics (OTLP/HTTP).</p>"
                      : "");
    res.SetContent(page, "text/html; charset=utf-8");
  });
  Status served = server.Bind();
  if (served.ok()) {
    LogInfo("listening on " + listen + " (port " + std::to_string(server.port()) + ")");
    served = server.Run();
  }
  if (!served.ok()) LogError(served.message());
  expiry.reset();
  if (xids) xids->Stop();
  scheduler.Stop();
  if (truth) truth->Stop();
  return served.ok() ? 0 : 1;
}

}  // namespace gpumon::cli
