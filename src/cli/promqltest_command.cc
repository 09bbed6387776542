// gpumon promqltest: runs PromQL test scripts (Prometheus's promqltest
// language) against gpumon's engine and reports passed / failed / skipped
// evals per file, each failure with file:line, query, expected and got.
#include <re2/re2.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "promql/promqltest/runner.h"

namespace gpumon::cli {

namespace {

namespace pt = promql::promqltest;

constexpr const char* kUsage =
    "usage: gpumon promqltest [flags] FILE|DIR...\n\n"
    "Runs PromQL test scripts (Prometheus's promqltest format; a directory\n"
    "means its *.test files). Evals using native histograms are skipped.\n\n"
    "flags:\n"
    "  --verbose            also list passed and skipped evals\n"
    "  --run REGEX          only evals whose query or file:line matches\n"
    "  --min-pass-rate R    exit 0 when passed/(passed+failed) >= R (0..1);\n"
    "                       without it every non-skipped eval must pass\n";

struct Args {
  std::vector<std::string> paths;
  bool verbose = false;
  std::string run;
  double min_pass_rate = -1;  // < 0: all must pass
};

// Flags take "--name value" or "--name=value"; anything else is a path.
bool ParseArgs(const std::vector<std::string>& argv, Args& out, std::string& err) {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      out.paths.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "verbose" && !has_value) {
      out.verbose = true;
      continue;
    }
    if (name != "run" && name != "min-pass-rate") {
      err = "unknown flag --" + name;
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argv.size()) {
        err = "flag --" + name + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (name == "run") {
      out.run = value;
    } else {
      char* end = nullptr;
      double r = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(r >= 0 && r <= 1)) {
        err = "flag --min-pass-rate: expected a number in [0, 1], got \"" + value + "\"";
        return false;
      }
      out.min_pass_rate = r;
    }
  }
  return true;
}

// Expands directories to their *.test files (sorted); missing paths are
// reported and make the run fail.
bool ExpandPaths(const std::vector<std::string>& in, std::vector<std::string>& out) {
  namespace fs = std::filesystem;
  bool ok = true;
  for (const std::string& p : in) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.path().extension() == ".test") files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) std::cerr << "gpumon promqltest: " << p << ": no .test files\n";
      out.insert(out.end(), files.begin(), files.end());
    } else if (fs::exists(p, ec)) {
      out.push_back(p);
    } else {
      std::cerr << "gpumon promqltest: " << p << ": not found\n";
      ok = false;
    }
  }
  return ok;
}

void Indent(const std::string& text, const char* prefix) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::cout << prefix << text.substr(pos, nl - pos) << "\n";
    pos = nl + 1;
  }
}

}  // namespace

int RunPromqlTest(const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  Args args;
  std::string err;
  if (!ParseArgs(argv, args, err)) {
    std::cerr << "gpumon promqltest: " << err << "\n\n" << kUsage;
    return 2;
  }
  if (args.paths.empty()) {
    std::cerr << "gpumon promqltest: no test files given\n\n" << kUsage;
    return 2;
  }
  pt::RunnerOptions opts;
  opts.filter = args.run;
  if (!args.run.empty()) {
    RE2 check(args.run, RE2::Quiet);
    if (!check.ok()) {
      std::cerr << "gpumon promqltest: --run: invalid pattern: " << check.error() << "\n";
      return 2;
    }
  }
  std::vector<std::string> files;
  if (!ExpandPaths(args.paths, files)) return 2;

  int passed = 0, failed = 0, skipped = 0;
  for (const std::string& f : files) {
    Result<pt::FileReport> rep = pt::RunScriptFile(f, opts);
    if (!rep.ok()) {
      std::cerr << "gpumon promqltest: " << rep.status().message() << "\n";
      return 2;
    }
    int p = rep->Count(pt::Outcome::kPass), fl = rep->Count(pt::Outcome::kFail),
        s = rep->Count(pt::Outcome::kSkip);
    passed += p;
    failed += fl;
    skipped += s;
    std::cout << f << ": " << p << " passed, " << fl << " failed, " << s << " skipped\n";
    for (const pt::EvalReport& e : rep->evals) {
      if (e.outcome == pt::Outcome::kFail) {
        std::cout << "  FAIL " << f << ":" << e.line << ": " << e.query << "\n";
        Indent(e.detail, "      ");
      } else if (args.verbose && e.outcome == pt::Outcome::kSkip) {
        std::cout << "  SKIP " << f << ":" << e.line << ": " << e.query << " (" << e.detail
                  << ")\n";
      } else if (args.verbose) {
        std::cout << "  PASS " << f << ":" << e.line << ": " << e.query << "\n";
      }
    }
  }
  int ran = passed + failed;
  double rate = ran == 0 ? 1.0 : static_cast<double>(passed) / ran;
  std::cout << "pass rate " << std::fixed << std::setprecision(2) << rate * 100
            << "% of non-skipped evals";
  if (args.min_pass_rate >= 0) std::cout << " (required " << args.min_pass_rate * 100 << "%)";
  std::cout << "\n" << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  bool ok = args.min_pass_rate >= 0 ? rate >= args.min_pass_rate : failed == 0;
  return ok ? 0 : 1;
}

}  // namespace gpumon::cli
