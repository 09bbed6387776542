// FindFunctionImpl: the name → implementation table.
#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "promql/functions/internal.h"

namespace gpumon::promql {
namespace {

using Entry = std::pair<std::string_view, FunctionImpl>;

// Sorted by name for binary search.
constexpr auto kTable = std::to_array<Entry>({
    {"abs", fn::Abs},
    {"absent", fn::Absent},
    {"absent_over_time", fn::AbsentOverTime},
    {"acos", fn::Acos},
    {"acosh", fn::Acosh},
    {"asin", fn::Asin},
    {"asinh", fn::Asinh},
    {"atan", fn::Atan},
    {"atanh", fn::Atanh},
    {"avg_over_time", fn::AvgOverTime},
    {"ceil", fn::Ceil},
    {"changes", fn::Changes},
    {"clamp", fn::Clamp},
    {"clamp_max", fn::ClampMax},
    {"clamp_min", fn::ClampMin},
    {"cos", fn::Cos},
    {"cosh", fn::Cosh},
    {"count_over_time", fn::CountOverTime},
    {"day_of_month", fn::DayOfMonth},
    {"day_of_week", fn::DayOfWeek},
    {"day_of_year", fn::DayOfYear},
    {"days_in_month", fn::DaysInMonth},
    {"deg", fn::Deg},
    {"delta", fn::Delta},
    {"deriv", fn::Deriv},
    {"double_exponential_smoothing", fn::DoubleExponentialSmoothing},
    {"exp", fn::Exp},
    {"first_over_time", fn::FirstOverTime},
    {"floor", fn::Floor},
    {"histogram_avg", fn::NativeHistogramOnly},
    {"histogram_count", fn::NativeHistogramOnly},
    {"histogram_fraction", fn::HistogramFraction},
    {"histogram_quantile", fn::HistogramQuantile},
    {"histogram_quantiles", fn::HistogramQuantiles},
    {"histogram_stddev", fn::NativeHistogramOnly},
    {"histogram_stdvar", fn::NativeHistogramOnly},
    {"histogram_sum", fn::NativeHistogramOnly},
    {"hour", fn::Hour},
    {"idelta", fn::Idelta},
    {"increase", fn::Increase},
    {"irate", fn::Irate},
    {"label_join", fn::LabelJoin},
    {"label_replace", fn::LabelReplace},
    {"last_over_time", fn::LastOverTime},
    {"ln", fn::Ln},
    {"log10", fn::Log10},
    {"log2", fn::Log2},
    {"mad_over_time", fn::MadOverTime},
    {"max_of", fn::MaxOf},
    {"max_over_time", fn::MaxOverTime},
    {"min_of", fn::MinOf},
    {"min_over_time", fn::MinOverTime},
    {"minute", fn::Minute},
    {"month", fn::Month},
    {"pi", fn::Pi},
    {"predict_linear", fn::PredictLinear},
    {"present_over_time", fn::PresentOverTime},
    {"quantile_over_time", fn::QuantileOverTime},
    {"rad", fn::Rad},
    {"rate", fn::Rate},
    {"resets", fn::Resets},
    {"round", fn::Round},
    {"scalar", fn::ScalarFn},
    {"sgn", fn::Sgn},
    {"sin", fn::Sin},
    {"sinh", fn::Sinh},
    {"sort", fn::Sort},
    {"sort_by_label", fn::SortByLabel},
    {"sort_by_label_desc", fn::SortByLabelDesc},
    {"sort_desc", fn::SortDesc},
    {"sqrt", fn::Sqrt},
    {"stddev_over_time", fn::StddevOverTime},
    {"stdvar_over_time", fn::StdvarOverTime},
    {"sum_over_time", fn::SumOverTime},
    {"tan", fn::Tan},
    {"tanh", fn::Tanh},
    {"time", fn::Time},
    {"timestamp", fn::Timestamp},
    {"ts_of_first_over_time", fn::TsOfFirstOverTime},
    {"ts_of_last_over_time", fn::TsOfLastOverTime},
    {"ts_of_max_over_time", fn::TsOfMaxOverTime},
    {"ts_of_min_over_time", fn::TsOfMinOverTime},
    {"vector", fn::VectorFn},
    {"year", fn::Year},
});

static_assert(std::is_sorted(kTable.begin(), kTable.end(),
                             [](const Entry& x, const Entry& y) { return x.first < y.first; }),
              "kTable must stay sorted by name");

}  // namespace

FunctionImpl FindFunctionImpl(std::string_view name) {
  auto it = std::lower_bound(kTable.begin(), kTable.end(), name,
                             [](const Entry& e, std::string_view n) { return e.first < n; });
  if (it == kTable.end() || it->first != name) return nullptr;
  return it->second;
}

BatchRangeImpl FindBatchRangeImpl(std::string_view name) {
  if (name == "deriv") return fn::DerivBatch;
  if (name == "predict_linear") return fn::PredictLinearBatch;
  return nullptr;
}

}  // namespace gpumon::promql
