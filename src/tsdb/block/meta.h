// BlockMeta: the contents of a block's meta.json (docs/formats/block.md):
// identity, time range, statistics, compaction lineage and downsampling
// resolution.
//
// Contract: min_time is inclusive and max_time exclusive, as in Prometheus.
// Stats describe the block as written; tombstones added later do not change
// them. Parsing ignores unknown members (newer writers may add some) and
// fails with a message naming the file and the member that is missing or
// has the wrong type. WriteMeta replaces meta.json atomically.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::tsdb::block {

inline constexpr int kMetaVersion = 1;
inline constexpr char kMetaFileName[] = "meta.json";

struct BlockStats {
  uint64_t num_samples = 0;
  uint64_t num_series = 0;
  uint64_t num_chunks = 0;
  uint64_t num_bytes = 0;  // index plus chunk segment files
  bool operator==(const BlockStats&) const = default;
};

// A block this one was compacted from.
struct BlockParent {
  std::string id;
  int64_t min_time = 0;
  int64_t max_time = 0;
  bool operator==(const BlockParent&) const = default;
};

struct BlockMeta {
  std::string id;
  int64_t min_time = 0;
  int64_t max_time = 0;
  BlockStats stats;
  int compaction_level = 1;
  std::vector<std::string> sources;  // ids of the level-1 blocks it contains
  std::vector<BlockParent> parents;
  int64_t downsample_resolution_ms = 0;  // 0: raw samples
  bool operator==(const BlockMeta&) const = default;
};

std::string MetaToJson(const BlockMeta& meta);
// `where` names the source in error messages.
Result<BlockMeta> MetaFromJson(std::string_view json, const std::string& where);
Result<BlockMeta> ReadMeta(const std::string& block_dir);
Status WriteMeta(const std::string& block_dir, const BlockMeta& meta);

}  // namespace gpumon::tsdb::block
