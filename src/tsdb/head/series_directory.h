// SeriesDirectory: the head's ref → series map. Refs are assigned densely
// and monotonically, so the directory is a two-level array indexed by ref:
// a lookup is two loads, and the series a scrape appends to (created
// together, so with neighbouring refs) share directory cache lines and lock
// stripes. That matters at a million series, where every cache miss on the
// append path costs as much as the encoding itself.
//
// Contract:
// - Refs are 1 .. kMaxRef; Set fails beyond it.
// - Set and Clear need LockFor(ref) held; so does any caller that must not
//   race garbage collection of that series (the head registers appenders on
//   a series under this lock).
// - Get and ForEach read atomically and need no lock, but the caller must
//   keep the series and the directory's blocks alive: the head only frees
//   series and empty blocks while holding its apply lock exclusively.
// - FreeEmptyBlocks releases blocks whose refs are all cleared (series
//   churn). It unpublishes them, then takes every stripe lock once, one at a
//   time, so that any lookup that may still hold a pointer to such a block
//   has finished before the block is deleted.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace gpumon::tsdb::head {

class Series;

class SeriesDirectory {
 public:
  static constexpr int kBlockBits = 12;  // 4096 refs (32 KiB) per block
  static constexpr int kTopBits = 20;
  static constexpr uint64_t kMaxRef = (uint64_t{1} << (kBlockBits + kTopBits)) - 1;

  SeriesDirectory();
  ~SeriesDirectory();  // frees blocks, not series
  SeriesDirectory(const SeriesDirectory&) = delete;
  SeriesDirectory& operator=(const SeriesDirectory&) = delete;

  std::mutex& LockFor(uint64_t ref) const { return locks_[(ref >> 3) & (kLocks - 1)].mu; }

  Series* Get(uint64_t ref) const {
    if (ref == 0 || ref > kMaxRef) return nullptr;
    const Block* b = top_[ref >> kBlockBits].load(std::memory_order_acquire);
    if (b == nullptr) return nullptr;
    return b->slots[ref & (kBlockSize - 1)].load(std::memory_order_acquire);
  }
  // False when ref is 0 or beyond kMaxRef. Also takes an internal lock
  // (series creation is rare next to lookups).
  bool Set(uint64_t ref, Series* s);
  void Clear(uint64_t ref);

  // f(Series*) for every series, in ref order.
  template <typename F>
  void ForEach(F&& f) const {
    const uint64_t end = (max_ref_.load(std::memory_order_acquire) >> kBlockBits) + 1;
    for (uint64_t i = 0; i < end; ++i) {
      const Block* b = top_[i].load(std::memory_order_acquire);
      if (b == nullptr) continue;
      for (const auto& slot : b->slots) {
        if (Series* s = slot.load(std::memory_order_acquire)) f(s);
      }
    }
  }

  void FreeEmptyBlocks();
  size_t MemoryBytes() const;

 private:
  static constexpr uint64_t kBlockSize = uint64_t{1} << kBlockBits;
  static constexpr size_t kLocks = 4096;
  struct Block {
    std::atomic<Series*> slots[kBlockSize] = {};
    uint32_t live = 0;  // under blocks_mu_
  };
  struct Lock {
    mutable std::mutex mu;
  };

  // Top level: 8 MiB of address space, allocated zeroed so untouched pages
  // cost no memory.
  std::atomic<Block*>* top_;
  std::unique_ptr<Lock[]> locks_;
  std::mutex blocks_mu_;  // allocating, filling and freeing blocks
  std::atomic<uint64_t> max_ref_{0};
  std::atomic<size_t> blocks_{0};
};

}  // namespace gpumon::tsdb::head
