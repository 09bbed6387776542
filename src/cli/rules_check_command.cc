// gpumon rules check: checks rule files with the verdicts and exit codes of
// `promtool check rules` (2.42): 0 when every file is valid (lint problems
// alone do not fail), 1 when any file is invalid or missing, 3 when the
// only problems are lint problems and --lint-fatal is given. Usage errors
// exit 1 too, as promtool's.
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "rules/rule_check.h"

namespace gpumon::cli {

namespace {

constexpr const char* kUsage =
    "usage: gpumon rules check [flags] FILE...\n\n"
    "Checks rule files as `promtool check rules` does: prints \"SUCCESS: N rules\n"
    "found\" or \"FAILED:\" with every error (file:line:column, field) per file.\n\n"
    "flags:\n"
    "  --lint LIST     lint checks: all, duplicate-rules (default), none\n"
    "  --lint-fatal    exit 3 when lint problems are the only problems\n"
    "  --prometheus3   accept the Prometheus 3 group fields query_offset and labels\n"
    "                  (gpumon server accepts them; promtool 2.42 does not)\n";

// A file argument as promtool's ExistingFiles() takes it: it must exist and
// not be a directory.
bool CheckFileArgs(const std::vector<std::string>& files, const char* command) {
  for (const std::string& f : files) {
    std::error_code ec;
    if (!std::filesystem::exists(f, ec)) {
      std::cerr << "gpumon rules " << command << ": path '" << f << "' does not exist\n";
      return false;
    }
    if (std::filesystem::is_directory(f, ec)) {
      std::cerr << "gpumon rules " << command << ": '" << f << "' is a directory\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int RunRulesCheck(const std::vector<std::string>& argv) {
  rules::RuleCheckOptions opts;
  bool lint_fatal = false;
  std::vector<std::string> files;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--lint-fatal") {
      lint_fatal = true;
    } else if (a == "--prometheus3") {
      opts.prometheus3 = true;
    } else if (a == "--lint" || a.rfind("--lint=", 0) == 0) {
      std::string value;
      if (a == "--lint") {
        if (i + 1 >= argv.size()) {
          std::cerr << "gpumon rules check: flag --lint needs a value\n\n" << kUsage;
          return 1;
        }
        value = argv[++i];
      } else {
        value = a.substr(7);
      }
      opts.lint_duplicates = false;
      std::stringstream ss(value);
      std::string item;
      while (std::getline(ss, item, ',')) {
        if (item == "all" || item == "duplicate-rules") {
          opts.lint_duplicates = true;
        } else if (item != "none") {
          std::cout << "WARNING: unknown lint option " << item << "\n";
        }
      }
    } else if (a.rfind("--", 0) == 0 && a != "--") {
      std::cerr << "gpumon rules check: unknown flag " << a << "\n\n" << kUsage;
      return 1;
    } else if (a != "--") {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::cerr << "gpumon rules check: no rule files given\n\n" << kUsage;
    return 1;
  }
  if (!CheckFileArgs(files, "check")) return 1;

  bool failed = false, has_errors = false;
  for (const std::string& f : files) {
    std::cout << "Checking " << f << "\n";
    rules::RuleCheckResult r = rules::CheckRuleFile(f, opts);
    if (r.ok()) {
      std::cout << "  SUCCESS: " << r.rules << " rules found\n";
    } else {
      std::cout.flush();
      std::cerr << "  FAILED:\n";
      for (const std::string& e : r.errors) std::cerr << e << "\n";
      if (!r.lint.empty()) std::cerr << r.lint << "\n";
      std::cerr.flush();
      failed = true;
      has_errors = has_errors || !r.errors.empty();
    }
    std::cout << "\n";
  }
  if (failed && has_errors) return 1;
  if (failed && lint_fatal) return 3;
  return 0;
}

}  // namespace gpumon::cli
