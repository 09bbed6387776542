// The value sequences of the test-script language, as in `load` blocks,
// expected results and `promtool test rules` input series:
//
//   foo{a="b"} 1 2+3x2 _ _x3 stale -Inf NaN 5x2 1e3-1x2
//
// Contract:
// - `a+bxn` / `a-bxn` expand to n+1 values a, a±b, ... (each the previous
//   plus b, accumulated as Prometheus does); `axn` to n+1 copies of a;
//   `_` is one omitted point, `_xn` n omitted points; `stale` is the
//   staleness marker; Inf/NaN are case-insensitive, numbers may be signed
//   and use exponents.
// - Anything with `{{` (native-histogram notation) is not expanded: the
//   result is flagged `histogram` and carries no values.
// - Malformed items are errors naming the item.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::promql::promqltest {

struct SequenceValue {
  bool omitted = false;
  double value = 0;
};

struct SeriesValues {
  std::vector<SequenceValue> values;
  bool histogram = false;  // uses {{...}} notation; values left empty
};

Result<SeriesValues> ExpandSeriesValues(std::string_view text);

// `metric{labels} values...` split into the series part (metric name with
// or without braces, or braces alone) and the rest.
struct SeriesLineParts {
  std::string_view metric;
  std::string_view values;
};
Result<SeriesLineParts> SplitSeriesLine(std::string_view line);

// A whole-line number as Go's strconv reads it (integer with base prefix,
// then float incl. Inf/NaN); nullopt when the text is not one number.
std::optional<double> ParseScriptNumber(std::string_view text);

}  // namespace gpumon::promql::promqltest
