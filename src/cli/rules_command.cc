// gpumon rules: tools for Prometheus rule files. This file only dispatches:
// each subcommand is one entry of kSubcommands and one Run function in its
// own file (rules_<name>_command.cc), declared in commands.h.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace gpumon::cli {

namespace {

struct RulesSubcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const RulesSubcommand kSubcommands[] = {
    {"check", "check rule files (the verdicts of promtool check rules)", RunRulesCheck},
    {"test", "run rule unit tests (promtool test rules' file format and verdicts)", RunRulesTest},
    {"backtest", "evaluate rule files over simulated history, record every alert",
     RunRulesBacktest},
    {"convert", "generate the dcgm-exporter-named variant of rule files", RunRulesConvert},
};

std::string Usage() {
  std::string u = "usage: gpumon rules <subcommand> [flags] FILE...\n\nsubcommands:\n";
  for (const RulesSubcommand& s : kSubcommands) {
    std::string name = s.name;
    u += "  " + name + std::string(name.size() < 10 ? 10 - name.size() : 1, ' ') + s.summary + "\n";
  }
  return u + "\nRun `gpumon rules <subcommand> --help` for its flags.\n";
}

}  // namespace

int RunRules(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << Usage();
    return 2;
  }
  const std::string& sub = args[0];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::cout << Usage();
    return 0;
  }
  for (const RulesSubcommand& s : kSubcommands) {
    if (sub == s.name) return s.run(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::cerr << "gpumon rules: unknown subcommand \"" << sub << "\"\n\n" << Usage();
  return 2;
}

}  // namespace gpumon::cli
