// Comparing a query result with an eval command's expectations, the way
// Prometheus's promqltest does.
//
// Contract:
// - Floats match when AlmostEqual (relative epsilon 1e-6; NaN equals NaN;
//   the stale marker equals only itself).
// - Vectors: every result sample must have an expected series with the
//   same label set and value, and every expected series must be present;
//   positions are checked only when `ordered`.
// - Matrices: series must be sorted by labels; each series' points must
//   equal the expected sequence laid out from `start` every `step`
//   (omitted points `_` expect no point), no point beyond `end`.
// - Scalars need a scalar expectation; strings compare exactly.
// - Returns "" on a match, else a message saying what was expected and
//   what came back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/labels.h"
#include "promql/promqltest/series_values.h"
#include "promql/value.h"

namespace gpumon::promql::promqltest {

inline constexpr double kDefaultEpsilon = 1e-6;

bool AlmostEqual(double a, double b, double epsilon = kDefaultEpsilon);

struct ExpectedSeries {
  Labels metric;
  std::vector<SequenceValue> values;
  int pos = 0;  // 1-based position among the expected series
};

struct Expected {
  std::optional<double> scalar;
  std::string str;  // expected string result ("" unless `expect string`)
  std::vector<ExpectedSeries> series;
  bool ordered = false;
  // Layout of expected matrix points. Without `end` (an instant query
  // with no `expect range vector`), no expected matrix point fits.
  int64_t start_ms = 0;
  int64_t step_ms = 0;
  std::optional<int64_t> end_ms;
};

std::string CompareResult(const Expected& exp, const Value& got);

// Go's %v for floats: shortest round-trip form, "+Inf", "-Inf", "NaN".
std::string FormatFloat(double v);
// A short rendering of a result for failure messages (truncated).
std::string DescribeValue(const Value& v, size_t max_chars = 600);

}  // namespace gpumon::promql::promqltest
