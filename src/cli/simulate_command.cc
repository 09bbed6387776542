// `gpumon simulate`: N simulated GPU nodes behind one port, each a full agent
// exposition at /node/<i>/metrics, for load and end-to-end tests. The data
// goes through the agent's real path: fake NVML -> collector -> exposition.
#include <cstdio>
#include <iostream>
#include <regex>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/runtime.h"
#include "cli/shutdown_watchdog.h"
#include "common/duration.h"
#include "common/log.h"
#include "gpu/nvml_session.h"
#include "gpu/scheduler.h"
#include "gpu/xid_watcher.h"
#include "web/http_server.h"

namespace gpumon::cli {
namespace {

constexpr const char* kUsage =
    "usage: gpumon simulate --nodes N [--gpus G] [--model h200] [--listen HOST:PORT]\n"
    "                       [--seed K] [--interval DURATION] [--names native|dcgm|both]\n"
    "                       [--scenario SPEC]... [--speed X] [--ground-truth FILE]\n"
    "--scenario (repeatable) runs simulator scenarios, e.g. "
    "thermal-runaway:node=2:gpu=3:start=20m\n"
    "(node=N is N's --gpus GPUs); --speed runs simulated time X times faster; --ground-truth\n"
    "rewrites FILE with what really happened every few seconds and at exit.\n";

std::string NodeName(long i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "sim-node-%04ld", i);
  return buf;
}

}  // namespace

int RunSimulate(const std::vector<std::string>& args) {
  auto flags = Flags::Parse(args, {{"nodes", true},
                                   {"gpus", true},
                                   {"model", true},
                                   {"listen", true},
                                   {"seed", true},
                                   {"interval", true},
                                   {"names", true},
                                   {"threads", true},
                                   {"scenario", true},
                                   {"speed", true},
                                   {"ground-truth", true},
                                   {"help", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon simulate: " << flags.status().message() << "\n" << kUsage;
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  auto nodes = flags->GetInt("nodes", 1, 1, 10000);
  auto gpus = flags->GetInt("gpus", 8, 1, 64);
  auto seed = flags->GetInt("seed", 1, 0, 1L << 40);
  auto threads = flags->GetInt("threads", 4, 1, 64);
  for (const Status* s : {&nodes.status(), &gpus.status(), &seed.status(), &threads.status()}) {
    if (!s->ok()) {
      std::cerr << "gpumon simulate: " << s->message() << "\n";
      return 2;
    }
  }
  auto interval = ParseDuration(flags->Get("interval").value_or("15s"));
  if (!interval.ok() || interval->count() < 100) {
    std::cerr << "gpumon simulate: --interval: "
              << (interval.ok() ? "must be at least 100ms" : interval.status().message()) << "\n";
    return 2;
  }
  auto scheme = gpu::NameSchemeFromString(flags->Get("names").value_or("native"));
  if (!scheme) {
    std::cerr << "gpumon simulate: --names must be native, dcgm or both\n";
    return 2;
  }
  std::string model = flags->Get("model").value_or("h200");
  SimulationSettings sim;
  sim.spec = model + "x" + std::to_string(*nodes * *gpus);
  sim.seed = std::to_string(*seed);
  sim.node_size = static_cast<int>(*gpus);
  if (Status s = ReadScenarioFlags(*flags, &sim); !s.ok()) {
    std::cerr << "gpumon simulate: " << s.message() << "\n";
    return 2;
  }
  if (Status s = CheckSimulation(sim); !s.ok()) {
    std::cerr << "gpumon simulate: " << s.message() << "\n";
    return 2;
  }
  std::string library = EnableSimulation(sim);

  web::HttpServer server(web::HttpServerOptions{.threads = static_cast<int>(*threads)});
  std::string listen = flags->Get("listen").value_or(":9500");
  if (Status s = server.Reserve(listen); !s.ok()) {
    std::cerr << "gpumon simulate: " << s.message() << "\n";
    return 1;
  }
  OnTerminationSignal([&server] {
    ArmShutdownWatchdog(std::chrono::seconds(30));
    server.Stop();
  });

  // Simulated time 0 is (within a millisecond) this moment.
  const int64_t t0_unix_ms = UnixNowMs();
  auto session = gpu::NvmlSession::Start(library);
  if (!session.ok()) {
    std::cerr << "gpumon simulate: " << session.status().message() << "\n";
    return 1;
  }
  std::unique_ptr<GroundTruthFile> truth;
  if (auto path = flags->Get("ground-truth")) {
    auto opened = GroundTruthFile::Open(library, *path, static_cast<double>(t0_unix_ms), 0);
    if (!opened.ok()) {
      std::cerr << "gpumon simulate: " << opened.status().message() << "\n";
      return 1;
    }
    truth = std::move(opened).value();
    if (Status s = truth->Write(); !s.ok()) {
      std::cerr << "gpumon simulate: --ground-truth: " << s.message() << "\n";
      return 1;
    }
    truth->StartPeriodic(std::chrono::seconds(5));
  }
  std::vector<std::unique_ptr<gpu::GpuCollector>> collectors;
  std::vector<std::unique_ptr<web::MetricsEndpoint>> endpoints;
  gpu::CollectionScheduler scheduler;
  collectors.reserve(static_cast<size_t>(*nodes));
  endpoints.reserve(static_cast<size_t>(*nodes));
  for (long i = 0; i < *nodes; ++i) {
    gpu::CollectorOptions options;
    options.hostname = NodeName(i);
    options.simulated = true;
    auto c = std::make_unique<gpu::GpuCollector>(
        &(*session)->library(), options, (*session)->versions(), static_cast<unsigned>(i * *gpus),
        static_cast<int>(*gpus));
    c->Discover();
    for (int g = 0; g < gpu::kGroupCount; ++g) {
      scheduler.Add(c.get(), static_cast<gpu::Group>(g), *interval);
    }
    endpoints.push_back(MakeCollectorEndpoint(*c, *scheme));
    collectors.push_back(std::move(c));
  }
  scheduler.Start(static_cast<uint64_t>(*seed));
  gpu::XidWatcher xids((*session)->library());
  std::vector<gpu::GpuCollector*> raw;
  raw.reserve(collectors.size());
  for (auto& c : collectors) raw.push_back(c.get());
  xids.Start(raw);

  auto& router = server.router();
  router.Get(R"(/node/(\d+)/metrics)", [&](const http::HttpRequest& req, http::HttpResponse& res) {
    // \d+ may still overflow: anything not a node index is "no such node".
    size_t i = endpoints.size();
    const std::string& digits = req.captures.at(0);
    if (digits.size() < 10) i = std::stoul(digits);
    if (i >= endpoints.size()) {
      res.status = 404;
      res.SetContent("no such node\n", "text/plain; charset=utf-8");
      return;
    }
    web::HttpServer::ServeMetrics(*endpoints[i], req, res);
  });
  router.Get("/healthz",
             [](const http::HttpRequest&, http::HttpResponse& res) {
               res.SetContent("ok\n", "text/plain; charset=utf-8");
             },
             {.max_body_bytes = std::nullopt, .run_inline = true});
  router.Get("/", [&](const http::HttpRequest&, http::HttpResponse& res) {
    res.SetContent("gpumon simulate: " + std::to_string(*nodes) + " simulated nodes x " +
                       std::to_string(*gpus) + " " + model +
                       " GPUs (NOT real hardware) at /node/<i>/metrics, i in [0, " +
                       std::to_string(*nodes) + ")\n",
                   "text/plain; charset=utf-8");
  });
  Status served = server.Bind();
  if (served.ok()) {
    LogInfo("serving " + std::to_string(*nodes) + " simulated nodes on " + listen + " (port " +
            std::to_string(server.port()) + ")");
    served = server.Run();
  }
  if (!served.ok()) LogError(served.message());
  xids.Stop();
  scheduler.Stop();
  if (truth) truth->Stop();
  return served.ok() ? 0 : 1;
}

}  // namespace gpumon::cli
