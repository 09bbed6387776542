// gpumon dashboards: checks Grafana dashboards' PromQL (dashboards_check.h)
// and writes their dcgm-exporter-named variant (dashboards_convert.h).
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/dashboards_check.h"
#include "cli/dashboards_convert.h"
#include "cli/rules_convert.h"
#include "common/path_glob.h"

namespace gpumon::cli {
namespace {

constexpr const char* kUsage =
    "usage: gpumon dashboards check DASHBOARD.json...\n"
    "       gpumon dashboards convert --names dcgm [--rules GLOB]... [--check] IN.json OUT.json\n\n"
    "check    parses every PromQL query of each Grafana dashboard (panel targets,\n"
    "         query variables, annotations) with Grafana's variables ($__rate_interval,\n"
    "         $node, ${gpu}, ...) replaced by placeholders; exit 1 naming file, panel and\n"
    "         target of each query that does not parse.\n"
    "convert  writes the variant of a dashboard for dcgm-exporter's metric and label\n"
    "         names (DCGM_FI_*, Hostname, UUID, modelName) through the metric catalog,\n"
    "         as `gpumon rules convert` does for rule files. --rules names the native\n"
    "         rule files the dashboard's recording-rule series come from: a series\n"
    "         whose rule has no DCGM version is treated like a metric without DCGM\n"
    "         equivalent. Queries that cannot be converted are left out (a panel left\n"
    "         without queries says why), listed on stderr. --check writes nothing and\n"
    "         exits 1 when OUT.json differs from what would be written.\n";

Result<std::string> ReadFile(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::Error(p + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int RunCheck(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  int rc = 0;
  size_t problems = 0;
  for (const auto& path : args) {
    auto text = ReadFile(path);
    if (!text.ok()) {
      std::cerr << "gpumon dashboards check: " << text.status().message() << "\n";
      rc = 1;
      continue;
    }
    for (const auto& p : CheckDashboard(*text, path)) {
      std::cerr << p << "\n";
      ++problems;
      rc = 1;
    }
  }
  if (rc == 0) std::cout << args.size() << " dashboard(s): every query parses\n";
  if (problems > 0) std::cerr << problems << " query(ies) do not parse\n";
  return rc;
}

int RunConvert(const std::vector<std::string>& args) {
  std::string names;
  bool check = false;
  std::vector<std::string> rule_globs, paths;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--check") {
      check = true;
    } else if (a == "--names" && i + 1 < args.size()) {
      names = args[++i];
    } else if (a.rfind("--names=", 0) == 0) {
      names = a.substr(8);
    } else if (a == "--rules" && i + 1 < args.size()) {
      rule_globs.push_back(args[++i]);
    } else if (a.rfind("--rules=", 0) == 0) {
      rule_globs.push_back(a.substr(8));
    } else if (a.rfind("--", 0) == 0) {
      std::cerr << "gpumon dashboards convert: unknown flag " << a << "\n\n" << kUsage;
      return 2;
    } else {
      paths.push_back(a);
    }
  }
  if (names != "dcgm" || paths.size() != 2) {
    std::cerr << "gpumon dashboards convert: --names dcgm, IN.json and OUT.json are required\n\n"
              << kUsage;
    return 2;
  }
  std::vector<SourceFile> rules;
  for (const auto& g : rule_globs) {
    auto files = GlobPaths(g);
    if (files.empty()) {
      std::cerr << "gpumon dashboards convert: --rules " << g << " matches no file\n";
      return 1;
    }
    for (const auto& f : files) {
      auto text = ReadFile(f);
      if (!text.ok()) {
        std::cerr << "gpumon dashboards convert: " << text.status().message() << "\n";
        return 1;
      }
      rules.push_back({f, *text, f});
    }
  }
  // The rule converter's map knows which recording rules survive in DCGM names.
  DcgmRuleConverter rule_converter;
  auto converted_rules = rule_converter.ConvertRuleFiles(rules);
  if (!converted_rules.ok()) {
    std::cerr << "gpumon dashboards convert: " << converted_rules.status().message() << "\n";
    return 1;
  }
  auto in = ReadFile(paths[0]);
  if (!in.ok()) {
    std::cerr << "gpumon dashboards convert: " << in.status().message() << "\n";
    return 1;
  }
  DashboardConverter converter(rule_converter.map());
  auto out = converter.Convert(*in, paths[0]);
  if (!out.ok()) {
    std::cerr << "gpumon dashboards convert: " << out.status().message() << "\n";
    return 1;
  }
  if (check) {
    auto existing = ReadFile(paths[1]);
    if (!existing.ok() || *existing != *out) {
      std::cerr << paths[1] << ": "
                << (existing.ok() ? "differs from the generated version" : "missing") << "\n";
      return 1;
    }
    return 0;
  }
  for (const auto& n : converter.notes()) std::cerr << "not converted: " << n << "\n";
  std::ofstream f(paths[1], std::ios::binary | std::ios::trunc);
  f << *out;
  if (!f) {
    std::cerr << "gpumon dashboards convert: " << paths[1] << ": cannot write\n";
    return 1;
  }
  return 0;
}

}  // namespace

int RunDashboards(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const auto& a : rest) {
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  if (args[0] == "check") return RunCheck(rest);
  if (args[0] == "convert") return RunConvert(rest);
  std::cerr << "gpumon dashboards: unknown subcommand \"" << args[0] << "\"\n\n" << kUsage;
  return 2;
}

}  // namespace gpumon::cli
