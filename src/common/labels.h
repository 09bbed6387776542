// Labels: a series identity, a set of (name, value) pairs sorted by name
// with unique names. "__name__" holds the metric name.
//
// Contract: a Labels value is always sorted and free of duplicate names;
// the builder enforces it. A Labels value is immutable once built and shares
// its storage between copies, so copying one (the query engine does, per
// sample) costs a reference count, not an allocation per label. Comparison is lexicographic over
// the pairs, the order Prometheus uses. Hash() is stable across runs and platforms (it is written
// to disk), xxhash-like quality is not required, only stability.
#pragma once

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

  // Computed once when the value is built.
  uint64_t Hash() const { return rep_ ? rep_->hash : EmptyHash(); }
  // {__name__="x", a="b"} rendered as x{a="b"}.
  std::string ToString() const;

  bool operator==(const Labels& o) const {
    return rep_ == o.rep_ || (Hash() == o.Hash() && items() == o.items());
  }
  std::strong_ordering operator<=>(const Labels& o) const { return items() <=> o.items(); }

 private:
  struct Rep {
    std::vector<Label> items;
    uint64_t hash = 0;
  };
  static const std::vector<Label>& EmptyItems();
  static uint64_t HashOf(const std::vector<Label>& items);
  static uint64_t EmptyHash();
  std::shared_ptr<const Rep> rep_;  // null: no labels
};

}  // namespace gpumon
