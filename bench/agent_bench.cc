// Microbenchmarks of the agent's hot paths on 8 simulated H200s (the fake
// NVML, GPUMON_SIM_SPEC=h200x8), every metric group enabled:
//
//   BM_CollectFullCycle   every group once over all GPUs (one full cycle)
//   BM_CollectFastGroups  the six groups sampled every second by default
//   BM_RenderText004      snapshot -> families -> text 0.0.4 (a cold scrape)
//   BM_RenderOpenMetrics  the same in OpenMetrics 1.0.0
//   BM_RenderGzip         a cold scrape's render plus gzip
//   BM_GzipLevel          gzip alone, by compression level
//   BM_EndpointCachedScrape  a scrape when the snapshot has not changed
//
// CPU time is the benchmark's cpu_time (the calling thread does all the
// work); bytes per render and series counts are reported as counters, so
// --benchmark_format=json carries them. Results: docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "exposition/text_writer.h"
#include "gpu/collector.h"
#include "gpu/family_builder.h"
#include "gpu/nvml_session.h"
#include "web/gzip.h"
#include "web/metrics_endpoint.h"

namespace gpumon {
namespace {

using exposition::Format;

// One NVML session and one discovered collector shared by all benchmarks,
// as in the agent process.
struct Agent {
  std::unique_ptr<gpu::NvmlSession> session;
  std::unique_ptr<gpu::GpuCollector> collector;
};

Agent* SharedAgent() {
  static Agent* agent = [] {
    // The fake NVML reads its fleet from the environment at nvmlInit.
    setenv("GPUMON_SIM_SPEC", "h200x8", 1);
    setenv("GPUMON_SIM_SEED", "1", 1);
    auto started = gpu::NvmlSession::Start(GPUMON_FAKE_NVML_PATH);
    if (!started.ok()) {
      std::fprintf(stderr, "cannot start the simulated NVML: %s\n",
                   started.status().message().c_str());
      std::exit(1);
    }
    auto* a = new Agent;
    a->session = std::move(started).value();
    gpu::CollectorOptions options;
    options.hostname = "bench-node";
    options.simulated = true;
    a->collector = std::make_unique<gpu::GpuCollector>(&a->session->library(), options,
                                                       a->session->versions());
    a->collector->Discover();
    // One more round so the agent group reports every other group's timing,
    // as it does in a running agent.
    for (int g = 0; g < gpu::kGroupCount; ++g) a->collector->Collect(static_cast<gpu::Group>(g));
    return a;
  }();
  return agent;
}

void CollectGroups(benchmark::State& state, const std::vector<gpu::Group>& groups) {
  gpu::GpuCollector& c = *SharedAgent()->collector;
  for (auto _ : state) {
    for (gpu::Group g : groups) c.Collect(g);
  }
  const gpu::Snapshot snapshot = c.snapshot();
  size_t series = 0;
  for (gpu::Group g : groups) {
    const auto& result = snapshot.groups[static_cast<size_t>(g)];
    if (result) series += result->values.size();
  }
  state.counters["gpus"] = static_cast<double>(c.devices().size());
  state.counters["groups"] = static_cast<double>(groups.size());
  state.counters["series"] = static_cast<double>(series);
}

void BM_CollectFullCycle(benchmark::State& state) {
  std::vector<gpu::Group> all;
  for (int g = 0; g < gpu::kGroupCount; ++g) all.push_back(static_cast<gpu::Group>(g));
  CollectGroups(state, all);
}
BENCHMARK(BM_CollectFullCycle)->Unit(benchmark::kMicrosecond);

void BM_CollectFastGroups(benchmark::State& state) {
  using gpu::Group;
  CollectGroups(state, {Group::kTemperature, Group::kPower, Group::kUtilization, Group::kClocks,
                        Group::kClockEvents, Group::kMemory});
}
BENCHMARK(BM_CollectFastGroups)->Unit(benchmark::kMicrosecond);

// A cold scrape: the snapshot changed since the last one, so the families
// are rebuilt and rendered (what MetricsEndpoint's render function does).
void RenderSnapshot(Format format, gpu::NameScheme scheme, std::string* out) {
  const gpu::GpuCollector& c = *SharedAgent()->collector;
  std::vector<exposition::MetricFamily> families;
  gpu::BuildFamilies(c, c.snapshot(), scheme, &families);
  exposition::AppendFamilies(families, format, out);
  exposition::FinishText(format, out);
}

size_t CountSamples(const std::string& text) {
  size_t n = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos && text[pos] != '#') ++n;
    pos = end + 1;
  }
  return n;
}

// range(0): the naming scheme (0 native, 1 dcgm, 2 both).
gpu::NameScheme SchemeArg(const benchmark::State& state) {
  return static_cast<gpu::NameScheme>(state.range(0));
}

const char* SchemeLabel(gpu::NameScheme scheme) {
  switch (scheme) {
    case gpu::NameScheme::kNative:
      return "native";
    case gpu::NameScheme::kDcgm:
      return "dcgm";
    case gpu::NameScheme::kBoth:
      return "both";
  }
  return "";
}

void RenderBenchmark(benchmark::State& state, Format format) {
  const gpu::NameScheme scheme = SchemeArg(state);
  std::string out;
  for (auto _ : state) {
    out.clear();
    RenderSnapshot(format, scheme, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(SchemeLabel(scheme));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
  state.counters["bytes"] = static_cast<double>(out.size());
  state.counters["samples"] = static_cast<double>(CountSamples(out));
}

void BM_RenderText004(benchmark::State& state) { RenderBenchmark(state, Format::kText004); }
BENCHMARK(BM_RenderText004)->Unit(benchmark::kMicrosecond)->Arg(0)->Arg(1)->Arg(2);

void BM_RenderOpenMetrics(benchmark::State& state) {
  RenderBenchmark(state, Format::kOpenMetrics1);
}
BENCHMARK(BM_RenderOpenMetrics)->Unit(benchmark::kMicrosecond)->Arg(0)->Arg(1)->Arg(2);

// range(0): scheme; range(1): format (0 text 0.0.4, 1 OpenMetrics).
void BM_RenderGzip(benchmark::State& state) {
  const gpu::NameScheme scheme = SchemeArg(state);
  const auto format = static_cast<Format>(state.range(1));
  std::string out;
  std::string compressed;
  for (auto _ : state) {
    out.clear();
    RenderSnapshot(format, scheme, &out);
    compressed = web::GzipCompress(out);
    benchmark::DoNotOptimize(compressed.data());
  }
  state.SetLabel(std::string(SchemeLabel(scheme)) +
                 (format == Format::kText004 ? "/text-0.0.4" : "/openmetrics"));
  state.counters["bytes"] = static_cast<double>(compressed.size());
  state.counters["plain_bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_RenderGzip)->Unit(benchmark::kMicrosecond)->Args({0, 0})->Args({0, 1})->Args({2, 1});

// gzip alone, by compression level (range(0)), on a native text 0.0.4 body:
// the trade-off between CPU per scrape and bytes on the wire.
void BM_GzipLevel(benchmark::State& state) {
  const int level = static_cast<int>(state.range(0));
  std::string body;
  RenderSnapshot(Format::kText004, gpu::NameScheme::kNative, &body);
  std::string compressed;
  for (auto _ : state) {
    compressed = web::GzipCompress(body, level);
    benchmark::DoNotOptimize(compressed.data());
  }
  state.counters["bytes"] = static_cast<double>(compressed.size());
  state.counters["plain_bytes"] = static_cast<double>(body.size());
}
BENCHMARK(BM_GzipLevel)->Unit(benchmark::kMicrosecond)->Arg(1)->Arg(6)->Arg(9);

// A scrape that finds the rendering cached (same snapshot generation): what
// back-to-back scrapes between two collections cost.
void BM_EndpointCachedScrape(benchmark::State& state) {
  const bool gzip = state.range(0) != 0;
  web::MetricsEndpoint endpoint([] { return uint64_t{1}; },
                                [](Format format, std::string* out) {
                                  RenderSnapshot(format, gpu::NameScheme::kNative, out);
                                });
  const char* encoding = gzip ? "gzip" : "identity";
  size_t bytes = endpoint.Get("text/plain", encoding).bytes->size();
  for (auto _ : state) {
    auto body = endpoint.Get("text/plain", encoding);
    benchmark::DoNotOptimize(body.bytes.get());
  }
  state.SetLabel(gzip ? "gzip" : "plain");
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_EndpointCachedScrape)->Arg(0)->Arg(1);

}  // namespace
}  // namespace gpumon

BENCHMARK_MAIN();
