// Compaction: merges persistent blocks into one larger block, purging
// deleted data. Planning (which blocks to merge) is in planner.h, included
// here so callers need one header.
//
// Contract of Compact:
// - Merges any number (>= 1) of blocks of the same downsampling resolution;
//   their time ranges may overlap. Series are matched by labels and written
//   in label order (a streaming k-way merge of the blocks' series sets), so
//   memory holds one series' chunks at a time plus what the block writer
//   keeps per series, never whole blocks.
// - Samples of one series are merged by time; samples with equal timestamps
//   are deduplicated, keeping the one of the block that comes first in
//   `blocks`. Tombstones of each block are applied to that block's samples:
//   deleted samples are not in the output.
// - Chunks that overlap no chunk of the same series in another block and no
//   deleted range are copied byte for byte (the fast path). The others are
//   decoded, merged and re-encoded with chunkenc::EncodeBest in chunks of
//   samples_per_chunk samples. Values stay bit-exact (stale NaN included).
// - The output block covers [min of the inputs' min_time, max of their
//   max_time), with compaction level = highest input level + 1, sources =
//   sorted union of the inputs' sources, parents = the inputs, and the
//   inputs' resolution. It is written atomically (block_writer.h); when no
//   sample survives, the block is still written, empty, so the caller can
//   always swap the inputs for the output.
// - The input blocks are neither modified nor deleted; the caller deletes
//   them once it has opened the output. Returns the output directory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/status.h"
#include "tsdb/block/block.h"
#include "tsdb/block/chunk_segments.h"
#include "tsdb/compact/planner.h"

namespace gpumon::tsdb::compact {

struct CompactOptions {
  // Chunk size for re-encoded data (the head's default).
  int samples_per_chunk = 120;
  uint64_t segment_size = block::kDefaultSegmentSize;
};

// What a compaction did, for logs and tests.
struct CompactStats {
  uint64_t series = 0;
  uint64_t chunks_copied = 0;     // fast path
  uint64_t chunks_reencoded = 0;  // input chunks decoded and merged
  uint64_t chunks_written = 0;    // output chunks from the merge path
  uint64_t samples_merged = 0;    // samples written by the merge path
  uint64_t samples_dropped = 0;   // deleted or duplicate samples left out
};

Result<std::string> Compact(const std::string& data_dir,
                            std::span<const std::shared_ptr<block::Block>> blocks,
                            const CompactOptions& options = {}, CompactStats* stats = nullptr);

}  // namespace gpumon::tsdb::compact
