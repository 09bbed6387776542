// Postings: sorted lists of series references, and the set operations that
// evaluate label matchers over them.
//
// Contract: every input span is sorted ascending without duplicates, and so
// is every result. The functions are generic over uint64 references so the
// in-memory head index and the on-disk block index share them. Intersect
// gallops through the longer list when the sizes differ a lot, since a
// selective matcher is usually intersected with a broad one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpumon::tsdb::index {

using Postings = std::vector<uint64_t>;

// a ∩ b.
Postings Intersect(std::span<const uint64_t> a, std::span<const uint64_t> b);
// ∩ of all lists, smallest first; an empty input gives an empty result.
Postings IntersectAll(std::span<const std::span<const uint64_t>> lists);
// Whether a ∩ b is non-empty, without building it.
bool Intersects(std::span<const uint64_t> a, std::span<const uint64_t> b);
// a ∪ b.
Postings Merge(std::span<const uint64_t> a, std::span<const uint64_t> b);
// ∪ of all lists (k-way merge through a heap).
Postings MergeAll(std::span<const std::span<const uint64_t>> lists);
// a \ b.
Postings Without(std::span<const uint64_t> a, std::span<const uint64_t> b);

// Collects references below `universe` into a bitmap and reads them back in
// order: the cheap way to take the union of many lists over a dense
// reference space (a block numbers its series 0..n-1). References at or
// above `universe` are ignored.
class DenseUnion {
 public:
  explicit DenseUnion(uint64_t universe) : universe_(universe), words_((universe + 63) / 64) {}
  void Add(uint64_t ref) {
    if (ref < universe_) words_[ref >> 6] |= uint64_t{1} << (ref & 63);
  }
  void Add(std::span<const uint64_t> refs) {
    for (uint64_t r : refs) Add(r);
  }
  Postings Take() const;

 private:
  uint64_t universe_;
  std::vector<uint64_t> words_;
};

}  // namespace gpumon::tsdb::index
