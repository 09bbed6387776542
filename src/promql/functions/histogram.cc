// histogram_quantile, histogram_quantiles and histogram_fraction over
// classic histograms (series of cumulative `le` buckets), as Prometheus's
// BucketQuantile/BucketFraction. Native histograms are not stored here, so
// the native-only functions (histogram_count/sum/avg/stddev/stdvar) have
// nothing to work on and return nothing, as Prometheus does for floats.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

constexpr std::string_view kBucketLabel = "le";
constexpr double kSmallDeltaTolerance = 1e-12;

struct Bucket {
  double upper = 0;
  double count = 0;
};

// One classic histogram: the samples sharing every label but `le`.
struct Group {
  const Labels* source = nullptr;  // any member, for the output labels
  size_t first_bucket = 0;         // buckets of a group are contiguous after sorting
  size_t num_buckets = 0;
};

// Go's strconv.ParseFloat: the whole string, no surrounding blanks.
bool ParseGoFloat(std::string_view s, double& v) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return false;
  std::string buf(s);
  // Go accepts "Inf"/"+Inf"/"infinity"/"NaN" in any case, as does strtod;
  // reject the forms strtod accepts but Go does not (nan(...)).
  if (buf.find('(') != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return false;
  // Go rejects out-of-range values rather than returning ±Inf/0.
  if (errno == ERANGE && std::isinf(v)) return false;
  return true;
}

uint64_t HashWithoutLe(const Labels& l) {
  uint64_t h = 1469598103934665603ULL;
  for (const auto& lab : l) {
    if (lab.name == kBucketLabel) continue;
    for (unsigned char c : lab.name) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
    for (unsigned char c : lab.value) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xfe) * 1099511628211ULL;
  }
  return h;
}

bool EqualWithoutLe(const Labels& x, const Labels& y) {
  auto ix = x.begin(), iy = y.begin();
  while (true) {
    while (ix != x.end() && ix->name == kBucketLabel) ++ix;
    while (iy != y.end() && iy->name == kBucketLabel) ++iy;
    if (ix == x.end() || iy == y.end()) return ix == x.end() && iy == y.end();
    if (*ix != *iy) return false;
    ++ix;
    ++iy;
  }
}

Labels OutputLabels(const Labels& l) {
  std::vector<Label> items;
  items.reserve(l.size());
  for (const auto& lab : l) {
    if (lab.name != kBucketLabel && lab.name != kMetricName) items.push_back(lab);
  }
  return Labels::FromSorted(std::move(items));
}

std::string WithMetricName(std::string msg, std::string_view name) {
  if (!name.empty()) msg += " for metric name " + QuoteGo(name);
  return msg;
}

// Groups the vector's samples into classic histograms. Buckets of group i
// end up in buckets[groups[i].first_bucket ...]. Samples whose `le` does
// not parse are skipped with a warning.
class Grouper {
 public:
  void Build(const FunctionArgs& a, const Vector& in) {
    groups_.clear();
    buckets_.clear();
    index_.clear();
    tmp_.clear();
    for (const Sample& s : in) {
      double upper = 0;
      if (!ParseGoFloat(s.metric.Get(kBucketLabel), upper)) {
        if (a.annotations != nullptr) {
          a.annotations->AddWarning(WithMetricName(
              "PromQL warning: bucket label \"le\" is missing or has a malformed value of " +
                  QuoteGo(s.metric.Get(kBucketLabel)),
              s.metric.Get(kMetricName)));
        }
        continue;
      }
      const uint64_t h = HashWithoutLe(s.metric);
      size_t g = groups_.size();
      auto [lo, hi] = index_.equal_range(h);
      for (auto it = lo; it != hi; ++it) {
        if (EqualWithoutLe(*groups_[it->second].source, s.metric)) {
          g = it->second;
          break;
        }
      }
      if (g == groups_.size()) {
        groups_.push_back(Group{&s.metric, 0, 0});
        index_.emplace(h, g);
      }
      groups_[g].num_buckets++;
      tmp_.push_back({g, Bucket{upper, s.f}});
    }
    // Lay the buckets out group by group.
    size_t offset = 0;
    for (auto& g : groups_) {
      g.first_bucket = offset;
      offset += g.num_buckets;
      g.num_buckets = 0;
    }
    buckets_.resize(offset);
    for (const auto& [g, b] : tmp_) {
      Group& grp = groups_[g];
      buckets_[grp.first_bucket + grp.num_buckets++] = b;
    }
  }

  const std::vector<Group>& groups() const { return groups_; }
  // A scratch copy of the group's buckets (the computations reorder and
  // rewrite them).
  std::vector<Bucket>& Buckets(const Group& g) {
    scratch_.assign(buckets_.begin() + static_cast<std::ptrdiff_t>(g.first_bucket),
                    buckets_.begin() + static_cast<std::ptrdiff_t>(g.first_bucket + g.num_buckets));
    return scratch_;
  }

 private:
  std::vector<Group> groups_;
  std::vector<Bucket> buckets_;
  std::vector<Bucket> scratch_;
  std::vector<std::pair<size_t, Bucket>> tmp_;
  std::unordered_multimap<uint64_t, size_t> index_;
};

Grouper& ThreadGrouper() {
  thread_local Grouper g;
  return g;
}

// Sorts by upper bound and merges equal bounds (e.g. le="1" and le="1.0").
void SortAndCoalesce(std::vector<Bucket>& b) {
  std::sort(b.begin(), b.end(), [](const Bucket& x, const Bucket& y) { return x.upper < y.upper; });
  size_t w = 0;
  for (size_t i = 1; i < b.size(); ++i) {
    if (b[i].upper == b[w].upper) {
      b[w].count += b[i].count;
    } else {
      b[++w] = b[i];
    }
  }
  b.resize(w + 1);
}

bool AlmostEqual(double a, double b, double epsilon) {
  if (std::isnan(a) && std::isnan(b)) return true;
  if (a == b) return true;
  constexpr double kMinNormal = 2.2250738585072014e-308;
  const double abs_sum = std::fabs(a) + std::fabs(b);
  const double diff = std::fabs(a - b);
  if (a == 0 || b == 0 || abs_sum < kMinNormal) return diff < epsilon * kMinNormal;
  return diff / std::min(abs_sum, 1.7976931348623157e308) < epsilon;
}

// Cumulative counts must not decrease; ignore float noise and flatten real
// decreases. Returns whether a real decrease had to be fixed.
bool EnsureMonotonic(std::vector<Bucket>& b) {
  bool forced = false;
  double prev = b[0].count;
  for (size_t i = 1; i < b.size(); ++i) {
    const double cur = b[i].count;
    if (cur == prev) continue;
    if (AlmostEqual(prev, cur, kSmallDeltaTolerance)) {
      b[i].count = prev;
      continue;
    }
    if (cur < prev) {
      b[i].count = prev;
      forced = true;
      continue;
    }
    prev = cur;
  }
  return forced;
}

double BucketQuantile(double q, std::vector<Bucket>& b, bool& forced) {
  forced = false;
  if (std::isnan(q)) return std::nan("");
  if (q < 0) return -HUGE_VAL;
  if (q > 1) return HUGE_VAL;
  SortAndCoalesce(b);
  if (!(std::isinf(b.back().upper) && b.back().upper > 0)) return std::nan("");
  forced = EnsureMonotonic(b);
  if (b.size() < 2) return std::nan("");
  const double observations = b.back().count;
  if (observations == 0) return std::nan("");
  double rank = q * observations;
  // First bucket (excluding +Inf) whose cumulative count reaches the rank.
  size_t i = std::partition_point(b.begin(), b.end() - 1,
                                  [rank](const Bucket& x) { return x.count < rank; }) -
             b.begin();
  if (i == b.size() - 1) return b[b.size() - 2].upper;
  if (i == 0 && b[0].upper <= 0) return b[0].upper;
  double start = 0;
  const double end = b[i].upper;
  double count = b[i].count;
  if (i > 0) {
    start = b[i - 1].upper;
    count -= b[i - 1].count;
    rank -= b[i - 1].count;
  }
  return start + (end - start) * (rank / count);
}

double BucketFraction(double lower, double upper, std::vector<Bucket>& b) {
  SortAndCoalesce(b);
  if (!(std::isinf(b.back().upper) && b.back().upper > 0)) return std::nan("");
  const double count = b.back().count;
  if (count == 0 || std::isnan(lower) || std::isnan(upper)) return std::nan("");
  if (lower >= upper) return 0;
  double rank = 0, lower_rank = 0, upper_rank = 0;
  bool lower_set = false, upper_set = false;
  // With a positive first bound assume no negative observations.
  double lower_bound = b[0].upper <= 0 ? -HUGE_VAL : 0.0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i > 0) lower_bound = b[i - 1].upper;
    const double upper_bound = b[i].upper;
    auto interpolate = [&](double v) {
      // No interpolation inside a bucket of infinite width.
      if (std::isinf(lower_bound) && lower_bound < 0) return b[i].count;
      return rank + (b[i].count - rank) * (v - lower_bound) / (upper_bound - lower_bound);
    };
    if (!lower_set && lower_bound >= lower) {
      lower_rank = rank;
      lower_set = true;
    }
    if (!upper_set && lower_bound >= upper) {
      upper_rank = rank;
      upper_set = true;
    }
    if (lower_set && upper_set) break;
    if (!lower_set && lower_bound < lower && upper_bound > lower) {
      lower_rank = interpolate(lower);
      lower_set = true;
    }
    if (!upper_set && lower_bound < upper && upper_bound > upper) {
      upper_rank = interpolate(upper);
      upper_set = true;
    }
    if (lower_set && upper_set) break;
    rank = b[i].count;
  }
  if (!lower_set || lower_rank > count) lower_rank = count;
  if (!upper_set || upper_rank > count) upper_rank = count;
  return (upper_rank - lower_rank) / count;
}

void MonotonicityInfo(const FunctionArgs& a, const Group& g) {
  if (a.annotations == nullptr) return;
  a.annotations->AddInfo(WithMetricName(
      "PromQL info: input to histogram_quantile needed to be fixed for monotonicity (see "
      "https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile)",
      g.source->Get(kMetricName)));
}

// Go's labels.FormatOpenMetricsFloat: %g, plus ".0" for integral values.
std::string OpenMetricsFloat(double q) {
  std::string s = FormatG(q);
  if (std::isnan(q) || std::isinf(q)) return s;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

// histogram_quantile(φ, buckets)
Status HistogramQuantile(const FunctionArgs& a, Vector& out) {
  const Vector* in = VectorArg(a, 1);
  if (in == nullptr) return Status::Ok();
  const double q = ScalarArg(a, 0, std::nan(""));
  WarnInvalidQuantile(a, q);
  Grouper& grouper = ThreadGrouper();
  grouper.Build(a, *in);
  for (const Group& g : grouper.groups()) {
    bool forced = false;
    const double v = BucketQuantile(q, grouper.Buckets(g), forced);
    if (forced) MonotonicityInfo(a, g);
    out.push_back(Sample{OutputLabels(*g.source), a.ts, v});
  }
  return Status::Ok();
}

// histogram_quantiles(buckets, "label", φ0, φ...): one output per φ, told
// apart by the label.
Status HistogramQuantiles(const FunctionArgs& a, Vector& out) {
  const Vector* in = VectorArg(a, 0);
  if (in == nullptr) return Status::Ok();
  const std::string label(StringArg(a, 1));
  for (size_t i = 2; i < a.args.size(); ++i) WarnInvalidQuantile(a, ScalarArg(a, i, 0));
  Grouper& grouper = ThreadGrouper();
  grouper.Build(a, *in);
  for (size_t i = 2; i < a.args.size(); ++i) {
    const double q = ScalarArg(a, i, std::nan(""));
    const std::string qs = OpenMetricsFloat(q);
    for (const Group& g : grouper.groups()) {
      bool forced = false;
      const double v = BucketQuantile(q, grouper.Buckets(g), forced);
      if (forced) MonotonicityInfo(a, g);
      std::vector<Label> items = OutputLabels(*g.source).items();
      items.push_back(Label{label, qs});
      out.push_back(Sample{Labels::FromUnsorted(std::move(items)), a.ts, v});
    }
  }
  return Status::Ok();
}

// histogram_fraction(lower, upper, buckets)
Status HistogramFraction(const FunctionArgs& a, Vector& out) {
  const Vector* in = VectorArg(a, 2);
  if (in == nullptr) return Status::Ok();
  const double lower = ScalarArg(a, 0, std::nan(""));
  const double upper = ScalarArg(a, 1, std::nan(""));
  Grouper& grouper = ThreadGrouper();
  grouper.Build(a, *in);
  for (const Group& g : grouper.groups()) {
    out.push_back(
        Sample{OutputLabels(*g.source), a.ts, BucketFraction(lower, upper, grouper.Buckets(g))});
  }
  return Status::Ok();
}

Status NativeHistogramOnly(const FunctionArgs&, Vector&) { return Status::Ok(); }

}  // namespace gpumon::promql::fn
