// Runs a parsed test script (script.h) against gpumon's PromQL engine over
// an in-memory TSDB head, asserting each eval the way Prometheus's
// promqltest does, and reports every eval as passed, failed or skipped.
//
// Contract:
// - `load` appends to the current head (a fresh one after `clear`); points
//   are at multiples of the interval from t=0. Series written in
//   native-histogram notation, and the histogram series `load_with_nhcb`
//   would derive from classic `_bucket`/`_count`/`_sum` series, are not
//   loaded: they are remembered so that evals selecting them are skipped.
// - An eval is skipped (never passed) when its expected output uses
//   native-histogram notation or one of its selectors matches such a
//   series.
// - Range evals run once. Instant evals run as Prometheus runs them: at
//   their time, then with `@` pinned at several other times
//   (at_variants.h), each also checked as a range query [t-1m, t+1m] step
//   1m at its middle step (unless excluded, ordered, or using start(),
//   end(), range(), step()).
// - Expected failures (`expect fail`, eval_fail), annotations (warn/info,
//   no_warn/no_info, with msg:/regex:) and ordering are asserted as
//   documented in FORMAT.md.
// - Malformed commands and failed loads are reported as failures at their
//   line; the rest of the script still runs.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "promql/engine.h"
#include "promql/promqltest/script.h"

namespace gpumon::promql::promqltest {

enum class Outcome { kPass, kFail, kSkip };

struct EvalReport {
  int line = 0;
  std::string query;  // the eval's query, or the command for load/parse errors
  Outcome outcome = Outcome::kPass;
  std::string detail;  // failure message or skip reason
};

struct FileReport {
  std::string file;
  std::vector<EvalReport> evals;
  int Count(Outcome o) const;
};

struct RunnerOptions {
  EngineOptions engine;
  // RE2 pattern, unanchored, matched against "<query>" and "<file>:<line>";
  // empty runs every eval. Non-matching evals are not reported.
  std::string filter;
};

FileReport RunScript(const Script& script, const RunnerOptions& options = {});
// Reads and runs one file; fails only when the file cannot be read.
Result<FileReport> RunScriptFile(const std::string& path, const RunnerOptions& options = {});

}  // namespace gpumon::promql::promqltest
