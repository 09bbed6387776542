#include "tsdb/block/series_cache.h"

namespace gpumon::tsdb::block {
namespace {

// A map node with its bucket slot, and the deque slot.
constexpr size_t kEntryOverhead = 96;
// std::make_shared's control block with the Labels representation.
constexpr size_t kRepOverhead = 80;

size_t StringHeap(const std::string& s) {
  // Short strings live inside the std::string itself.
  return s.capacity() > 15 ? s.capacity() + 1 : 0;
}

}  // namespace

SeriesCache::SeriesCache(size_t max_bytes) : max_bytes_(max_bytes), shards_(new Shard[kShards]) {}

size_t SeriesCache::Footprint(const Entry& e) {
  size_t n = kEntryOverhead + kRepOverhead + e.labels.items().capacity() * sizeof(Label) +
             e.chunks.capacity() * sizeof(index::ChunkMeta);
  for (const Label& l : e.labels) n += StringHeap(l.name) + StringHeap(l.value);
  return n;
}

bool SeriesCache::Get(uint64_t id, Labels* labels, std::vector<index::ChunkMeta>* chunks) const {
  if (max_bytes_ == 0) return false;
  const Shard& s = shards_[id % kShards];
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(id);
  if (it == s.map.end()) return false;
  *labels = it->second.labels;
  chunks->assign(it->second.chunks.begin(), it->second.chunks.end());
  return true;
}

void SeriesCache::Put(uint64_t id, const Labels& labels, std::span<const index::ChunkMeta> chunks) {
  if (max_bytes_ == 0) return;
  const size_t budget = max_bytes_ / kShards;
  Entry e{labels, {chunks.begin(), chunks.end()}};
  const size_t cost = Footprint(e);
  if (cost > budget) return;
  Shard& s = shards_[id % kShards];
  std::lock_guard<std::mutex> lock(s.mu);
  auto [it, fresh] = s.map.try_emplace(id, std::move(e));
  if (!fresh) return;
  s.order.push_back(id);
  s.bytes += cost;
  // The new entry is last in order and fits the budget alone, so it stays.
  while (s.bytes > budget) {
    auto old = s.map.find(s.order.front());
    s.order.pop_front();
    s.bytes -= Footprint(old->second);
    s.map.erase(old);
  }
}

size_t SeriesCache::bytes() const {
  size_t n = 0;
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard<std::mutex> lock(shards_[i].mu);
    n += shards_[i].bytes;
  }
  return n;
}

size_t SeriesCache::size() const {
  size_t n = 0;
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard<std::mutex> lock(shards_[i].mu);
    n += shards_[i].map.size();
  }
  return n;
}

}  // namespace gpumon::tsdb::block
