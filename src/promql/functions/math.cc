// Element-wise math functions over an instant vector (abs, ln, trig,
// round, clamp...) and the scalar constants/selectors pi, max_of, min_of.
// All of them drop the metric name, as in Prometheus 3.x.
#include <cmath>
#include <numbers>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

template <typename F>
Status Each(const FunctionArgs& a, Vector& out, F f) {
  const Vector* in = VectorArg(a, 0);
  if (in == nullptr) return Status::Ok();
  out.reserve(out.size() + in->size());
  for (const Sample& s : *in) out.push_back(Sample{DropMetricName(s.metric), a.ts, f(s.f)});
  return Status::Ok();
}

Status ClampTo(const FunctionArgs& a, Vector& out, double lo, double hi) {
  if (hi < lo) return Status::Ok();
  return Each(a, out, [lo, hi](double v) { return GoMax(lo, GoMin(hi, v)); });
}

}  // namespace

Status Abs(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::fabs(v); });
}
Status Ceil(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::ceil(v); });
}
Status Floor(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::floor(v); });
}
Status Exp(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::exp(v); });
}
Status Sqrt(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::sqrt(v); });
}
Status Ln(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::log(v); });
}
Status Log2(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::log2(v); });
}
Status Log10(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::log10(v); });
}
Status Sin(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::sin(v); });
}
Status Cos(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::cos(v); });
}
Status Tan(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::tan(v); });
}
Status Asin(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::asin(v); });
}
Status Acos(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::acos(v); });
}
Status Atan(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::atan(v); });
}
Status Sinh(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::sinh(v); });
}
Status Cosh(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::cosh(v); });
}
Status Tanh(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::tanh(v); });
}
Status Asinh(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::asinh(v); });
}
Status Acosh(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::acosh(v); });
}
Status Atanh(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return std::atanh(v); });
}
Status Rad(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return v * std::numbers::pi / 180; });
}
Status Deg(const FunctionArgs& a, Vector& out) {
  return Each(a, out, [](double v) { return v * 180 / std::numbers::pi; });
}
Status Sgn(const FunctionArgs& a, Vector& out) {
  // NaN and ±0 pass through unchanged.
  return Each(a, out, [](double v) { return v < 0 ? -1.0 : (v > 0 ? 1.0 : v); });
}

// round(v, to_nearest=1): half rounds up, as Prometheus's floor(x+0.5).
Status Round(const FunctionArgs& a, Vector& out) {
  const double to_nearest = ScalarArg(a, 1, 1);
  const double inverse = 1.0 / to_nearest;
  return Each(a, out, [inverse](double v) { return std::floor(v * inverse + 0.5) / inverse; });
}

Status Clamp(const FunctionArgs& a, Vector& out) {
  return ClampTo(a, out, ScalarArg(a, 1, 0), ScalarArg(a, 2, 0));
}
Status ClampMin(const FunctionArgs& a, Vector& out) {
  return ClampTo(a, out, ScalarArg(a, 1, 0), HUGE_VAL);
}
Status ClampMax(const FunctionArgs& a, Vector& out) {
  return ClampTo(a, out, -HUGE_VAL, ScalarArg(a, 1, 0));
}

// Scalar-valued functions put their value in one unlabelled sample.
Status Pi(const FunctionArgs& a, Vector& out) {
  out.push_back(Sample{Labels(), a.ts, std::numbers::pi});
  return Status::Ok();
}
Status MaxOf(const FunctionArgs& a, Vector& out) {
  out.push_back(Sample{Labels(), a.ts, GoMax(ScalarArg(a, 0, 0), ScalarArg(a, 1, 0))});
  return Status::Ok();
}
Status MinOf(const FunctionArgs& a, Vector& out) {
  out.push_back(Sample{Labels(), a.ts, GoMin(ScalarArg(a, 0, 0), ScalarArg(a, 1, 0))});
  return Status::Ok();
}

}  // namespace gpumon::promql::fn
