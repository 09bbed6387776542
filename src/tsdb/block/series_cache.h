// SeriesCache: what a query reads from a block's index for one series (the
// label set and the chunk references), kept after first use so that the
// next query selecting the same series (dashboards refresh the same
// selectors every few seconds) copies a reference and a few chunk records
// instead of decoding the entry and rebuilding strings from the symbol table.
//
// Contract:
// - Get/Put are thread-safe. Blocks are immutable, so an entry never goes
//   stale; losing one only costs reading it again. Entries were checked
//   (checksum, references) when first read.
// - Memory stays within about max_bytes, counted as the heap the entries
//   hold (strings, vectors, shared storage and map nodes). When an insert
//   would pass the budget, the oldest entries of its shard are dropped
//   (first in, first out). max_bytes 0 disables caching.
// - A dropped entry's Labels stay valid for whoever still holds a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/labels.h"
#include "tsdb/index/chunk_meta.h"

namespace gpumon::tsdb::block {

class SeriesCache {
 public:
  explicit SeriesCache(size_t max_bytes);

  // Copies the cached entry of series `id` into *labels and *chunks
  // (replacing their contents); false when absent.
  bool Get(uint64_t id, Labels* labels, std::vector<index::ChunkMeta>* chunks) const;
  void Put(uint64_t id, const Labels& labels, std::span<const index::ChunkMeta> chunks);

  size_t max_bytes() const { return max_bytes_; }
  size_t bytes() const;
  size_t size() const;

 private:
  static constexpr size_t kShards = 16;
  struct Entry {
    Labels labels;
    std::vector<index::ChunkMeta> chunks;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<uint64_t, Entry> map;
    std::deque<uint64_t> order;  // insertion order, for eviction
    size_t bytes = 0;
  };
  static size_t Footprint(const Entry& e);

  size_t max_bytes_;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace gpumon::tsdb::block
