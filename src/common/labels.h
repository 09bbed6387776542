// Labels: a series identity, a set of (name, value) pairs sorted by name
// with unique names. "__name__" holds the metric name.
//
// Contract: a Labels value is always sorted and free of duplicate names;
// the builder enforces it. Comparison is lexicographic over the pairs, the
// order Prometheus uses. Hash() is stable across runs and platforms (it is
// written to disk), xxhash-like quality is not required, only stability.
#pragma once

#include <cstdint>
#include <initializer_list>
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

  const std::vector<Label>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

  // Value of a label, or "" when absent (as Prometheus treats absence).
  std::string_view Get(std::string_view name) const;
  bool Has(std::string_view name) const;

  uint64_t Hash() const;
  // {__name__="x", a="b"} rendered as x{a="b"}.
  std::string ToString() const;

  bool operator==(const Labels&) const = default;
  auto operator<=>(const Labels&) const = default;

 private:
  std::vector<Label> items_;
};

}  // namespace gpumon
