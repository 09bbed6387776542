// Aggregations: sum, avg, count, min, max, group, stddev, stdvar, quantile,
// topk, bottomk, limitk, limit_ratio and count_values with by/without
// grouping. Groups are assigned once per input series; each step then
// walks the series with cursors, as Prometheus's rangeEvalAgg does.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "promql/engine/evaluator.h"

namespace gpumon::promql::engine_internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Go's strconv.FormatFloat(f, 'g' or 'f', -1, 64) (shortest round-trip).
std::string FormatFloat(double f, bool fixed) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = fixed ? std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::fixed)
                 : std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::general);
  std::string s(buf, r.ptr);
  if (!fixed) {
    // Go writes exponents with at least two digits: 1e+06, 1e-05.
    auto e = s.find('e');
    if (e != std::string::npos) {
      std::string mant = s.substr(0, e);
      char sign = s[e + 1];
      std::string digits = s.substr(e + 2);
      if (digits.size() < 2) digits = "0" + digits;
      s = mant + "e" + sign + digits;
    }
  }
  return s;
}

// Labels of the output group of `metric`.
Labels GroupLabels(const Labels& metric, const std::vector<std::string>& grouping, bool without) {
  // topk(5, x), sum(x): one group, no labels to pick.
  if (!without && grouping.empty()) return Labels{};
  std::vector<Label> items;
  if (without) {
    for (const auto& l : metric) {
      if (l.name == kMetricName) continue;
      if (std::find(grouping.begin(), grouping.end(), l.name) != grouping.end()) continue;
      items.push_back(l);
    }
  } else {
    for (const auto& l : metric) {
      if (std::find(grouping.begin(), grouping.end(), l.name) != grouping.end()) items.push_back(l);
    }
  }
  return Labels::FromSorted(std::move(items));
}

// NaN sorts first, as in Prometheus's vectorByValueHeap.
bool LessNaNFirst(double a, double b) { return std::isnan(a) ? true : a < b; }
bool GreaterNaNFirst(double a, double b) { return std::isnan(a) ? true : a > b; }

struct HeapItem {
  int series;
  double f;
};

// container/heap's algorithms, so ties come out in Prometheus's order.
template <typename Less>
void HeapUp(std::vector<HeapItem>& h, size_t j, Less less) {
  while (j > 0) {
    size_t i = (j - 1) / 2;
    if (!less(h[j].f, h[i].f)) break;
    std::swap(h[i], h[j]);
    j = i;
  }
}

template <typename Less>
bool HeapDown(std::vector<HeapItem>& h, size_t i0, size_t n, Less less) {
  size_t i = i0;
  while (true) {
    size_t j1 = 2 * i + 1;
    if (j1 >= n) break;
    size_t j = j1;
    if (size_t j2 = j1 + 1; j2 < n && less(h[j2].f, h[j1].f)) j = j2;
    if (!less(h[j].f, h[i].f)) break;
    std::swap(h[i], h[j]);
    i = j;
  }
  return i > i0;
}

template <typename Less>
void HeapPush(std::vector<HeapItem>& h, HeapItem x, Less less) {
  h.push_back(x);
  HeapUp(h, h.size() - 1, less);
}

template <typename Less>
void HeapFix(std::vector<HeapItem>& h, size_t i, Less less) {
  if (!HeapDown(h, i, h.size(), less)) HeapUp(h, i, less);
}

// sort.Sort(sort.Reverse(heap)) for small inputs is an insertion sort.
template <typename Less>
void SortReverse(std::vector<HeapItem>& h, Less less) {
  for (size_t i = 1; i < h.size(); ++i) {
    for (size_t j = i; j > 0 && less(h[j - 1].f, h[j].f); --j) std::swap(h[j], h[j - 1]);
  }
}

double Quantile(double q, std::vector<double>& values) {
  if (values.empty() || std::isnan(q)) return kNaN;
  if (q < 0) return -std::numeric_limits<double>::infinity();
  if (q > 1) return std::numeric_limits<double>::infinity();
  std::sort(values.begin(), values.end(), [](double a, double b) {
    if (std::isnan(a)) return !std::isnan(b);
    return a < b;
  });
  const double n = static_cast<double>(values.size());
  const double rank = q * (n - 1);
  const double lower = std::max(0.0, std::floor(rank));
  const double upper = std::min(n - 1, lower + 1);
  const double weight = rank - std::floor(rank);
  return values[static_cast<size_t>(lower)] * (1 - weight) +
         values[static_cast<size_t>(upper)] * weight;
}

struct Group {
  bool seen = false;
  double value = 0;
  double mean = 0;
  double kahan = 0;
  double count = 0;
  bool incremental = false;
  std::vector<double> values;  // quantile
};

}  // namespace

Matrix Evaluator::EvalAggregate(const Aggregate& a) {
  const int64_t before = ctx_.current_samples;
  std::vector<std::string> grouping = a.grouping;
  std::sort(grouping.begin(), grouping.end());

  if (a.op == AggregateOp::kCountValues) {
    Matrix in = Eval(*a.expr);
    Matrix res = EvalCountValues(a, std::move(in));
    ctx_.SetSamples(before + TotalPoints(res));
    return res;
  }

  std::vector<double> params;
  if (a.param) params = EvalScalarSteps(*a.param);
  Matrix in = Eval(*a.expr);

  if (a.op == AggregateOp::kTopk || a.op == AggregateOp::kBottomk || a.op == AggregateOp::kLimitk ||
      a.op == AggregateOp::kLimitRatio) {
    Matrix res = EvalAggregateK(a, std::move(in), params);
    ctx_.SetSamples(before + TotalPoints(res));
    return res;
  }

  if (a.op == AggregateOp::kQuantile) {
    double mx = -std::numeric_limits<double>::infinity(), mn = -mx;
    bool nan = false;
    for (double p : params) {
      if (std::isnan(p)) {
        nan = true;
        continue;
      }
      mx = std::max(mx, p);
      mn = std::min(mn, p);
    }
    const std::string w = "PromQL warning: quantile value should be between 0 and 1, got ";
    // As in Prometheus, a NaN anywhere makes the range's min and max NaN.
    if (nan) {
      ctx_.annotations.AddWarning(w + "NaN");
    } else {
      if (mx > 1) ctx_.annotations.AddWarning(w + FormatFloat(mx, false));
      if (mn < 0) ctx_.annotations.AddWarning(w + FormatFloat(mn, false));
    }
  }

  // Group of every input series, computed once.
  LabelsIndex groups;
  std::vector<int> group_of(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    ctx_.Poll();
    group_of[i] = groups.FindOrInsert(GroupLabels(in[i].metric, grouping, a.without));
  }
  Matrix out(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) out[g].metric = groups.keys()[g];
  std::vector<Group> state(groups.size());
  StepCursor cur(in);
  const AggregateOp op = a.op;

  const int64_t steps = NumSteps();
  const int64_t work_per_step = 1 + static_cast<int64_t>(in.size() + state.size());
  size_t step = 0;
  for (int64_t ts = start_; ts <= end_; ts += interval_, ++step) {
    ctx_.Poll(work_per_step);
    for (auto& g : state) g.seen = false;
    for (size_t si = 0; si < in.size(); ++si) {
      double f;
      if (!cur.At(si, ts, &f)) continue;
      Group& g = state[static_cast<size_t>(group_of[si])];
      if (!g.seen) {
        g.seen = true;
        g.value = f;
        g.mean = f;
        g.kahan = 0;
        g.count = 1;
        g.incremental = false;
        switch (op) {
          case AggregateOp::kStddev:
          case AggregateOp::kStdvar:
            g.value = (std::isnan(f) || std::isinf(f)) ? kNaN : 0;
            break;
          case AggregateOp::kQuantile:
            g.values.clear();
            g.values.push_back(f);
            break;
          case AggregateOp::kGroup:
            g.value = 1;
            break;
          default:
            break;
        }
        continue;
      }
      switch (op) {
        case AggregateOp::kSum:
          KahanInc(f, g.value, g.kahan);
          break;
        case AggregateOp::kAvg: {
          g.count++;
          if (!g.incremental) {
            double v = g.value, c = g.kahan;
            KahanInc(f, v, c);
            if (!std::isinf(v)) {
              g.value = v;
              g.kahan = c;
              break;
            }
            // The running sum would overflow: switch to an incremental mean.
            g.incremental = true;
            g.mean = g.value / (g.count - 1);
            g.kahan /= g.count - 1;
          }
          const double q = (g.count - 1) / g.count;
          double m = q * g.mean, c = q * g.kahan;
          KahanInc(f / g.count, m, c);
          g.mean = m;
          g.kahan = c;
          break;
        }
        case AggregateOp::kCount:
          g.count++;
          break;
        case AggregateOp::kGroup:
          break;
        case AggregateOp::kMax:
          if (g.value < f || std::isnan(g.value)) g.value = f;
          break;
        case AggregateOp::kMin:
          if (g.value > f || std::isnan(g.value)) g.value = f;
          break;
        case AggregateOp::kStddev:
        case AggregateOp::kStdvar: {
          g.count++;
          const double delta = f - g.mean;
          g.mean += delta / g.count;
          g.value += delta * (f - g.mean);
          break;
        }
        case AggregateOp::kQuantile:
          g.values.push_back(f);
          break;
        default:
          break;
      }
    }
    for (size_t gi = 0; gi < state.size(); ++gi) {
      Group& g = state[gi];
      if (!g.seen) continue;
      double v = g.value;
      switch (op) {
        case AggregateOp::kSum:
          v = g.value + g.kahan;
          break;
        case AggregateOp::kAvg:
          v = g.incremental ? g.mean + g.kahan : g.value / g.count + g.kahan / g.count;
          break;
        case AggregateOp::kCount:
          v = g.count;
          break;
        case AggregateOp::kStdvar:
          v = g.value / g.count;
          break;
        case AggregateOp::kStddev:
          v = std::sqrt(g.value / g.count);
          break;
        case AggregateOp::kQuantile:
          v = Quantile(params[step], g.values);
          break;
        default:
          break;
      }
      auto& pts = out[gi].points;
      if (pts.empty()) pts.reserve(ReserveFor(steps - static_cast<int64_t>(step)));
      ctx_.AddSample();
      pts.push_back(FPoint{ts, v});
    }
  }
  std::erase_if(out, [](const Series& s) { return s.points.empty(); });
  ctx_.SetSamples(before + TotalPoints(out));
  return out;
}

Matrix Evaluator::EvalAggregateK(const Aggregate& a, Matrix in, const std::vector<double>& params) {
  std::vector<std::string> grouping = a.grouping;
  std::sort(grouping.begin(), grouping.end());
  const AggregateOp op = a.op;
  double mx = -std::numeric_limits<double>::infinity(), mn = -mx;
  bool nan = false;
  for (double p : params) {
    if (std::isnan(p)) {
      nan = true;
      continue;
    }
    mx = std::max(mx, p);
    mn = std::min(mn, p);
  }
  if (op == AggregateOp::kLimitRatio) {
    if (!nan && mx == 0 && mn == 0) return {};
    if (nan) FailExec("Ratio value is NaN");
    if (mx > 1.0) {
      ctx_.annotations.AddWarning("PromQL warning: ratio value should be between -1 and 1, got " +
                                  FormatFloat(mx, false) + ", capping to 1");
    }
    if (mn < -1.0) {
      ctx_.annotations.AddWarning("PromQL warning: ratio value should be between -1 and 1, got " +
                                  FormatFloat(mn, false) + ", capping to -1");
    }
  } else {
    if (!nan && mx < 1) return {};
    if (nan) FailExec("Parameter value is NaN");
    if (mn <= -9.223372036854775807e18) {
      FailExec("Scalar value " + FormatFloat(mn, false) + " underflows int64");
    }
    if (mx >= 9.223372036854775807e18) {
      FailExec("Scalar value " + FormatFloat(mx, false) + " overflows int64");
    }
  }

  LabelsIndex groups;
  std::vector<int> group_of(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    ctx_.Poll();
    group_of[i] = groups.FindOrInsert(GroupLabels(in[i].metric, grouping, a.without));
  }
  std::vector<std::vector<HeapItem>> heaps(groups.size());
  std::vector<char> seen(groups.size());
  std::vector<int> out_idx(in.size(), -1);
  SeriesCollector col(ctx_, NumSteps());
  StepCursor cur(in);
  auto ratio_offset = [&](size_t si) {
    return static_cast<double>(in[si].metric.Hash()) /
           static_cast<double>(std::numeric_limits<uint64_t>::max());
  };

  size_t step = 0;
  for (int64_t ts = start_; ts <= end_; ts += interval_, ++step) {
    ctx_.Poll(1 + static_cast<int64_t>(in.size() + heaps.size()));
    const double param = params.empty() ? 0 : params[step];
    std::fill(seen.begin(), seen.end(), 0);
    bool skip_step = false;
    int64_t k = 0;
    double r = 0;
    if (op == AggregateOp::kLimitRatio) {
      if (param == 0) skip_step = true;
      r = std::clamp(param, -1.0, 1.0);
    } else {
      k = std::min<int64_t>(static_cast<int64_t>(param), static_cast<int64_t>(in.size()));
      if (k < 1) skip_step = true;
    }
    size_t groups_remaining = groups.size();
    for (size_t si = 0; si < in.size() && !skip_step; ++si) {
      double f;
      if (!cur.At(si, ts, &f)) continue;
      const size_t gi = static_cast<size_t>(group_of[si]);
      auto& h = heaps[gi];
      const HeapItem item{static_cast<int>(si), f};
      if (!seen[gi]) {
        seen[gi] = 1;
        h.clear();
        switch (op) {
          case AggregateOp::kLimitRatio: {
            const double off = ratio_offset(si);
            if ((r >= 0 && off < r) || (r < 0 && off >= 1.0 + r)) HeapPush(h, item, LessNaNFirst);
            break;
          }
          case AggregateOp::kBottomk:
            HeapPush(h, item, GreaterNaNFirst);
            break;
          default:
            HeapPush(h, item, LessNaNFirst);
            break;
        }
        if (op == AggregateOp::kLimitk && static_cast<int64_t>(h.size()) == k) {
          if (--groups_remaining == 0) break;
        }
        continue;
      }
      switch (op) {
        case AggregateOp::kTopk:
          if (static_cast<int64_t>(h.size()) < k) {
            HeapPush(h, item, LessNaNFirst);
          } else if (h[0].f < f || (std::isnan(h[0].f) && !std::isnan(f))) {
            h[0] = item;
            if (k > 1) HeapFix(h, 0, LessNaNFirst);
          }
          break;
        case AggregateOp::kBottomk:
          if (static_cast<int64_t>(h.size()) < k) {
            HeapPush(h, item, GreaterNaNFirst);
          } else if (h[0].f > f || (std::isnan(h[0].f) && !std::isnan(f))) {
            h[0] = item;
            if (k > 1) HeapFix(h, 0, GreaterNaNFirst);
          }
          break;
        case AggregateOp::kLimitk:
          if (static_cast<int64_t>(h.size()) < k) {
            HeapPush(h, item, LessNaNFirst);
            if (static_cast<int64_t>(h.size()) == k && --groups_remaining == 0) {
              si = in.size();  // every group is full
            }
          }
          break;
        case AggregateOp::kLimitRatio: {
          const double off = ratio_offset(si);
          if ((r >= 0 && off < r) || (r < 0 && off >= 1.0 + r)) HeapPush(h, item, LessNaNFirst);
          break;
        }
        default:
          break;
      }
    }
    if (skip_step) continue;
    for (size_t gi = 0; gi < heaps.size(); ++gi) {
      if (!seen[gi]) continue;
      auto& h = heaps[gi];
      if (op == AggregateOp::kTopk) SortReverse(h, LessNaNFirst);
      if (op == AggregateOp::kBottomk) SortReverse(h, GreaterNaNFirst);
      for (const auto& it : h) {
        int& o = out_idx[static_cast<size_t>(it.series)];
        if (o < 0) o = col.IndexOf(in[static_cast<size_t>(it.series)].metric);
        col.AddAt(o, ts, it.f);
      }
    }
  }
  return col.Take();
}

Matrix Evaluator::EvalCountValues(const Aggregate& a, Matrix in) {
  std::string label;
  if (a.param) Eval(*a.param, &label);
  if (label.empty() || !IsValidUtf8(label)) FailExec("invalid label name " + GoQuote(label));
  std::vector<std::string> grouping = a.grouping;
  if (!a.without) grouping.push_back(label);
  std::sort(grouping.begin(), grouping.end());

  SeriesCollector col(ctx_, NumSteps());
  StepCursor cur(in);
  LabelsIndex step_groups;
  std::vector<int> counts;
  for (int64_t ts = start_; ts <= end_; ts += interval_) {
    // Each series builds a label set per step here.
    ctx_.Poll(1 + 8 * static_cast<int64_t>(in.size()));
    step_groups = LabelsIndex();
    counts.clear();
    for (size_t si = 0; si < in.size(); ++si) {
      double f;
      if (!cur.At(si, ts, &f)) continue;
      std::vector<Label> items;
      for (const auto& l : in[si].metric) {
        if (l.name != label) items.push_back(l);
      }
      items.push_back(Label{label, FormatFloat(f, true)});
      const Labels metric = Labels::FromUnsorted(std::move(items));
      bool inserted = false;
      const int g = step_groups.FindOrInsert(GroupLabels(metric, grouping, a.without), &inserted);
      if (inserted) counts.push_back(0);
      counts[static_cast<size_t>(g)]++;
    }
    for (size_t g = 0; g < counts.size(); ++g) {
      col.Add(step_groups.keys()[g], ts, static_cast<double>(counts[g]));
    }
  }
  return col.Take();
}

}  // namespace gpumon::promql::engine_internal
