// Compaction planning: which persistent blocks to merge next. A pure
// function of the blocks' metadata (and tombstone counts), so the DB can call
// it under its own locking and tests can drive it with synthetic metas.
//
// Contract of Plan (groups are disjoint; each group is merged by one Compact
// call; the DB calls Plan again after applying the results):
// - Blocks of different downsampling resolutions are never grouped together;
//   each tier is planned on its own.
// - Blocks with max_time > exclude_after_ms are never planned (the newest
//   block may still receive data, e.g. from an out-of-order head).
// - Overlapping blocks (vertical compaction): every chain of blocks whose
//   time ranges overlap is one group, planned before anything else.
// - Leveled compaction (as Prometheus's planner): for each range R of
//   ranges_ms after the first, ascending, blocks lying inside one aligned
//   range [k*R, (k+1)*R) form a group when there are at least two of them and
//   they either span the whole range or end before the newest candidate
//   block starts (so no later block can join the range). A range holding a
//   block already planned at a smaller range waits for the next round.
// - Tombstones: a block not otherwise planned is rewritten alone when more
//   than 5% of its series have tombstones and it spans at least the middle
//   range (smaller blocks are merged soon anyway), or when every series has
//   tombstones (then regardless of its size).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tsdb/block/block.h"
#include "tsdb/block/meta.h"

namespace gpumon::tsdb::compact {

inline constexpr int64_t kHourMs = 3600LL * 1000;

struct CompactionRanges {
  // Block sizes, ascending; the first is the size of blocks cut from the
  // head. Prometheus's default progression (factor 3 from 2 h).
  std::vector<int64_t> ranges_ms = {2 * kHourMs, 6 * kHourMs, 18 * kHourMs, 54 * kHourMs,
                                    162 * kHourMs};

  // `steps` ranges from `base_ms`, each `factor` times the previous.
  static CompactionRanges Exponential(int64_t base_ms, int steps, int64_t factor);
  // The default progression from `base_ms`, cut so that no range exceeds a
  // tenth of the retention (retention can then drop data in small steps) nor
  // 31 days; at least the base range is kept. retention_ms 0: no limit.
  static CompactionRanges ForRetention(int64_t base_ms, int64_t retention_ms);
};

// A block as the planner sees it.
struct PlanBlock {
  block::BlockMeta meta;
  uint64_t tombstone_series = 0;  // series with at least one deleted range
};

std::vector<std::vector<std::string>> Plan(std::span<const PlanBlock> blocks,
                                           const CompactionRanges& ranges,
                                           int64_t exclude_after_ms);
// Without tombstone information (no tombstone rewrites are planned).
std::vector<std::vector<std::string>> Plan(std::span<const block::BlockMeta> metas,
                                           const CompactionRanges& ranges,
                                           int64_t exclude_after_ms);
// With tombstone counts read from the open blocks.
std::vector<std::vector<std::string>> Plan(std::span<const std::shared_ptr<block::Block>> blocks,
                                           const CompactionRanges& ranges,
                                           int64_t exclude_after_ms);

}  // namespace gpumon::tsdb::compact
