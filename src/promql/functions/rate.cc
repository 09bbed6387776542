// rate, increase, delta (extrapolated over the window) and irate, idelta
// (the last two points), as Prometheus's extrapolatedRate/instantValue.
#include <cmath>
#include <string>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

// Window length in seconds as Go's time.Duration.Seconds() computes it
// (whole seconds plus the fraction), so results agree to the last bit.
double WindowSeconds(int64_t ms) {
  const int64_t sec = ms / 1000;
  const int64_t rem_ns = (ms % 1000) * 1000000;
  return static_cast<double>(sec) + static_cast<double>(rem_ns) / 1e9;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Prometheus raises this info once per series that produced a value.
void MaybeNotCounterInfo(const FunctionArgs& a, const Labels& metric) {
  if (a.annotations == nullptr) return;
  std::string_view name = MetricNameOf(metric);
  if (name.empty() || EndsWith(name, "_total") || EndsWith(name, "_sum") ||
      EndsWith(name, "_count") || EndsWith(name, "_bucket")) {
    return;
  }
  // Reuse one buffer: the same message repeats at every step.
  thread_local std::string msg;
  msg.assign(
      "PromQL info: metric might not be a counter, name does not end in "
      "_total/_sum/_count/_bucket: ");
  msg += QuoteGo(name);
  for (const auto& existing : a.annotations->infos) {
    if (existing == msg) return;
  }
  a.annotations->AddInfo(msg);
}

Status ExtrapolatedRate(const FunctionArgs& a, Vector& out, bool is_counter, bool is_rate) {
  const auto s = SeriesArg(a, 0);
  if (!s || s->points.size() < 2) return Status::Ok();
  const auto& p = s->points;
  const size_t n = p.size();
  double result = p.back().f - p.front().f;
  if (is_counter) {
    // A drop is a counter reset: the value before it was lost from the
    // difference, so add it back.
    for (size_t i = 1; i < n; ++i) {
      if (p[i].f < p[i - 1].f) result += p[i - 1].f;
    }
  }
  const int64_t first_t = p.front().t;
  const int64_t last_t = p.back().t;
  double to_start = static_cast<double>(first_t - a.range_start) / 1000;
  double to_end = static_cast<double>(a.range_end - last_t) / 1000;
  const double sampled = static_cast<double>(last_t - first_t) / 1000;
  const double avg_step = sampled / static_cast<double>(n - 1);
  // Extrapolate to a window edge only when the series plausibly extends
  // there (a gap under 1.1 average intervals); otherwise by half a step.
  const double threshold = avg_step * 1.1;
  if (to_start >= threshold) to_start = avg_step / 2;
  if (is_counter) {
    // A counter cannot go below zero: stop the extrapolation where the
    // fitted line would reach zero.
    double to_zero = to_start;
    if (result > 0 && p.front().f >= 0) to_zero = sampled * (p.front().f / result);
    if (to_zero < to_start) to_start = to_zero;
  }
  if (to_end >= threshold) to_end = avg_step / 2;
  double factor = 1.0;
  if (sampled != 0) factor = (sampled + to_start + to_end) / sampled;
  if (is_rate) factor /= WindowSeconds(a.range_end - a.range_start);
  result *= factor;
  out.push_back(Sample{DropMetricName(s->metric), a.ts, result});
  if (is_counter) MaybeNotCounterInfo(a, s->metric);
  return Status::Ok();
}

Status InstantValue(const FunctionArgs& a, Vector& out, bool is_rate) {
  const auto s = SeriesArg(a, 0);
  if (!s || s->points.size() < 2) return Status::Ok();
  const FPoint& prev = s->points[s->points.size() - 2];
  const FPoint& last = s->points.back();
  const int64_t interval = last.t - prev.t;
  if (interval == 0) return Status::Ok();
  double result = last.f;
  // For irate a drop means a counter reset: the new value is the increase.
  if (!is_rate || !(last.f < prev.f)) result = last.f - prev.f;
  if (is_rate) result /= static_cast<double>(interval) / 1000;
  out.push_back(Sample{DropMetricName(s->metric), a.ts, result});
  return Status::Ok();
}

}  // namespace

Status Rate(const FunctionArgs& a, Vector& out) { return ExtrapolatedRate(a, out, true, true); }
Status Increase(const FunctionArgs& a, Vector& out) {
  return ExtrapolatedRate(a, out, true, false);
}
Status Delta(const FunctionArgs& a, Vector& out) { return ExtrapolatedRate(a, out, false, false); }
Status Irate(const FunctionArgs& a, Vector& out) { return InstantValue(a, out, true); }
Status Idelta(const FunctionArgs& a, Vector& out) { return InstantValue(a, out, false); }

}  // namespace gpumon::promql::fn
