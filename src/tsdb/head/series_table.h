// SeriesTable: an open-addressing hash set of Series pointers: the head's
// lookup by label hash (split into lock stripes by the caller).
//
// Contract: linear probing with backward-shift deletion, so there are no
// tombstones and a slot costs one pointer (8 bytes at a load of at most
// 3/4). KeyHash(const Series*) must be the hash the caller probes with.
// Several series may share a hash; Find returns the first one the predicate
// accepts. Not synchronized.
#pragma once

#include <cstdint>
#include <vector>

#include "tsdb/head/series.h"

namespace gpumon::tsdb::head {

// A 64-bit finalizer (from splitmix64): spreads sequential refs.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

template <typename KeyHash>
class SeriesTable {
 public:
  // The low bits of hashes pick the stripe, so slots use the high bits.
  static size_t Slot(uint64_t h, size_t mask) { return static_cast<size_t>(h >> 20) & mask; }

  template <typename Pred>
  Series* Find(uint64_t h, Pred&& pred) const {
    if (slots_.empty()) return nullptr;
    const size_t mask = slots_.size() - 1;
    for (size_t i = Slot(h, mask);; i = (i + 1) & mask) {
      Series* s = slots_[i];
      if (s == nullptr) return nullptr;
      if (KeyHash()(s) == h && pred(s)) return s;
    }
  }

  void Insert(Series* s) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    Place(&slots_, s);
    ++size_;
  }

  bool Erase(const Series* s) {
    if (slots_.empty()) return false;
    const size_t mask = slots_.size() - 1;
    size_t i = Slot(KeyHash()(s), mask);
    for (;; i = (i + 1) & mask) {
      if (slots_[i] == nullptr) return false;
      if (slots_[i] == s) break;
    }
    // Backward shift: move later entries of the cluster into the hole when
    // their home slot is not between the hole and their position.
    size_t hole = i;
    for (size_t j = (i + 1) & mask; slots_[j] != nullptr; j = (j + 1) & mask) {
      const size_t home = Slot(KeyHash()(slots_[j]), mask);
      const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = nullptr;
    --size_;
    if (size_ == 0) std::vector<Series*>().swap(slots_);
    return true;
  }

  template <typename F>
  void ForEach(F&& f) const {
    for (Series* s : slots_) {
      if (s != nullptr) f(s);
    }
  }

  size_t size() const { return size_; }
  size_t MemoryBytes() const { return slots_.capacity() * sizeof(Series*); }

 private:
  static void Place(std::vector<Series*>* slots, Series* s) {
    const size_t mask = slots->size() - 1;
    size_t i = Slot(KeyHash()(s), mask);
    while ((*slots)[i] != nullptr) i = (i + 1) & mask;
    (*slots)[i] = s;
  }
  void Grow() {
    std::vector<Series*> bigger(slots_.empty() ? 8 : slots_.size() * 2, nullptr);
    for (Series* s : slots_) {
      if (s != nullptr) Place(&bigger, s);
    }
    slots_.swap(bigger);
  }

  std::vector<Series*> slots_;
  size_t size_ = 0;
};

struct LabelsKeyHash {
  uint64_t operator()(const Series* s) const { return s->hash(); }
};

}  // namespace gpumon::tsdb::head
