// gpumon: the command-line entry point. It only dispatches to subcommands;
// each subcommand wires modules together.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

constexpr const char* kUsage =
    "usage: gpumon <command> [flags]\n\n"
    "commands:\n"
    "  server     store, query and serve metrics (Prometheus HTTP API)\n"
    "  agent      serve this node's GPU metrics on /metrics\n"
    "  simulate   serve N simulated GPU nodes (load and end-to-end testing)\n"
    "  simulate-export  write simulated GPU history as OpenMetrics (benchmarks)\n"
    "  doctor     report what NVML and the GPUs support\n"
    "  catalog    print the metrics reference (markdown)\n"
    "  tsdb       import OpenMetrics history into a TSDB, inspect its blocks\n"
    "  promqltest run PromQL test scripts (Prometheus's test language)\n"
    "  rules      check and unit-test rule files (promtool's verdicts)\n"
    "  dashboards check Grafana dashboards' PromQL, convert them to DCGM names\n"
    "  version    print the version\n\n"
    "Run `gpumon <command> --help` for a command's flags.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "agent") return gpumon::cli::RunAgent(args);
  if (command == "simulate") return gpumon::cli::RunSimulate(args);
  if (command == "simulate-export") return gpumon::cli::RunSimulateExport(args);
  if (command == "doctor") return gpumon::cli::RunDoctor(args);
  if (command == "catalog") return gpumon::cli::RunCatalog(args);
  if (command == "tsdb") return gpumon::cli::RunTsdb(args);
  if (command == "server") return gpumon::cli::RunServer(args);
  if (command == "promqltest") return gpumon::cli::RunPromqlTest(args);
  if (command == "rules") return gpumon::cli::RunRules(args);
  if (command == "dashboards") return gpumon::cli::RunDashboards(args);
  if (command == "version" || command == "--version") {
    std::cout << "gpumon " << GPUMON_VERSION << "\n";
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "gpumon: unknown command \"" << command << "\"\n\n" << kUsage;
  return 2;
}
