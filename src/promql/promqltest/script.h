// A PromQL test script (Prometheus's promqltest language, see its
// FORMAT.md) parsed into commands: load, clear and eval, each with the
// 1-based line it starts on.
//
// Contract:
// - Lines are trimmed; a line starting with '#' counts as blank. A blank
//   line ends a load or eval block.
// - `load <interval>` / `load_with_nhcb <interval>` take series lines
//   (`metric{labels} points`, see series_values.h); `metric@st ...`
//   start-timestamp lines are accepted and ignored.
// - `eval instant at <time> <query>` and `eval range from <start> to <end>
//   step <step> <query>`, plus the deprecated eval_fail / eval_warn /
//   eval_info / eval_ordered forms and expected_fail_message /
//   expected_fail_regexp lines; `expect fail|warn|info|no_warn|no_info|
//   ordered [msg: text | regex: pattern]`, `expect range vector from <a>
//   to <b> step <s>`, `expect string "<s>"`; a bare number line (expected
//   scalar, ends the block); expected series lines.
// - Series label sets are kept as written (`metric`); the runner parses
//   them with the PromQL parser.
// - A malformed command becomes an ErrorCommand naming file:line, and
//   parsing resumes after its block, so one bad line costs one command.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "promql/promqltest/series_values.h"

namespace gpumon::promql::promqltest {

struct SeriesSpec {
  int line = 0;
  std::string metric;  // `foo{a="b"}` as written
  std::vector<SequenceValue> values;
  bool histogram = false;  // native-histogram notation; values empty
};

struct LoadCommand {
  int line = 0;
  int64_t interval_ms = 0;
  bool with_nhcb = false;
  std::vector<SeriesSpec> series;
};

struct ClearCommand {
  int line = 0;
};

enum class ExpectType { kOrdered, kFail, kWarn, kNoWarn, kInfo, kNoInfo };
const char* ExpectTypeName(ExpectType t);  // "ordered", "fail", ...

struct Expectation {
  ExpectType type = ExpectType::kFail;
  enum class Match { kAny, kMessage, kRegex } match = Match::kAny;
  std::string text;  // message or pattern (unanchored, RE2 syntax)
};

struct EvalCommand {
  int line = 0;
  std::string query;
  bool is_range = false;
  // Range queries: [start, end] / step. Instant queries: eval_ms, and with
  // `expect range vector` start/end/step describe the expected matrix.
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  int64_t step_ms = 0;
  int64_t eval_ms = 0;
  bool expect_range_vector = false;

  // Deprecated eval_* forms.
  bool fail = false, warn = false, info = false, ordered = false;
  std::optional<std::string> expected_fail_message;
  std::optional<std::string> expected_fail_regexp;

  std::vector<Expectation> expects;
  std::optional<double> expected_scalar;
  std::optional<std::string> expected_string;
  std::vector<SeriesSpec> expected;  // in file order (position = index + 1)
  // Instant evals with a matrix or string expectation are not re-checked
  // in range mode.
  bool exclude_from_range_query = false;

  bool IsOrdered() const;
  bool IsFail() const;
  bool Has(ExpectType t) const;
  // Any expected value written in native-histogram notation.
  bool ExpectsHistogram() const;
};

struct ErrorCommand {
  int line = 0;
  std::string message;  // without the file:line prefix
};

using Command = std::variant<LoadCommand, ClearCommand, EvalCommand, ErrorCommand>;

struct Script {
  std::string file;
  std::vector<Command> commands;
};

Script ParseScript(std::string_view text, std::string file);

}  // namespace gpumon::promql::promqltest
