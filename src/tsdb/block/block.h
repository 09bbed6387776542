// Block: a persistent block opened read-only (docs/formats/block.md). The
// index and chunk segments are memory-mapped; only tombstones are ever
// rewritten.
//
// Contract:
// - Open reads meta.json, maps the index and every chunk segment and checks
//   their headers, table structure and (by default) the checksums of the
//   index tables; series entries and chunks are checked when read. Damage is
//   an error naming the file and offset, never a crash.
// - A Block is shared (Open returns a shared_ptr): queriers, series sets and
//   iterators keep it alive, so it may be dropped from the database while
//   queries still run. All const methods are thread-safe; Delete may run
//   concurrently with them (queriers see the tombstones of their creation).
// - NewQuerier(mint, maxt) implements tsdb::Querier for [mint, maxt], both
//   inclusive: Select evaluates matchers on the postings with Prometheus
//   semantics (see index/postings_for_matchers.h), returns series in label
//   order that have a chunk overlapping the range and not entirely deleted,
//   and iterates samples clipped to the range with tombstones applied. Label
//   names and values come from the whole block, restricted by matchers only
//   (as Prometheus does for blocks).
// - Queriers keep the series entries they read (labels, chunk references)
//   in a per-block SeriesCache bounded by Options::series_cache_bytes, so
//   repeated queries over the same series skip the index decoding.
// - ChunkSelect gives compaction and downsampling the raw chunks of matching
//   series with their tombstones.
// - Delete adds tombstones for [mint, maxt] to every matching series that
//   has data there (clamped to the series' time span) and rewrites the
//   tombstones file atomically.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/mmap_file.h"
#include "common/status.h"
#include "tsdb/block/chunk_segments.h"
#include "tsdb/block/meta.h"
#include "tsdb/block/series_cache.h"
#include "tsdb/block/tombstones.h"
#include "tsdb/index/index_reader.h"
#include "tsdb/storage.h"

namespace gpumon::tsdb::block {

struct LabelCount {
  std::string name;
  uint64_t count = 0;
  bool operator==(const LabelCount&) const = default;
};

// Cardinality statistics from the index (tombstones not applied). Each list
// is sorted by count descending, then name, and cut to the requested length.
struct IndexStats {
  uint64_t num_series = 0;
  uint64_t num_label_names = 0;
  uint64_t num_label_pairs = 0;
  uint64_t num_symbols = 0;
  std::vector<LabelCount> series_count_by_metric_name;
  std::vector<LabelCount> label_value_count_by_label_name;
  std::vector<LabelCount> memory_in_bytes_by_label_name;     // bytes of all values
  std::vector<LabelCount> series_count_by_label_value_pair;  // "name=value"
};

struct ChunkWithData {
  index::ChunkMeta meta;
  std::span<const uint8_t> data;  // encoding byte + payload, in the block's memory
};

class Block;

// Series with their raw chunks, in label order.
class ChunkSeriesSet {
 public:
  bool Next();
  const Labels& labels() const { return labels_; }
  // Chunks overlapping the selected range, except those entirely deleted.
  const std::vector<ChunkWithData>& chunks() const { return chunks_; }
  // Deleted ranges of this series; they may cover parts of chunks().
  const Intervals& deleted() const { return deleted_; }
  // The series' samples in the selected range with tombstones applied.
  std::unique_ptr<SeriesIterator> Iterator() const;
  Status status() const { return status_; }

 private:
  friend class Block;
  std::shared_ptr<const Block> block_;
  std::shared_ptr<const Tombstones> tombstones_;
  index::Postings ids_;
  size_t pos_ = 0;
  int64_t mint_ = 0;
  int64_t maxt_ = 0;
  Labels labels_;
  std::vector<index::ChunkMeta> metas_;
  std::vector<ChunkWithData> chunks_;
  Intervals deleted_;
  Status status_;
};

class Block : public std::enable_shared_from_this<Block> {
 public:
  // series_cache_bytes: kAutoSeriesCache sizes the cache from the index:
  // four times its size, within [4 MiB, 32 MiB]; 0 disables it.
  static constexpr size_t kAutoSeriesCache = SIZE_MAX;
  struct Options {
    bool verify_checksums = true;
    size_t series_cache_bytes = kAutoSeriesCache;
  };

  static Result<std::shared_ptr<Block>> Open(const std::string& dir, Options options);
  static Result<std::shared_ptr<Block>> Open(const std::string& dir) {
    return Open(dir, Options{});
  }

  const BlockMeta& meta() const { return meta_; }
  const std::string& dir() const { return dir_; }
  // Bytes of all the block's files.
  uint64_t SizeBytes() const;

  std::unique_ptr<Querier> NewQuerier(int64_t mint, int64_t maxt) const;
  std::unique_ptr<ChunkSeriesSet> ChunkSelect(std::span<const Matcher> matchers, int64_t mint,
                                              int64_t maxt) const;

  // Series ids matching all matchers (no matchers: all).
  Result<index::Postings> Postings(std::span<const Matcher> matchers) const;
  Result<std::vector<std::string>> LabelNames(std::span<const Matcher> matchers) const;
  Result<std::vector<std::string>> LabelValues(const std::string& name,
                                               std::span<const Matcher> matchers) const;
  IndexStats Stats(size_t top_n = 10) const;

  Status Delete(std::span<const Matcher> matchers, int64_t mint, int64_t maxt);
  std::shared_ptr<const Tombstones> tombstones() const;

  const index::IndexReader& index() const { return index_; }
  const ChunkReader& chunk_reader() const { return chunks_; }
  // Thread-safe; shared by every querier of the block.
  SeriesCache& series_cache() const { return *series_cache_; }
  // Index, every series entry and postings list, every chunk record.
  Status Verify() const;

 private:
  Block() = default;

  std::string dir_;
  BlockMeta meta_;
  MmapFile index_file_;
  std::vector<MmapFile> segment_files_;
  index::IndexReader index_;
  ChunkReader chunks_;
  std::unique_ptr<SeriesCache> series_cache_;
  uint64_t static_size_ = 0;  // everything but the tombstones file

  mutable std::mutex mu_;  // guards the two below
  std::shared_ptr<const Tombstones> tombstones_;
  uint64_t tombstones_size_ = 0;
  std::mutex delete_mu_;  // serializes Delete
};

// Directories under data_dir that hold a block (a name that is a ULID and a
// meta.json), sorted by name.
Result<std::vector<std::string>> ListBlockDirs(const std::string& data_dir);
// Removes leftovers of interrupted block writes (*.tmp-for-creation).
Status RemoveTemporaryBlockDirs(const std::string& data_dir);

}  // namespace gpumon::tsdb::block
