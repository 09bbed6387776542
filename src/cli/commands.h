// The gpumon subcommands. Each takes its arguments (after the subcommand
// name) and returns the process exit code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/collector.h"
#include "gpu/family_builder.h"
#include "web/metrics_endpoint.h"

namespace gpumon::cli {

int RunAgent(const std::vector<std::string>& args);
int RunSimulate(const std::vector<std::string>& args);
int RunSimulateExport(const std::vector<std::string>& args);
int RunDoctor(const std::vector<std::string>& args);
int RunCatalog(const std::vector<std::string>& args);
int RunTsdb(const std::vector<std::string>& args);
int RunServer(const std::vector<std::string>& args);
int RunPromqlTest(const std::vector<std::string>& args);
// `gpumon rules <subcommand>`: dispatches to the Run functions below
// (table in rules_command.cc; one file per subcommand).
int RunRules(const std::vector<std::string>& args);
int RunRulesCheck(const std::vector<std::string>& args);
int RunRulesTest(const std::vector<std::string>& args);
// `gpumon rules backtest` (dispatched by `gpumon rules`).
int RunRulesBacktest(const std::vector<std::string>& args);
// `gpumon rules convert --names dcgm` (dispatched by `gpumon rules`).
int RunRulesConvert(const std::vector<std::string>& args);
// `gpumon dashboards check|convert`: Grafana dashboards' PromQL checked, and
// their dcgm-exporter-named variant (dashboards_command.cc).
int RunDashboards(const std::vector<std::string>& args);

// A /metrics endpoint rendering `collector`'s snapshot in `scheme`.
std::unique_ptr<web::MetricsEndpoint> MakeCollectorEndpoint(const gpu::GpuCollector& collector,
                                                            gpu::NameScheme scheme);

}  // namespace gpumon::cli
