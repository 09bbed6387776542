// sort, sort_desc (by value, NaN last) and sort_by_label(_desc) (natural
// order of the given labels, then the whole label set), as Prometheus.
// They keep the metric name. Stable sorts: Prometheus's order among equal
// keys is unspecified, a stable one at least is deterministic.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Splits into maximal runs of digits / non-digits.
void Chunks(std::string_view s, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i + 1;
    while (j < s.size() && IsDigit(s[j]) == IsDigit(s[i])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
}

bool ParseInt(std::string_view s, int64_t& v) {
  if (s.empty() || !IsDigit(s.front())) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

// Natural order as the Go natsort package Prometheus uses: chunk-wise,
// numeric chunks compared as integers. Reproduces its quirks (a string
// whose chunks all equal the other's prefix sorts first).
bool NaturalLess(std::string_view a, std::string_view b) {
  thread_local std::vector<std::string_view> ca, cb;
  Chunks(a, ca);
  Chunks(b, cb);
  for (size_t i = 0; i < ca.size(); ++i) {
    if (i >= cb.size()) return false;
    int64_t ia = 0, ib = 0;
    const bool equal_chunks = [&] {
      if (ParseInt(ca[i], ia) && ParseInt(cb[i], ib)) return ia == ib;
      return ca[i] == cb[i];
    }();
    if (equal_chunks) {
      if (i == ca.size() - 1) return true;
      if (i == cb.size() - 1) return false;
      continue;
    }
    if (ParseInt(ca[i], ia) && ParseInt(cb[i], ib)) return ia < ib;
    return ca[i] < cb[i];
  }
  return false;
}

namespace {

Status ByValue(const FunctionArgs& a, Vector& out, bool desc) {
  const Vector* in = VectorArg(a, 0);
  if (in == nullptr) return Status::Ok();
  const size_t from = out.size();
  out.insert(out.end(), in->begin(), in->end());
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(),
                   [desc](const Sample& x, const Sample& y) {
                     if (std::isnan(x.f)) return false;
                     if (std::isnan(y.f)) return true;
                     return desc ? x.f > y.f : x.f < y.f;
                   });
  return Status::Ok();
}

Status ByLabel(const FunctionArgs& a, Vector& out, bool desc) {
  const Vector* in = VectorArg(a, 0);
  if (in == nullptr) return Status::Ok();
  const size_t from = out.size();
  out.insert(out.end(), in->begin(), in->end());
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(),
                   [&a, desc](const Sample& x, const Sample& y) {
                     for (size_t i = 1; i < a.args.size(); ++i) {
                       std::string_view name = StringArg(a, i);
                       std::string_view vx = x.metric.Get(name), vy = y.metric.Get(name);
                       if (vx == vy) continue;
                       const bool less = NaturalLess(vx, vy);
                       return desc ? !less : less;
                     }
                     return desc ? y.metric < x.metric : x.metric < y.metric;
                   });
  return Status::Ok();
}

}  // namespace

Status Sort(const FunctionArgs& a, Vector& out) { return ByValue(a, out, false); }
Status SortDesc(const FunctionArgs& a, Vector& out) { return ByValue(a, out, true); }
Status SortByLabel(const FunctionArgs& a, Vector& out) { return ByLabel(a, out, false); }
Status SortByLabelDesc(const FunctionArgs& a, Vector& out) { return ByLabel(a, out, true); }

}  // namespace gpumon::promql::fn
