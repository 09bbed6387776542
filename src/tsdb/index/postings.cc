#include "tsdb/index/postings.h"

#include <algorithm>
#include <bit>
#include <queue>
#include <utility>

namespace gpumon::tsdb::index {
namespace {

// First position in [first, s.size()) whose value is >= v: exponential probe
// then binary search, so walking a long list in order costs O(log gap).
size_t Gallop(std::span<const uint64_t> s, size_t first, uint64_t v) {
  size_t step = 1;
  size_t lo = first;
  size_t hi = first;
  while (hi < s.size() && s[hi] < v) {
    lo = hi + 1;
    hi = first + step;
    step <<= 1;
  }
  hi = std::min(hi, s.size());
  return static_cast<size_t>(std::lower_bound(s.begin() + lo, s.begin() + hi, v) - s.begin());
}

}  // namespace

Postings Intersect(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  if (a.size() > b.size()) std::swap(a, b);
  Postings out;
  if (a.empty()) return out;
  out.reserve(a.size());
  if (b.size() / a.size() >= 16) {
    size_t j = 0;
    for (uint64_t v : a) {
      j = Gallop(b, j, v);
      if (j == b.size()) break;
      if (b[j] == v) out.push_back(v);
    }
    return out;
  }
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      out.push_back(a[i]);
      ++i;
      ++j;
    }
  }
  return out;
}

Postings IntersectAll(std::span<const std::span<const uint64_t>> lists) {
  if (lists.empty()) return {};
  std::vector<std::span<const uint64_t>> sorted(lists.begin(), lists.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.size() < y.size(); });
  Postings acc(sorted[0].begin(), sorted[0].end());
  for (size_t k = 1; k < sorted.size() && !acc.empty(); ++k) acc = Intersect(acc, sorted[k]);
  return acc;
}

bool Intersects(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  if (a.size() > b.size()) std::swap(a, b);
  if (a.empty()) return false;
  if (a.back() < b.front() || b.back() < a.front()) return false;
  size_t j = 0;
  for (uint64_t v : a) {
    j = Gallop(b, j, v);
    if (j == b.size()) return false;
    if (b[j] == v) return true;
  }
  return false;
}

Postings Merge(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  Postings out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  // set_union keeps one copy of elements present in both, so no duplicates.
  return out;
}

Postings MergeAll(std::span<const std::span<const uint64_t>> lists) {
  if (lists.empty()) return {};
  if (lists.size() == 1) return Postings(lists[0].begin(), lists[0].end());
  if (lists.size() == 2) return Merge(lists[0], lists[1]);
  size_t total = 0;
  for (const auto& l : lists) total += l.size();
  Postings out;
  out.reserve(total);
  // (value, list index, position) min-heap.
  using Item = std::pair<uint64_t, std::pair<size_t, size_t>>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  for (size_t k = 0; k < lists.size(); ++k) {
    if (!lists[k].empty()) heap.push({lists[k][0], {k, 0}});
  }
  while (!heap.empty()) {
    auto [v, pos] = heap.top();
    heap.pop();
    if (out.empty() || out.back() != v) out.push_back(v);
    size_t next = pos.second + 1;
    if (next < lists[pos.first].size()) heap.push({lists[pos.first][next], {pos.first, next}});
  }
  return out;
}

Postings Without(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  Postings out;
  out.reserve(a.size());
  if (!b.empty() && b.size() / std::max<size_t>(a.size(), 1) >= 16) {
    size_t j = 0;
    for (uint64_t v : a) {
      j = Gallop(b, j, v);
      if (j == b.size() || b[j] != v) out.push_back(v);
    }
    return out;
  }
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

Postings DenseUnion::Take() const {
  size_t count = 0;
  for (uint64_t w : words_) count += static_cast<size_t>(std::popcount(w));
  Postings out;
  out.reserve(count);
  for (size_t i = 0; i < words_.size(); ++i) {
    uint64_t w = words_[i];
    while (w != 0) {
      out.push_back(i * 64 + static_cast<uint64_t>(std::countr_zero(w)));
      w &= w - 1;
    }
  }
  return out;
}

}  // namespace gpumon::tsdb::index
