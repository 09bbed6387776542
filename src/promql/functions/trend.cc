// Trend estimates over a window: deriv and predict_linear (least-squares
// line) and double_exponential_smoothing (Holt's linear method), as
// Prometheus computes them.
#include <cmath>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

struct Line {
  double slope = 0;
  double intercept = 0;
};

// Least squares over (seconds since intercept_t, value). x is taken
// relative to intercept_t so the intercept is the value at that time and
// large timestamps do not cost precision.
Line Regression(const std::vector<FPoint>& points, int64_t intercept_t) {
  double n = 0, sum_x = 0, c_x = 0, sum_y = 0, c_y = 0, sum_xy = 0, c_xy = 0, sum_x2 = 0, c_x2 = 0;
  const double init_y = points.front().f;
  bool const_y = true;
  for (size_t i = 0; i < points.size(); ++i) {
    const FPoint& p = points[i];
    if (const_y && i > 0 && p.f != init_y) const_y = false;
    n += 1.0;
    const double x = static_cast<double>(p.t - intercept_t) / 1e3;
    KahanInc(x, sum_x, c_x);
    KahanInc(p.f, sum_y, c_y);
    KahanInc(x * p.f, sum_xy, c_xy);
    KahanInc(x * x, sum_x2, c_x2);
  }
  // A constant series has an exact answer; the general formula would
  // lose it to rounding.
  if (const_y) {
    if (std::isinf(init_y)) return {std::nan(""), std::nan("")};
    return {0, init_y};
  }
  sum_x += c_x;
  sum_y += c_y;
  sum_xy += c_xy;
  sum_x2 += c_x2;
  const double cov_xy = sum_xy - sum_x * sum_y / n;
  const double var_x = sum_x2 - sum_x * sum_x / n;
  Line l;
  l.slope = cov_xy / var_x;
  l.intercept = sum_y / n - l.slope * sum_x / n;
  return l;
}

}  // namespace

Status Deriv(const FunctionArgs& a, Vector& out) {
  const Series* s = SeriesArg(a, 0);
  if (s == nullptr || s->points.size() < 2) return Status::Ok();
  Line l = Regression(s->points, s->points.front().t);
  out.push_back(Sample{DropMetricName(s->metric), a.ts, l.slope});
  return Status::Ok();
}

// predict_linear(range-vector, seconds): the fitted value `seconds` after
// the evaluation time.
Status PredictLinear(const FunctionArgs& a, Vector& out) {
  const Series* s = SeriesArg(a, 0);
  if (s == nullptr || s->points.size() < 2) return Status::Ok();
  const double duration = ScalarArg(a, 1, 0);
  Line l = Regression(s->points, a.ts);
  out.push_back(Sample{DropMetricName(s->metric), a.ts, l.slope * duration + l.intercept});
  return Status::Ok();
}

// double_exponential_smoothing(range-vector, sf, tf), both factors in (0, 1).
Status DoubleExponentialSmoothing(const FunctionArgs& a, Vector& out) {
  const Series* s = SeriesArg(a, 0);
  if (s == nullptr || s->points.empty()) return Status::Ok();
  const double sf = ScalarArg(a, 1, std::nan(""));
  const double tf = ScalarArg(a, 2, std::nan(""));
  if (sf <= 0 || sf >= 1) {
    return Status::Error("invalid smoothing factor. Expected: 0 < sf < 1, got: " + FormatF(sf));
  }
  if (tf <= 0 || tf >= 1) {
    return Status::Error("invalid trend factor. Expected: 0 < tf < 1, got: " + FormatF(tf));
  }
  const auto& p = s->points;
  if (p.size() < 2) return Status::Ok();
  double s0 = 0, s1 = p[0].f, b = p[1].f - p[0].f;
  for (size_t i = 1; i < p.size(); ++i) {
    const double x = sf * p[i].f;
    // The trend: the raw first difference at the start, then a blend of
    // the last smoothed step and the previous trend.
    if (i > 1) b = tf * (s1 - s0) + (1 - tf) * b;
    const double y = (1 - sf) * (s1 + b);
    s0 = s1;
    s1 = x + y;
  }
  out.push_back(Sample{DropMetricName(s->metric), a.ts, s1});
  return Status::Ok();
}

}  // namespace gpumon::promql::fn
