// Labels: a series identity, a set of (name, value) pairs sorted by name
// with unique names. "__name__" holds the metric name.
//
// Contract: a Labels value is always sorted and free of duplicate names;
// the builder enforces it. A Labels value is immutable once built and shares
// its storage between copies, so copying one (the query engine does, per
// sample) costs a reference count, not an allocation per label. Comparison is lexicographic over
// the pairs, the order Prometheus uses. Hash() is stable across runs and platforms (it is written
// to disk), xxhash-like quality is not required, only stability. The hash is computed on the first
// Hash() call and kept with the shared storage (safe from any thread), so label sets that are
// never hashed (most series a query reads) never pay for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpumon {

inline constexpr std::string_view kMetricName = "__name__";

struct Label {
  std::string name;
  std::string value;
  bool operator==(const Label&) const = default;
  auto operator<=>(const Label&) const = default;
};

class Labels {
 public:
  Labels() = default;
  // Sorts; for duplicate names the last one wins.
  Labels(std::initializer_list<Label> labels);
  static Labels FromUnsorted(std::vector<Label> labels);
  // Trusts the caller: `labels` must already be sorted and unique.
  static Labels FromSorted(std::vector<Label> labels);

  const std::vector<Label>& items() const { return rep_ ? rep_->items : EmptyItems(); }
  size_t size() const { return items().size(); }
  bool empty() const { return items().empty(); }
  auto begin() const { return items().begin(); }
  auto end() const { return items().end(); }

  // Value of a label, or "" when absent (as Prometheus treats absence).
  std::string_view Get(std::string_view name) const;
  bool Has(std::string_view name) const;

  // Computed on first use, then cached in the shared storage.
  uint64_t Hash() const {
    if (!rep_) return EmptyHash();
    if (rep_->hashed.load(std::memory_order_acquire)) {
      return rep_->hash.load(std::memory_order_relaxed);
    }
    return ComputeHash();
  }
  // {__name__="x", a="b"} rendered as x{a="b"}.
  std::string ToString() const;

  // Uses the hashes only when both are known: hashing just to compare would
  // read every byte anyway.
  bool operator==(const Labels& o) const {
    if (rep_ == o.rep_) return true;
    if (rep_ && o.rep_ && rep_->hashed.load(std::memory_order_acquire) &&
        o.rep_->hashed.load(std::memory_order_acquire) &&
        rep_->hash.load(std::memory_order_relaxed) !=
            o.rep_->hash.load(std::memory_order_relaxed)) {
      return false;
    }
    return items() == o.items();
  }
  std::strong_ordering operator<=>(const Labels& o) const { return items() <=> o.items(); }

 private:
  struct Rep {
    explicit Rep(std::vector<Label> l) : items(std::move(l)) {}
    std::vector<Label> items;
    // Racing first Hash() calls store the same value; `hashed` publishes it.
    mutable std::atomic<uint64_t> hash{0};
    mutable std::atomic<bool> hashed{false};
  };
  uint64_t ComputeHash() const;
  static const std::vector<Label>& EmptyItems();
  static uint64_t HashOf(const std::vector<Label>& items);
  static uint64_t EmptyHash();
  std::shared_ptr<const Rep> rep_;  // null: no labels
};

}  // namespace gpumon
