#include "tsdb/downsample/window_aggregator.h"

#include <algorithm>
#include <cmath>

namespace gpumon::tsdb::downsample {

int64_t WindowOf(int64_t t, int64_t resolution_ms) {
  int64_t q = t / resolution_ms;
  return (t % resolution_ms != 0 && t < 0) ? q - 1 : q;
}

void CompensatedSum::Add(double v) {
  if (!any_) {
    sum_ = v;
    any_ = true;
    return;
  }
  const double t = sum_ + v;
  if (std::isinf(t)) {
    comp_ = 0;  // the compensation is meaningless once the sum overflowed
  } else if (std::fabs(sum_) >= std::fabs(v)) {
    comp_ += (sum_ - t) + v;
  } else {
    comp_ += (v - t) + sum_;
  }
  sum_ = t;
}

double CompensatedSum::Value() const {
  if (std::isinf(sum_) || comp_ == 0) return sum_;
  return sum_ + comp_;
}

void CounterSampler::Add(Sample s) {
  // A counter has no use for NaN or infinities; they would poison the
  // increase of every later window.
  if (!std::isfinite(s.v)) return;
  if (!have_end_) {
    out_->push_back(s);
    end_ = s;
    have_end_ = true;
    return;
  }
  const int64_t w = WindowOf(s.t, res_);
  if (open_ && w != window_) CloseWindow();
  if (!open_) {
    open_ = true;
    window_ = w;
    prev_ = end_;
    reset_ = false;
    n_ = 0;
    inc_ = CompensatedSum();
  }
  if (s.v < prev_.v) {
    reset_ = true;
    inc_.Add(s.v);
  } else {
    inc_.Add(s.v - prev_.v);
  }
  if (n_ < 2) head_[n_] = s;
  ++n_;
  prev_ = s;
}

void CounterSampler::CloseWindow() {
  if (!open_) return;
  open_ = false;
  const Sample l = prev_;
  if (reset_) {
    const int64_t x = std::max(end_.t + 1, window_ * res_);
    if (x + 1 < l.t) {
      const double a = inc_.Value();
      out_->push_back({x, a + end_.v - l.v});
      out_->push_back({x + 1, 0.0});
    } else {
      // The path lies within two milliseconds: x and x + 1 are the only
      // times it can have, so it has at most two samples, l the last.
      for (int i = 0; i + 1 < std::min(n_, 2); ++i) out_->push_back(head_[i]);
    }
  }
  out_->push_back(l);
  end_ = l;
}

void CounterSampler::Finish() {
  CloseWindow();
  have_end_ = false;
}

void WindowState::Start(int64_t w) {
  open = true;
  window = w;
  count = 0;
  sum = CompensatedSum();
  min = max = std::nan("");
}

void WindowState::AddMin(double v) {
  if (std::isnan(min) || v < min) min = v;
}

void WindowState::AddMax(double v) {
  if (std::isnan(max) || v > max) max = v;
}

RawAggregator::RawAggregator(int64_t resolution_ms)
    : res_(resolution_ms), counter_(resolution_ms, &Out(Aggregate::kCounter)) {}

void RawAggregator::Add(int64_t t, double v) {
  if (IsStaleNaN(v)) return;
  const int64_t w = WindowOf(t, res_);
  if (!win_.open || w != win_.window) {
    Close();
    win_.Start(w);
  }
  win_.last_t = t;
  win_.count += 1;
  win_.sum.Add(v);
  win_.AddMin(v);
  win_.AddMax(v);
  counter_.Add({t, v});
}

void RawAggregator::Close() {
  if (!win_.open) return;
  const int64_t t = win_.last_t;
  Out(Aggregate::kCount).push_back({t, win_.count});
  Out(Aggregate::kSum).push_back({t, win_.sum.Value()});
  Out(Aggregate::kMin).push_back({t, win_.min});
  Out(Aggregate::kMax).push_back({t, win_.max});
  win_.open = false;
}

void RawAggregator::Finish() {
  Close();
  counter_.Finish();
}

void RawAggregator::Clear() {
  for (auto& v : out_) v.clear();
  win_.open = false;
  counter_ = CounterSampler(res_, &Out(Aggregate::kCounter));
}

AggregateCoarsener::AggregateCoarsener(Aggregate kind, int64_t resolution_ms)
    : kind_(kind), res_(resolution_ms), counter_(resolution_ms, &out_) {}

void AggregateCoarsener::Add(int64_t t, double v) {
  if (IsStaleNaN(v)) return;
  if (kind_ == Aggregate::kCounter) {
    counter_.Add({t, v});
    return;
  }
  const int64_t w = WindowOf(t, res_);
  if (!win_.open || w != win_.window) {
    Close();
    win_.Start(w);
  }
  win_.last_t = t;
  switch (kind_) {
    case Aggregate::kCount:
      win_.count += v;
      break;
    case Aggregate::kSum:
      win_.sum.Add(v);
      break;
    case Aggregate::kMin:
      win_.AddMin(v);
      break;
    case Aggregate::kMax:
      win_.AddMax(v);
      break;
    case Aggregate::kCounter:
      break;
  }
}

void AggregateCoarsener::Close() {
  if (!win_.open) return;
  double v = 0;
  switch (kind_) {
    case Aggregate::kCount:
      v = win_.count;
      break;
    case Aggregate::kSum:
      v = win_.sum.Value();
      break;
    case Aggregate::kMin:
      v = win_.min;
      break;
    case Aggregate::kMax:
      v = win_.max;
      break;
    case Aggregate::kCounter:
      break;
  }
  out_.push_back({win_.last_t, v});
  win_.open = false;
}

void AggregateCoarsener::Clear() {
  out_.clear();
  win_.open = false;
  counter_ = CounterSampler(res_, &out_);
}

void AggregateCoarsener::Finish() {
  if (kind_ == Aggregate::kCounter) {
    counter_.Finish();
  } else {
    Close();
  }
}

}  // namespace gpumon::tsdb::downsample
