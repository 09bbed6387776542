// The *_over_time aggregations, changes and resets: one value per series
// window, as Prometheus's functions of the same names (float samples).
#include <cmath>
#include <vector>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

// The window's series when it has points (the engine skips empty windows,
// but a direct caller may not).
std::optional<SeriesView> Window(const FunctionArgs& a, size_t i = 0) {
  const auto s = SeriesArg(a, i);
  if (!s || s->points.empty()) return std::nullopt;
  return s;
}

void Emit(const FunctionArgs& a, const SeriesView& s, double v, Vector& out) {
  out.push_back(Sample{DropMetricName(s.metric), a.ts, v});
}

// Reusable per-thread scratch for the order statistics, so a call does not
// allocate once the buffer has grown.
std::vector<double>& Scratch() {
  thread_local std::vector<double> buf;
  buf.clear();
  return buf;
}

// Picks the point `better(candidate, current)` prefers; a NaN current
// value is always replaced, as Prometheus does.
template <typename Better>
const FPoint& Extreme(const SeriesView& s, Better better) {
  const FPoint* best = &s.points.front();
  for (const auto& p : s.points) {
    if (better(p.f, best->f) || std::isnan(best->f)) best = &p;
  }
  return *best;
}

double Variance(const SeriesView& s) {
  double count = 0, mean = 0, c_mean = 0, aux = 0, c_aux = 0;
  for (const auto& p : s.points) {
    count++;
    const double delta = p.f - (mean + c_mean);
    KahanInc(delta / count, mean, c_mean);
    KahanInc(delta * (p.f - (mean + c_mean)), aux, c_aux);
  }
  return (aux + c_aux) / count;
}

}  // namespace

Status AvgOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  const auto& p = s->points;
  // Compensated sum; once it overflows, switch to an incremental mean
  // (as Prometheus) so huge values still average to a finite result.
  double sum = p[0].f, c = 0, mean = 0, count = 1;
  bool incremental = false;
  for (size_t i = 1; i < p.size(); ++i) {
    count = static_cast<double>(i + 1);
    if (!incremental) {
      double new_sum = sum, new_c = c;
      KahanInc(p[i].f, new_sum, new_c);
      if (!std::isinf(new_sum)) {
        sum = new_sum;
        c = new_c;
        continue;
      }
      incremental = true;
      mean = sum / (count - 1);
      c /= (count - 1);
    }
    const double q = (count - 1) / count;
    double m = q * mean, mc = q * c;
    KahanInc(p[i].f / count, m, mc);
    mean = m;
    c = mc;
  }
  Emit(a, *s, incremental ? mean + c : sum / count + c / count, out);
  return Status::Ok();
}

Status SumOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  double sum = 0, c = 0;
  for (const auto& p : s->points) KahanInc(p.f, sum, c);
  Emit(a, *s, std::isinf(sum) ? sum : sum + c, out);
  return Status::Ok();
}

Status CountOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  Emit(a, *s, static_cast<double>(s->points.size()), out);
  return Status::Ok();
}

Status MinOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  Emit(a, *s, Extreme(*s, [](double x, double y) { return x < y; }).f, out);
  return Status::Ok();
}

Status MaxOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  Emit(a, *s, Extreme(*s, [](double x, double y) { return x > y; }).f, out);
  return Status::Ok();
}

Status TsOfMinOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  const FPoint& p = Extreme(*s, [](double x, double y) { return x <= y; });
  Emit(a, *s, static_cast<double>(p.t) / 1000, out);
  return Status::Ok();
}

Status TsOfMaxOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  const FPoint& p = Extreme(*s, [](double x, double y) { return x >= y; });
  Emit(a, *s, static_cast<double>(p.t) / 1000, out);
  return Status::Ok();
}

// last_over_time and first_over_time act like an offset: they keep the
// metric name.
Status LastOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  out.push_back(Sample{s->metric, a.ts, s->points.back().f});
  return Status::Ok();
}

Status FirstOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  out.push_back(Sample{s->metric, a.ts, s->points.front().f});
  return Status::Ok();
}

Status TsOfFirstOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  Emit(a, *s, static_cast<double>(s->points.front().t) / 1000, out);
  return Status::Ok();
}

Status TsOfLastOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  Emit(a, *s, static_cast<double>(s->points.back().t) / 1000, out);
  return Status::Ok();
}

Status PresentOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  Emit(a, *s, 1, out);
  return Status::Ok();
}

Status StdvarOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  Emit(a, *s, Variance(*s), out);
  return Status::Ok();
}

Status StddevOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  Emit(a, *s, std::sqrt(Variance(*s)), out);
  return Status::Ok();
}

// quantile_over_time(scalar, range-vector)
Status QuantileOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a, 1);
  if (!s) return Status::Ok();
  const double q = ScalarArg(a, 0, std::nan(""));
  WarnInvalidQuantile(a, q);
  auto& values = Scratch();
  for (const auto& p : s->points) values.push_back(p.f);
  Emit(a, *s, QuantileOf(q, values), out);
  return Status::Ok();
}

// Median absolute deviation from the median; NaN when any value is NaN.
Status MadOverTime(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  auto& values = Scratch();
  for (const auto& p : s->points) {
    if (std::isnan(p.f)) {
      Emit(a, *s, std::nan(""), out);
      return Status::Ok();
    }
    values.push_back(p.f);
  }
  const double median = QuantileOf(0.5, values);
  for (double& v : values) v = std::fabs(v - median);
  Emit(a, *s, QuantileOf(0.5, values), out);
  return Status::Ok();
}

Status Changes(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  const auto& p = s->points;
  int changes = 0;
  for (size_t i = 1; i < p.size(); ++i) {
    const double prev = p[i - 1].f, cur = p[i].f;
    if (cur != prev && !(std::isnan(cur) && std::isnan(prev))) ++changes;
  }
  Emit(a, *s, changes, out);
  return Status::Ok();
}

Status Resets(const FunctionArgs& a, Vector& out) {
  const auto s = Window(a);
  if (!s) return Status::Ok();
  const auto& p = s->points;
  int resets = 0;
  for (size_t i = 1; i < p.size(); ++i) {
    if (p[i].f < p[i - 1].f) ++resets;
  }
  Emit(a, *s, resets, out);
  return Status::Ok();
}

}  // namespace gpumon::promql::fn
