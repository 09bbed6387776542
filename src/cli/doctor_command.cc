// `gpumon doctor`: a human-readable report of what the agent can see: the
// NVML library and its entry points, driver versions, each GPU and which
// metric groups and metrics it supports. Exit code 0 when NVML works.
#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/runtime.h"
#include "gpu/nvml_session.h"

namespace gpumon::cli {

int RunDoctor(const std::vector<std::string>& args) {
  auto flags = Flags::Parse(args, {{"simulate", true}, {"nvml-lib", true}, {"seed", true}});
  if (!flags.ok()) {
    std::cerr << "gpumon doctor: " << flags.status().message() << "\n";
    return 2;
  }
  std::string library = gpu::kDefaultNvmlLibrary;
  bool simulated = false;
  if (auto spec = flags->Get("simulate")) {
    library = EnableSimulation(*spec, flags->Get("seed").value_or("1"));
    simulated = true;
  }
  if (auto lib = flags->Get("nvml-lib")) library = *lib;
  std::cout << "gpumon doctor " << GPUMON_VERSION << "\n\nNVML library: " << library
            << (simulated ? "  [SIMULATED]" : "") << "\n";
  auto session = gpu::NvmlSession::Start(library);
  if (!session.ok()) {
    std::cout << "  status: UNAVAILABLE: " << session.status().message() << "\n"
              << "  The agent would serve only its own metrics, with gpumon_nvml_up 0.\n";
    return 1;
  }
  auto& lib = (*session)->library();
  if (lib.simulated() && !simulated) {
    std::cout << "  [SIMULATED] this library is the simulator's NVML, not a driver\n";
    simulated = true;
  }
  const auto& v = (*session)->versions();
  std::cout << "  status: ok\n  driver: " << v.driver << "\n  NVML: " << v.nvml
            << "\n  CUDA driver API: " << v.cuda << "\n";
  if (lib.missing().empty()) {
    std::cout << "  entry points: all present\n";
  } else {
    std::cout << "  entry points missing (their metrics are absent):\n";
    for (const auto& m : lib.missing()) std::cout << "    " << m << "\n";
  }
  gpu::CollectorOptions options;
  options.hostname = LocalHostname();
  options.simulated = simulated;
  gpu::GpuCollector collector(&lib, options, v);
  collector.Discover();
  std::cout << "\nGPUs: " << collector.devices().size() << "\n";
  for (const auto& d : collector.devices()) {
    std::cout << "\n  gpu " << d.index << ": " << d.model << "\n    uuid " << d.uuid << "\n    pci "
              << d.pci_bus_id << "\n    vbios " << d.vbios << "\n";
    if (d.lost) {
      std::cout << "    LOST: the GPU has fallen off the bus or cannot be opened\n";
      continue;
    }
    std::cout << "    MIG: "
              << (d.mig_enabled ? "enabled, " + std::to_string(d.mig.size()) + " instance(s)"
                                : "disabled or unsupported")
              << "\n    NVLink links: " << d.nvlinks.size() << "\n    fans: " << d.fan_count
              << "\n    metrics not supported on this GPU:";
    int n = 0;
    for (const auto& def : gpu::Catalog()) {
      if (d.unsupported.test(static_cast<size_t>(def.id)) && !def.name.empty()) {
        std::cout << (n++ % 3 == 0 ? "\n      " : "  ") << def.name;
      }
    }
    std::cout << (n == 0 ? " none" : "") << "\n";
  }
  auto errors = collector.nvml_errors();
  std::cout << "\nNVML errors during discovery: " << (errors.empty() ? "none" : "") << "\n";
  for (const auto& [key, count] : errors) {
    std::cout << "  " << key.first << " -> " << key.second << " x" << count << "\n";
  }
  return 0;
}

int RunCatalog(const std::vector<std::string>& args) {
  auto flags = Flags::Parse(args, {{"markdown", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon catalog: " << flags.status().message() << "\n";
    return 2;
  }
  std::cout << gpu::RenderMetricsReference();
  return 0;
}

}  // namespace gpumon::cli
