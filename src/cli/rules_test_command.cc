// gpumon rules test: runs rule unit-test files (promtool's format) with the
// verdicts and exit codes of `promtool test rules` (2.42): 0 when every
// file passes, 1 when any fails, a file is missing or the usage is wrong.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/log.h"
#include "rules/unit_test_runner.h"

namespace gpumon::cli {

namespace {

constexpr const char* kUsage =
    "usage: gpumon rules test [flags] FILE...\n\n"
    "Runs rule unit tests written for `promtool test rules` and prints\n"
    "\"SUCCESS\" or \"FAILED:\" with each failing test's expected and actual\n"
    "alerts or samples per file.\n\n"
    "flags:\n"
    "  --prometheus3   Prometheus 3 semantics: left-open selection windows and the\n"
    "                  group fields query_offset and labels (default: promtool 2.42)\n";

}  // namespace

int RunRulesTest(const std::vector<std::string>& argv) {
  rules::UnitTestOptions opts;
  std::vector<std::string> files;
  for (const std::string& a : argv) {
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--prometheus3") {
      opts.prometheus3 = true;
    } else if (a.rfind("--", 0) == 0 && a != "--") {
      std::cerr << "gpumon rules test: unknown flag " << a << "\n\n" << kUsage;
      return 1;
    } else if (a != "--") {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::cerr << "gpumon rules test: no test files given\n\n" << kUsage;
    return 1;
  }
  for (const std::string& f : files) {
    std::error_code ec;
    if (!std::filesystem::exists(f, ec) || std::filesystem::is_directory(f, ec)) {
      std::cerr << "gpumon rules test: path '" << f << "' does not exist or is a directory\n";
      return 1;
    }
  }
  // Rule evaluation failures are part of the report, not log lines.
  SetLogLevel(LogLevel::kError);

  bool failed = false;
  for (const std::string& f : files) {
    std::cout << "Unit Testing:  " << f << "\n";
    rules::UnitTestReport rep = rules::RunUnitTestFile(f, opts);
    std::cout.flush();
    for (const std::string& w : rep.warnings) std::cerr << "  WARNING: " << w << "\n";
    if (rep.ok()) {
      std::cout << "  SUCCESS\n";
    } else {
      std::cerr << "  FAILED:\n";
      for (const std::string& e : rep.errors) std::cerr << e << "\n\n";
      failed = true;
    }
    std::cerr.flush();
    std::cout << "\n";
  }
  return failed ? 1 : 0;
}

}  // namespace gpumon::cli
