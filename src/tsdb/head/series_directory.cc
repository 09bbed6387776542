#include "tsdb/head/series_directory.h"

#include <cstdlib>
#include <new>
#include <vector>

namespace gpumon::tsdb::head {

namespace {
constexpr size_t kTopEntries = size_t{1} << SeriesDirectory::kTopBits;
}

SeriesDirectory::SeriesDirectory() : locks_(new Lock[kLocks]) {
  // calloc maps fresh zero pages for a block this large, so only the pages
  // that hold live blocks become resident; the atomics are then created in
  // place (their zero state is a null pointer).
  void* mem = std::calloc(kTopEntries, sizeof(std::atomic<Block*>));
  if (mem == nullptr) throw std::bad_alloc();
  static_assert(sizeof(std::atomic<Block*>) == sizeof(Block*));
  top_ = static_cast<std::atomic<Block*>*>(mem);
}

SeriesDirectory::~SeriesDirectory() {
  const uint64_t end = (max_ref_.load() >> kBlockBits) + 1;
  for (uint64_t i = 0; i < end; ++i) delete top_[i].load();
  std::free(top_);
}

bool SeriesDirectory::Set(uint64_t ref, Series* s) {
  if (ref == 0 || ref > kMaxRef) return false;
  std::atomic<Block*>& entry = top_[ref >> kBlockBits];
  Block* b = entry.load(std::memory_order_acquire);
  if (b == nullptr) {
    std::lock_guard lock(alloc_mu_);
    b = entry.load(std::memory_order_acquire);
    if (b == nullptr) {
      b = new Block();
      entry.store(b, std::memory_order_release);
      blocks_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  auto& slot = b->slots[ref & (kBlockSize - 1)];
  if (slot.load(std::memory_order_relaxed) == nullptr)
    b->live.fetch_add(1, std::memory_order_relaxed);
  slot.store(s, std::memory_order_release);
  uint64_t m = max_ref_.load(std::memory_order_relaxed);
  while (m < ref && !max_ref_.compare_exchange_weak(m, ref, std::memory_order_release)) {
  }
  return true;
}

void SeriesDirectory::Clear(uint64_t ref) {
  if (ref == 0 || ref > kMaxRef) return;
  Block* b = top_[ref >> kBlockBits].load(std::memory_order_acquire);
  if (b == nullptr) return;
  auto& slot = b->slots[ref & (kBlockSize - 1)];
  if (slot.load(std::memory_order_relaxed) == nullptr) return;
  slot.store(nullptr, std::memory_order_release);
  b->live.fetch_sub(1, std::memory_order_relaxed);
}

void SeriesDirectory::FreeEmptyBlocks() {
  // Every stripe lock: no Set can be filling a block while it is freed.
  std::vector<std::unique_lock<std::mutex>> held;
  held.reserve(kLocks);
  for (size_t i = 0; i < kLocks; ++i) held.emplace_back(locks_[i].mu);
  std::lock_guard alloc(alloc_mu_);
  const uint64_t end = (max_ref_.load(std::memory_order_relaxed) >> kBlockBits) + 1;
  for (uint64_t i = 0; i < end; ++i) {
    Block* b = top_[i].load(std::memory_order_relaxed);
    if (b != nullptr && b->live.load(std::memory_order_relaxed) == 0) {
      top_[i].store(nullptr, std::memory_order_release);
      delete b;
      blocks_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
}

size_t SeriesDirectory::MemoryBytes() const {
  // Blocks, the resident part of the top level (one page per 512 blocks
  // of refs in use), the locks.
  const uint64_t top_pages = ((max_ref_.load() >> kBlockBits) * sizeof(Block*)) / 4096 + 1;
  return blocks_.load() * sizeof(Block) + top_pages * 4096 + kLocks * sizeof(Lock);
}

}  // namespace gpumon::tsdb::head
