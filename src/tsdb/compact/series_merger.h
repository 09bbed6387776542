// SeriesMerger: merges the chunks one series has in several blocks into the
// chunks of the compacted block.
//
// Contract: each part lists one block's chunks of the series (time order,
// non-overlapping, as a block stores them) and that block's deleted ranges
// for it. Chunks are grouped into clusters of transitively time-overlapping
// chunks. A cluster of one chunk that no deleted range touches is passed
// through as the same bytes; every other cluster is decoded, merged by time
// (equal timestamps: the sample of the earliest part wins), stripped of
// deleted samples and re-encoded with EncodeBest in chunks of at most
// samples_per_chunk samples. Output chunks are in time order and do not
// overlap; they stay valid until the next Merge and, for passed-through
// chunks, as long as the parts' memory. A chunk that fails to decode is an
// error naming the chunk reference.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "tsdb/block/block.h"
#include "tsdb/block/block_writer.h"
#include "tsdb/compact/compactor.h"

namespace gpumon::tsdb::compact {

struct SeriesPart {
  std::span<const block::ChunkWithData> chunks;
  const block::Intervals* deleted = nullptr;  // nullptr: nothing deleted
};

class SeriesMerger {
 public:
  explicit SeriesMerger(int samples_per_chunk);

  Status Merge(std::span<const SeriesPart> parts, CompactStats* stats);
  std::span<const block::ChunkData> chunks() const { return out_; }

 private:
  struct Ref {
    int64_t mint;
    int64_t maxt;
    uint32_t part;
    uint32_t chunk;
  };
  Status MergeCluster(std::span<const SeriesPart> parts, std::span<const Ref> cluster,
                      CompactStats* stats);
  void Flush(CompactStats* stats);

  const size_t samples_per_chunk_;
  std::vector<Ref> refs_;
  std::vector<Sample> buf_;
  std::vector<std::vector<uint8_t>> owned_;  // re-encoded chunk bytes
  // Output chunks; those from the merge path get their bytes (a span into
  // owned_) at the end of Merge, once owned_ no longer grows.
  std::vector<block::ChunkData> out_;
  std::vector<int64_t> out_owned_;  // per output chunk: index into owned_, or -1
};

}  // namespace gpumon::tsdb::compact
