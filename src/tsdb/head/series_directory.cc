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
  std::lock_guard lock(blocks_mu_);
  std::atomic<Block*>& entry = top_[ref >> kBlockBits];
  Block* b = entry.load(std::memory_order_relaxed);
  if (b == nullptr) {
    b = new Block();
    entry.store(b, std::memory_order_release);
    blocks_.fetch_add(1, std::memory_order_relaxed);
  }
  auto& slot = b->slots[ref & (kBlockSize - 1)];
  if (slot.load(std::memory_order_relaxed) == nullptr) ++b->live;
  slot.store(s, std::memory_order_release);
  if (ref > max_ref_.load(std::memory_order_relaxed)) {
    max_ref_.store(ref, std::memory_order_release);
  }
  return true;
}

void SeriesDirectory::Clear(uint64_t ref) {
  if (ref == 0 || ref > kMaxRef) return;
  std::lock_guard lock(blocks_mu_);
  Block* b = top_[ref >> kBlockBits].load(std::memory_order_relaxed);
  if (b == nullptr) return;
  auto& slot = b->slots[ref & (kBlockSize - 1)];
  if (slot.load(std::memory_order_relaxed) == nullptr) return;
  slot.store(nullptr, std::memory_order_release);
  --b->live;
}

void SeriesDirectory::FreeEmptyBlocks() {
  std::vector<Block*> unpublished;
  {
    std::lock_guard lock(blocks_mu_);
    const uint64_t end = (max_ref_.load(std::memory_order_relaxed) >> kBlockBits) + 1;
    for (uint64_t i = 0; i < end; ++i) {
      Block* b = top_[i].load(std::memory_order_relaxed);
      if (b != nullptr && b->live == 0) {
        top_[i].store(nullptr, std::memory_order_release);
        unpublished.push_back(b);
      }
    }
    blocks_.fetch_sub(unpublished.size(), std::memory_order_relaxed);
  }
  if (unpublished.empty()) return;
  // A lookup that loaded one of these blocks did so under its stripe lock;
  // once every stripe has been free at least once, no lookup can still be
  // using them, and later lookups see the null entry.
  for (size_t i = 0; i < kLocks; ++i) {
    std::lock_guard quiesce(locks_[i].mu);
  }
  for (Block* b : unpublished) delete b;
}

size_t SeriesDirectory::MemoryBytes() const {
  // Blocks, the resident part of the top level (one page per 512 blocks
  // of refs in use), the locks.
  const uint64_t top_pages = ((max_ref_.load() >> kBlockBits) * sizeof(Block*)) / 4096 + 1;
  return blocks_.load() * sizeof(Block) + top_pages * 4096 + kLocks * sizeof(Lock);
}

}  // namespace gpumon::tsdb::head
