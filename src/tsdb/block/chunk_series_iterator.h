// ChunkSeriesIterator: the samples of one block series, decoded chunk by
// chunk as iteration reaches them, restricted to a time range and with
// deleted (tombstoned) ranges left out.
//
// Contract: yields samples in strictly increasing time order within
// [mint, maxt] (inclusive) that no interval in `deleted` covers. Chunks whose
// time span lies outside the range are never read. A chunk that cannot be
// read or decoded stops iteration and status() names the segment file and
// offset. Samples out of order inside a damaged chunk are skipped rather than
// breaking the ordering promise. `keepalive` owns the memory `reader` points
// into. The chunk list is copied (a few chunks in place, without an
// allocation: one is made per selected series and query).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tsdb/block/chunk_segments.h"
#include "tsdb/block/tombstones.h"
#include "tsdb/chunkenc/chunk_iterator.h"
#include "tsdb/index/chunk_meta.h"
#include "tsdb/storage.h"

namespace gpumon::tsdb::block {

class ChunkSeriesIterator : public SeriesIterator {
 public:
  ChunkSeriesIterator(std::shared_ptr<const void> keepalive, const ChunkReader* reader,
                      std::span<const index::ChunkMeta> chunks, Intervals deleted, int64_t mint,
                      int64_t maxt);
  // chunks_ may point into the object itself.
  ChunkSeriesIterator(const ChunkSeriesIterator&) = delete;
  ChunkSeriesIterator& operator=(const ChunkSeriesIterator&) = delete;

  bool Next() override;
  bool Seek(int64_t t) override;
  Sample At() const override { return at_; }
  Status status() const override { return status_; }

 private:
  enum class Verdict { kAccept, kSkip, kStop };

  bool OpenNextChunk();
  bool Deleted(int64_t t);
  // The full range, order and deletion checks for a decoded sample; on
  // kAccept it becomes the current one, on kStop iteration ends.
  Verdict Check(Sample s);
  // Check, with the inline ordering-only path for plain chunks.
  Verdict Take(Sample s);
  // The current chunk's iterator stopped: drops the chunk; false when it
  // stopped on an error (recorded in status_, iteration over).
  bool FinishChunk();
  bool NextSlow();
  void DropChunk() {
    cur_.reset();
    cur_plain_ = false;
  }

  std::shared_ptr<const void> keepalive_;
  const ChunkReader* reader_;
  static constexpr size_t kInlineChunks = 4;
  index::ChunkMeta inline_chunks_[kInlineChunks];
  std::vector<index::ChunkMeta> heap_chunks_;  // when there are more
  std::span<const index::ChunkMeta> chunks_;
  Intervals deleted_;
  int64_t mint_;
  int64_t maxt_;
  size_t next_chunk_ = 0;
  // The concrete chunk iterator type: its Next/At/Seek are final and
  // inline, so the per-sample path has no virtual call.
  std::unique_ptr<chunkenc::ChunkIterator> cur_;
  int64_t cur_maxt_ = 0;
  int64_t cur_hi_ = 0;      // min(chunk maxt, maxt)
  bool cur_clean_ = false;  // nothing deleted in the chunk
  // Clean, and every sample still to come is at or after mint: samples up
  // to cur_hi_ need only the ordering check.
  bool cur_plain_ = false;
  size_t del_pos_ = 0;
  Sample at_;
  bool started_ = false;
  bool done_ = false;
  Status status_;
};

}  // namespace gpumon::tsdb::block
