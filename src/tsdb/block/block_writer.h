// BlockWriter: writes one persistent block (docs/formats/block.md) from a
// stream of series, for the head, compaction, downsampling and import.
//
// Contract:
// - Series arrive in strictly ascending label order, each with its chunks in
//   time order, non-overlapping, within [min_time, max_time) of the block
//   (max_time exclusive). Series without chunks are skipped. A violation is
//   an error and the series is not added; the writer stays usable.
// - Chunk bytes are written to segment files immediately; labels and chunk
//   positions are kept in memory (about 100 bytes per series) until Finish
//   writes the index.
// - Everything is written under <data_dir>/<id>.tmp-for-creation and fsynced;
//   Finish then renames it to <data_dir>/<id> (atomic) and fsyncs data_dir,
//   so a crash leaves either no block or a complete one (plus a temporary
//   directory for the opener to delete). A writer destroyed before Finish
//   removes its temporary directory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "tsdb/block/chunk_segments.h"
#include "tsdb/block/meta.h"
#include "tsdb/index/chunk_meta.h"

namespace gpumon::tsdb::block {

inline constexpr char kTmpForCreationSuffix[] = ".tmp-for-creation";
inline constexpr char kIndexFileName[] = "index";
inline constexpr char kChunksDirName[] = "chunks";

// One chunk to write: its bytes (encoding byte + payload, see
// chunkenc/chunk.h) and the times of its first and last sample.
struct ChunkData {
  int64_t mint = 0;
  int64_t maxt = 0;
  std::span<const uint8_t> bytes;
};

struct BlockWriterOptions {
  int64_t min_time = 0;  // inclusive
  int64_t max_time = 0;  // exclusive
  std::string id;        // empty: a new ULID
  int compaction_level = 1;
  std::vector<std::string> sources;  // empty: the block's own id
  std::vector<BlockParent> parents;
  int64_t downsample_resolution_ms = 0;
  uint64_t segment_size = kDefaultSegmentSize;
};

class BlockWriter {
 public:
  static Result<std::unique_ptr<BlockWriter>> Create(const std::string& data_dir,
                                                     BlockWriterOptions options);
  ~BlockWriter();
  BlockWriter(const BlockWriter&) = delete;
  BlockWriter& operator=(const BlockWriter&) = delete;

  Status AddSeries(const Labels& labels, std::span<const ChunkData> chunks);
  // Returns the block directory.
  Result<std::string> Finish();

  const std::string& id() const { return meta_.id; }
  // Complete after Finish.
  const BlockMeta& meta() const { return meta_; }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  BlockWriter() = default;
  uint32_t Intern(std::string_view s);
  Status WriteIndex(const std::string& path, uint64_t* size);

  std::string data_dir_;
  std::string tmp_dir_;
  BlockWriterOptions options_;
  BlockMeta meta_;
  bool finished_ = false;
  std::unique_ptr<ChunkWriter> chunks_;
  Labels last_labels_;
  bool have_last_ = false;

  // Symbols by temporary id (first-seen order).
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> symbol_ids_;
  std::vector<const std::string*> symbols_;
  // Per series: label (name, value) temporary ids and chunk metas, flattened.
  std::vector<uint32_t> series_labels_;
  std::vector<uint64_t> series_labels_end_;
  std::vector<index::ChunkMeta> series_chunks_;
  std::vector<uint64_t> series_chunks_end_;
  // Postings per (name, value) temporary-id pair; ids are appended in order.
  std::unordered_map<uint64_t, uint32_t> pair_ids_;
  std::vector<uint64_t> pairs_;
  std::vector<std::vector<uint32_t>> postings_;
};

}  // namespace gpumon::tsdb::block
