#include "remote/queue/series_refs.h"

namespace gpumon::remote {

std::optional<SeriesRefs::Series> SeriesRefs::Resolve(uint64_t ref, const Labels& labels) {
  const uint64_t epoch = epoch_.load(std::memory_order_relaxed);
  if (labels.empty()) {
    Stripe& s = stripes_[ref & (kStripes - 1)];
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.by_ref.find(ref);
    if (it == s.by_ref.end()) return std::nullopt;
    it->second.epoch = epoch;
    return Series{ref, it->second.labels, it->second.inner_ref};
  }
  const uint64_t hash = labels.Hash();
  Stripe& s = stripes_[hash & (kStripes - 1)];
  std::lock_guard<std::mutex> lock(s.mu);
  // The caller's ref first: the common case is a cache hit.
  if (ref != 0) {
    auto it = s.by_ref.find(ref);
    if (it != s.by_ref.end() && it->second.labels == labels) {
      it->second.epoch = epoch;
      return Series{ref, it->second.labels, it->second.inner_ref};
    }
  }
  auto [lo, hi] = s.by_hash.equal_range(hash);
  for (auto it = lo; it != hi; ++it) {
    Entry& e = s.by_ref[it->second];
    if (e.labels == labels) {
      e.epoch = epoch;
      return Series{it->second, e.labels, e.inner_ref};
    }
  }
  // Low bits name the stripe, so a bare ref finds its entry.
  const uint64_t fresh = (s.next++ << kStripeBits) | (hash & (kStripes - 1));
  s.by_ref.emplace(fresh, Entry{labels, 0, epoch});
  s.by_hash.emplace(hash, fresh);
  return Series{fresh, labels, 0};
}

void SeriesRefs::SetInner(uint64_t ref, uint64_t inner_ref) {
  Stripe& s = stripes_[ref & (kStripes - 1)];
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.by_ref.find(ref);
  if (it != s.by_ref.end()) it->second.inner_ref = inner_ref;
}

void SeriesRefs::Sweep() {
  const uint64_t current = epoch_.fetch_add(1);
  for (Stripe& s : stripes_) {
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto it = s.by_hash.begin(); it != s.by_hash.end();) {
      auto e = s.by_ref.find(it->second);
      if (e != s.by_ref.end() && e->second.epoch < current) {
        s.by_ref.erase(e);
        it = s.by_hash.erase(it);
      } else {
        ++it;
      }
    }
  }
}

size_t SeriesRefs::size() const {
  size_t n = 0;
  for (const Stripe& s : stripes_) {
    std::lock_guard<std::mutex> lock(s.mu);
    n += s.by_ref.size();
  }
  return n;
}

}  // namespace gpumon::remote
