// MemPostings: the head's inverted index, label (name id, value id) → the
// sorted refs of the series carrying that label, plus the list of every
// series. Ids come from the head's SymbolTable.
//
// Contract:
// - Every list is sorted ascending without duplicates. Refs usually arrive
//   in increasing order (the head assigns them monotonically), so Add is an
//   append; an older ref (WAL replay order) is inserted in place.
// - Removal is batched: Remove filters each touched list once, so
//   truncating many series costs one pass per list rather than one per
//   series.
// - Not synchronized: the head guards it with its index lock.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpumon::tsdb::head {

class MemPostings {
 public:
  using List = std::vector<uint64_t>;
  // label_ids: name, value, name, value, ...
  void Add(uint64_t ref, std::span<const uint32_t> label_ids);
  // Removes `refs` (sorted ascending) from all-postings and from the lists
  // of `pairs` (name id, value id; duplicates allowed). Returns the pairs
  // whose list became empty and was dropped.
  std::vector<std::pair<uint32_t, uint32_t>> Remove(
      std::span<const uint64_t> refs, std::span<const std::pair<uint32_t, uint32_t>> pairs);

  const List* Get(uint32_t name, uint32_t value) const;
  const List& All() const { return all_; }

  // f(value_id, const List&) for every value of `name`, in no order.
  template <typename F>
  void ForEachValue(uint32_t name, F&& f) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return;
    for (const auto& [value, list] : it->second) f(value, list);
  }
  // f(name_id, const ValueMap&) for every label name, in no order.
  using ValueMap = std::unordered_map<uint32_t, List>;
  template <typename F>
  void ForEachName(F&& f) const {
    for (const auto& [name, values] : by_name_) f(name, values);
  }

  size_t MemoryBytes() const;

 private:
  static void Insert(List* list, uint64_t ref);

  std::unordered_map<uint32_t, ValueMap> by_name_;
  List all_;
};

}  // namespace gpumon::tsdb::head
