// Trend estimates over a window: deriv and predict_linear (least-squares
// line) and double_exponential_smoothing (Holt's linear method), as
// Prometheus computes them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

struct Line {
  double slope = 0;
  double intercept = 0;
};

// Least squares over (seconds since intercept_t, value), for up to four
// windows at once, one per vector lane. x is taken relative to
// intercept_t so the intercept is the value at that time and large
// timestamps do not cost precision. Every lane performs exactly the
// scalar sequence of IEEE operations (compensated sums in point order),
// so a window's result does not depend on its batch. target_clones builds
// an AVX2 variant next to the baseline one (no FMA: results stay equal).
constexpr int kLanes = 4;
using V = double __attribute__((vector_size(8 * kLanes)));
using M = int64_t __attribute__((vector_size(8 * kLanes)));

struct Window {
  const FPoint* points = nullptr;
  size_t size = 0;
  int64_t intercept_t = 0;
};

// KahanInc per lane, applied where `on`.
inline __attribute__((always_inline)) void KahanLanes(const V& inc, V& sum, V& c, const M& on) {
  const V t = sum + inc;
  // Magnitudes by clearing the sign bit.
  const M abs_t = __builtin_bit_cast(M, t) & INT64_MAX;
  const V abs_sum = __builtin_bit_cast(V, __builtin_bit_cast(M, sum) & INT64_MAX);
  const V abs_inc = __builtin_bit_cast(V, __builtin_bit_cast(M, inc) & INT64_MAX);
  const M inf = abs_t == 0x7ff0000000000000;  // ±Inf
  const M big = abs_sum >= abs_inc;
  const V comp = big ? (sum - t) + inc : (inc - t) + sum;
  const V nc = inf ? V{} : c + comp;
  c = on ? nc : c;
  sum = on ? t : sum;
}

// Adds point i of every lane's window to the sums; `on` masks the lanes
// whose window has a point i (all of them in the common case).
template <bool kAllOn>
inline __attribute__((always_inline)) void AddPoints(const Window* w, size_t i, const V& init_y,
                                                     V& n, V& sum_x, V& c_x, V& sum_y, V& c_y,
                                                     V& sum_xy, V& c_xy, V& sum_x2, V& c_x2,
                                                     M& const_y) {
  V x, y;
  M on;
  if constexpr (kAllOn) {
    const FPoint& p0 = w[0].points[i];
    const FPoint& p1 = w[1].points[i];
    const FPoint& p2 = w[2].points[i];
    const FPoint& p3 = w[3].points[i];
    x = V{
        static_cast<double>(p0.t - w[0].intercept_t), static_cast<double>(p1.t - w[1].intercept_t),
        static_cast<double>(p2.t - w[2].intercept_t), static_cast<double>(p3.t - w[3].intercept_t)};
    y = V{p0.f, p1.f, p2.f, p3.f};
    on = M{} - 1;
  } else {
    x = V{};
    y = V{};
    on = M{};
    for (int l = 0; l < kLanes; ++l) {
      if (i < w[l].size) {
        const FPoint& p = w[l].points[i];
        x[l] = static_cast<double>(p.t - w[l].intercept_t);
        y[l] = p.f;
        on[l] = -1;
      }
    }
  }
  x = x / 1e3;
  const_y &= ~on | (y == init_y);
  n = on ? n + 1.0 : n;
  KahanLanes(x, sum_x, c_x, on);
  KahanLanes(y, sum_y, c_y, on);
  KahanLanes(x * y, sum_xy, c_xy, on);
  KahanLanes(x * x, sum_x2, c_x2, on);
}

__attribute__((target_clones("avx2", "default"))) void RegressionLanes(const Window* w, Line* out) {
  static_assert(kLanes == 4);
  V n{}, sum_x{}, c_x{}, sum_y{}, c_y{}, sum_xy{}, c_xy{}, sum_x2{}, c_x2{}, init_y{};
  M const_y{};
  size_t longest = 0, shortest = SIZE_MAX;
  for (int l = 0; l < kLanes; ++l) {
    longest = std::max(longest, w[l].size);
    shortest = std::min(shortest, w[l].size);
    init_y[l] = w[l].size > 0 ? w[l].points[0].f : 0;
    const_y[l] = -1;
  }
  size_t i = 0;
  for (; i < shortest; ++i) {
    AddPoints<true>(w, i, init_y, n, sum_x, c_x, sum_y, c_y, sum_xy, c_xy, sum_x2, c_x2, const_y);
  }
  for (; i < longest; ++i) {
    AddPoints<false>(w, i, init_y, n, sum_x, c_x, sum_y, c_y, sum_xy, c_xy, sum_x2, c_x2, const_y);
  }
  for (int l = 0; l < kLanes; ++l) {
    // A constant series has an exact answer; the general formula would
    // lose it to rounding.
    if (const_y[l] != 0) {
      out[l] = std::isinf(init_y[l]) ? Line{std::nan(""), std::nan("")} : Line{0, init_y[l]};
      continue;
    }
    const double sx = sum_x[l] + c_x[l], sy = sum_y[l] + c_y[l];
    const double sxy = sum_xy[l] + c_xy[l], sx2 = sum_x2[l] + c_x2[l];
    const double cov_xy = sxy - sx * sy / n[l];
    const double var_x = sx2 - sx * sx / n[l];
    out[l].slope = cov_xy / var_x;
    out[l].intercept = sy / n[l] - out[l].slope * sx / n[l];
  }
}

Line Regression(std::span<const FPoint> points, int64_t intercept_t) {
  Window w[kLanes];
  w[0] = Window{points.data(), points.size(), intercept_t};
  Line out[kLanes];
  RegressionLanes(w, out);
  return out[0];
}

// The batch forms: windows of at least two points, four at a time.
template <bool kPredict>
void BatchRegression(std::span<const FPoint> points, std::span<BatchWindow> windows) {
  BatchWindow* pending[kLanes];
  Window w[kLanes];
  Line fit[kLanes];
  int used = 0;
  auto flush = [&] {
    for (int l = used; l < kLanes; ++l) w[l] = Window{};
    RegressionLanes(w, fit);
    for (int l = 0; l < used; ++l) {
      BatchWindow& b = *pending[l];
      b.has_value = true;
      b.value = kPredict ? fit[l].slope * b.scalar + fit[l].intercept : fit[l].slope;
    }
    used = 0;
  };
  for (BatchWindow& b : windows) {
    b.has_value = false;
    if (b.end - b.begin < 2) continue;
    const FPoint* first = points.data() + b.begin;
    w[used] = Window{first, b.end - b.begin, kPredict ? b.ts : first->t};
    pending[used++] = &b;
    if (used == kLanes) flush();
  }
  if (used > 0) flush();
}

}  // namespace

void DerivBatch(std::span<const FPoint> points, std::span<BatchWindow> windows) {
  BatchRegression<false>(points, windows);
}

void PredictLinearBatch(std::span<const FPoint> points, std::span<BatchWindow> windows) {
  BatchRegression<true>(points, windows);
}

Status Deriv(const FunctionArgs& a, Vector& out) {
  const auto s = SeriesArg(a, 0);
  if (!s || s->points.size() < 2) return Status::Ok();
  Line l = Regression(s->points, s->points.front().t);
  out.push_back(Sample{DropMetricName(s->metric), a.ts, l.slope});
  return Status::Ok();
}

// predict_linear(range-vector, seconds): the fitted value `seconds` after
// the evaluation time.
Status PredictLinear(const FunctionArgs& a, Vector& out) {
  const auto s = SeriesArg(a, 0);
  if (!s || s->points.size() < 2) return Status::Ok();
  const double duration = ScalarArg(a, 1, 0);
  Line l = Regression(s->points, a.ts);
  out.push_back(Sample{DropMetricName(s->metric), a.ts, l.slope * duration + l.intercept});
  return Status::Ok();
}

// double_exponential_smoothing(range-vector, sf, tf), both factors in (0, 1).
Status DoubleExponentialSmoothing(const FunctionArgs& a, Vector& out) {
  const auto s = SeriesArg(a, 0);
  if (!s || s->points.empty()) return Status::Ok();
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
