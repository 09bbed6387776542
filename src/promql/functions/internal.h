// Helpers shared by the PromQL function implementations (functions/*.cc)
// and the implementations' declarations, for the registry. Not a public
// header: the engine goes through FindFunctionImpl (promql/functions.h).
//
// Contract of the helpers:
// - Argument accessors tolerate missing or mistyped arguments (they return
//   nullptr / the default) so a malformed call never crashes; the parser's
//   type check makes that case unreachable in practice.
// - DropMetricName caches the last result per thread, because range
//   functions are called once per step for the same series and would
//   otherwise rebuild the same label set at every step.
// - Format* reproduce Go's fmt verbs, so annotation and error texts match
//   Prometheus's byte for byte.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "promql/functions.h"

namespace gpumon::promql::fn {

// The __name__ label (null when there is none) and its value (empty when
// none). Label sets are sorted and __name__ sorts before ordinary names,
// so a forward scan usually stops at the first label: cheaper than
// Labels::Get/Has for per-step use.
const Label* MetricNameLabel(const Labels& labels);
std::string_view MetricNameOf(const Labels& labels);

// The labels without __name__ (the same object when there is none).
Labels DropMetricName(const Labels& labels);

const Vector* VectorArg(const FunctionArgs& a, size_t i);

// A range argument's window: the series' labels and the points in it.
struct SeriesView {
  const Labels& metric;
  std::span<const FPoint> points;
};
// The window of matrix argument i: the engine's view when it passed one,
// else the argument's first series (the engine passes one); nullopt when
// argument i is not a matrix or holds no series.
std::optional<SeriesView> SeriesArg(const FunctionArgs& a, size_t i);
const Matrix* MatrixArg(const FunctionArgs& a, size_t i);
double ScalarArg(const FunctionArgs& a, size_t i, double def);
bool HasArg(const FunctionArgs& a, size_t i);
std::string_view StringArg(const FunctionArgs& a, size_t i);

// Go's %g (strconv 'g' with shortest precision), %f and %q.
std::string FormatG(double v);
std::string FormatF(double v);
std::string QuoteGo(std::string_view s);

// Neumaier-compensated addition, as Prometheus's kahansum.Inc. Inline:
// regressions and sums call it per sample.
inline void KahanInc(double inc, double& sum, double& c) {
  const double t = sum + inc;
  if (__builtin_isinf(t)) {
    c = 0;
  } else if (__builtin_fabs(sum) >= __builtin_fabs(inc)) {
    c += (sum - t) + inc;
  } else {
    c += (inc - t) + sum;
  }
  sum = t;
}

// Go's math.Max / math.Min (NaN and signed-zero rules differ from fmax).
double GoMax(double a, double b);
double GoMin(double a, double b);

// Prometheus's quantile over plain values: NaN for no values or q NaN,
// -Inf/+Inf for q < 0 / q > 1, else linear interpolation between ranks.
// Sorts `values` (NaN first).
double QuantileOf(double q, std::span<double> values);

// Natural string order as Prometheus's sort_by_label (Go natsort).
bool NaturalLess(std::string_view a, std::string_view b);

// Annotations (texts of Prometheus's util/annotations).
void WarnInvalidQuantile(const FunctionArgs& a, double q);

// Implementations, grouped by the file that defines them.
// rate.cc
Status Rate(const FunctionArgs& a, Vector& out);
Status Increase(const FunctionArgs& a, Vector& out);
Status Delta(const FunctionArgs& a, Vector& out);
Status Irate(const FunctionArgs& a, Vector& out);
Status Idelta(const FunctionArgs& a, Vector& out);
// over_time.cc
Status AvgOverTime(const FunctionArgs& a, Vector& out);
Status SumOverTime(const FunctionArgs& a, Vector& out);
Status CountOverTime(const FunctionArgs& a, Vector& out);
Status MinOverTime(const FunctionArgs& a, Vector& out);
Status MaxOverTime(const FunctionArgs& a, Vector& out);
Status LastOverTime(const FunctionArgs& a, Vector& out);
Status FirstOverTime(const FunctionArgs& a, Vector& out);
Status PresentOverTime(const FunctionArgs& a, Vector& out);
Status StddevOverTime(const FunctionArgs& a, Vector& out);
Status StdvarOverTime(const FunctionArgs& a, Vector& out);
Status QuantileOverTime(const FunctionArgs& a, Vector& out);
Status MadOverTime(const FunctionArgs& a, Vector& out);
Status TsOfFirstOverTime(const FunctionArgs& a, Vector& out);
Status TsOfLastOverTime(const FunctionArgs& a, Vector& out);
Status TsOfMinOverTime(const FunctionArgs& a, Vector& out);
Status TsOfMaxOverTime(const FunctionArgs& a, Vector& out);
Status Changes(const FunctionArgs& a, Vector& out);
Status Resets(const FunctionArgs& a, Vector& out);
// trend.cc
Status Deriv(const FunctionArgs& a, Vector& out);
Status PredictLinear(const FunctionArgs& a, Vector& out);
void DerivBatch(std::span<const FPoint> points, std::span<BatchWindow> windows);
void PredictLinearBatch(std::span<const FPoint> points, std::span<BatchWindow> windows);
Status DoubleExponentialSmoothing(const FunctionArgs& a, Vector& out);
// math.cc
Status Abs(const FunctionArgs& a, Vector& out);
Status Ceil(const FunctionArgs& a, Vector& out);
Status Floor(const FunctionArgs& a, Vector& out);
Status Exp(const FunctionArgs& a, Vector& out);
Status Sqrt(const FunctionArgs& a, Vector& out);
Status Ln(const FunctionArgs& a, Vector& out);
Status Log2(const FunctionArgs& a, Vector& out);
Status Log10(const FunctionArgs& a, Vector& out);
Status Sin(const FunctionArgs& a, Vector& out);
Status Cos(const FunctionArgs& a, Vector& out);
Status Tan(const FunctionArgs& a, Vector& out);
Status Asin(const FunctionArgs& a, Vector& out);
Status Acos(const FunctionArgs& a, Vector& out);
Status Atan(const FunctionArgs& a, Vector& out);
Status Sinh(const FunctionArgs& a, Vector& out);
Status Cosh(const FunctionArgs& a, Vector& out);
Status Tanh(const FunctionArgs& a, Vector& out);
Status Asinh(const FunctionArgs& a, Vector& out);
Status Acosh(const FunctionArgs& a, Vector& out);
Status Atanh(const FunctionArgs& a, Vector& out);
Status Rad(const FunctionArgs& a, Vector& out);
Status Deg(const FunctionArgs& a, Vector& out);
Status Sgn(const FunctionArgs& a, Vector& out);
Status Round(const FunctionArgs& a, Vector& out);
Status Clamp(const FunctionArgs& a, Vector& out);
Status ClampMin(const FunctionArgs& a, Vector& out);
Status ClampMax(const FunctionArgs& a, Vector& out);
Status Pi(const FunctionArgs& a, Vector& out);
Status MaxOf(const FunctionArgs& a, Vector& out);
Status MinOf(const FunctionArgs& a, Vector& out);
// time.cc
Status Time(const FunctionArgs& a, Vector& out);
Status Timestamp(const FunctionArgs& a, Vector& out);
Status VectorFn(const FunctionArgs& a, Vector& out);
Status ScalarFn(const FunctionArgs& a, Vector& out);
Status Minute(const FunctionArgs& a, Vector& out);
Status Hour(const FunctionArgs& a, Vector& out);
Status DayOfWeek(const FunctionArgs& a, Vector& out);
Status DayOfMonth(const FunctionArgs& a, Vector& out);
Status DayOfYear(const FunctionArgs& a, Vector& out);
Status DaysInMonth(const FunctionArgs& a, Vector& out);
Status Month(const FunctionArgs& a, Vector& out);
Status Year(const FunctionArgs& a, Vector& out);
// labels.cc
Status LabelReplace(const FunctionArgs& a, Vector& out);
Status LabelJoin(const FunctionArgs& a, Vector& out);
// sort.cc
Status Sort(const FunctionArgs& a, Vector& out);
Status SortDesc(const FunctionArgs& a, Vector& out);
Status SortByLabel(const FunctionArgs& a, Vector& out);
Status SortByLabelDesc(const FunctionArgs& a, Vector& out);
// histogram.cc
Status HistogramQuantile(const FunctionArgs& a, Vector& out);
Status HistogramQuantiles(const FunctionArgs& a, Vector& out);
Status HistogramFraction(const FunctionArgs& a, Vector& out);
Status NativeHistogramOnly(const FunctionArgs& a, Vector& out);
// absent.cc
Status Absent(const FunctionArgs& a, Vector& out);
Status AbsentOverTime(const FunctionArgs& a, Vector& out);

}  // namespace gpumon::promql::fn
