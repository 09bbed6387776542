// The function signatures of Prometheus 3.x (promql/parser/functions.go),
// experimental functions included, sorted by name for binary search.

#include "promql/function_table.h"

#include <algorithm>

namespace gpumon::promql {
namespace {

constexpr ValueType S = ValueType::kScalar;
constexpr ValueType V = ValueType::kVector;
constexpr ValueType M = ValueType::kMatrix;
constexpr ValueType Str = ValueType::kString;

std::vector<FunctionDef> BuildTable() {
  std::vector<FunctionDef> t = {
      {"abs", {V}, 0, V, false},
      {"absent", {V}, 0, V, false},
      {"absent_over_time", {M}, 0, V, false},
      {"acos", {V}, 0, V, false},
      {"acosh", {V}, 0, V, false},
      {"asin", {V}, 0, V, false},
      {"asinh", {V}, 0, V, false},
      {"atan", {V}, 0, V, false},
      {"atanh", {V}, 0, V, false},
      {"avg_over_time", {M}, 0, V, false},
      {"ceil", {V}, 0, V, false},
      {"changes", {M}, 0, V, false},
      {"clamp", {V, S, S}, 0, V, false},
      {"clamp_max", {V, S}, 0, V, false},
      {"clamp_min", {V, S}, 0, V, false},
      {"cos", {V}, 0, V, false},
      {"cosh", {V}, 0, V, false},
      {"count_over_time", {M}, 0, V, false},
      {"day_of_month", {V}, 1, V, false},
      {"day_of_week", {V}, 1, V, false},
      {"day_of_year", {V}, 1, V, false},
      {"days_in_month", {V}, 1, V, false},
      {"deg", {V}, 0, V, false},
      {"delta", {M}, 0, V, false},
      {"deriv", {M}, 0, V, false},
      {"double_exponential_smoothing", {M, S, S}, 0, V, true},
      {"end", {}, 0, S, true},
      {"exp", {V}, 0, V, false},
      {"first_over_time", {M}, 0, V, false},
      {"floor", {V}, 0, V, false},
      {"histogram_avg", {V}, 0, V, false},
      {"histogram_count", {V}, 0, V, false},
      {"histogram_fraction", {S, S, V}, 0, V, false},
      {"histogram_quantile", {S, V}, 0, V, false},
      {"histogram_quantiles", {V, Str, S, S}, 9, V, true},
      {"histogram_stddev", {V}, 0, V, false},
      {"histogram_stdvar", {V}, 0, V, false},
      {"histogram_sum", {V}, 0, V, false},
      {"hour", {V}, 1, V, false},
      {"idelta", {M}, 0, V, false},
      {"increase", {M}, 0, V, false},
      {"info", {V, V}, 1, V, true},
      {"irate", {M}, 0, V, false},
      {"label_join", {V, Str, Str, Str}, -1, V, false},
      {"label_replace", {V, Str, Str, Str, Str}, 0, V, false},
      {"last_over_time", {M}, 0, V, false},
      {"ln", {V}, 0, V, false},
      {"log10", {V}, 0, V, false},
      {"log2", {V}, 0, V, false},
      {"mad_over_time", {M}, 0, V, true},
      {"max_of", {S, S}, 0, S, true},
      {"max_over_time", {M}, 0, V, false},
      {"min_of", {S, S}, 0, S, true},
      {"min_over_time", {M}, 0, V, false},
      {"minute", {V}, 1, V, false},
      {"month", {V}, 1, V, false},
      {"pi", {}, 0, S, false},
      {"predict_linear", {M, S}, 0, V, false},
      {"present_over_time", {M}, 0, V, false},
      {"quantile_over_time", {S, M}, 0, V, false},
      {"rad", {V}, 0, V, false},
      {"range", {}, 0, S, true},
      {"rate", {M}, 0, V, false},
      {"resets", {M}, 0, V, false},
      {"round", {V, S}, 1, V, false},
      {"scalar", {V}, 0, S, false},
      {"sgn", {V}, 0, V, false},
      {"sin", {V}, 0, V, false},
      {"sinh", {V}, 0, V, false},
      {"sort", {V}, 0, V, false},
      {"sort_by_label", {V, Str}, -1, V, true},
      {"sort_by_label_desc", {V, Str}, -1, V, true},
      {"sort_desc", {V}, 0, V, false},
      {"sqrt", {V}, 0, V, false},
      {"start", {}, 0, S, true},
      {"start_timestamp", {V}, 0, V, true},
      {"stddev_over_time", {M}, 0, V, false},
      {"stdvar_over_time", {M}, 0, V, false},
      {"step", {}, 0, S, true},
      {"sum_over_time", {M}, 0, V, false},
      {"tan", {V}, 0, V, false},
      {"tanh", {V}, 0, V, false},
      {"time", {}, 0, S, false},
      {"timestamp", {V}, 0, V, false},
      {"ts_of_first_over_time", {M}, 0, V, true},
      {"ts_of_last_over_time", {M}, 0, V, true},
      {"ts_of_max_over_time", {M}, 0, V, true},
      {"ts_of_min_over_time", {M}, 0, V, true},
      {"vector", {S}, 0, V, false},
      {"year", {V}, 1, V, false},
  };
  std::sort(t.begin(), t.end(),
            [](const FunctionDef& a, const FunctionDef& b) { return a.name < b.name; });
  return t;
}

}  // namespace

const std::vector<FunctionDef>& AllFunctions() {
  static const std::vector<FunctionDef> table = BuildTable();
  return table;
}

const FunctionDef* FindFunction(std::string_view name) {
  const auto& t = AllFunctions();
  auto it = std::lower_bound(t.begin(), t.end(), name,
                             [](const FunctionDef& f, std::string_view n) { return f.name < n; });
  if (it == t.end() || it->name != name) return nullptr;
  return &*it;
}

}  // namespace gpumon::promql
