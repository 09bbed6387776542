#include "tsdb/compact/planner.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpumon::tsdb::compact {
namespace {

// Floor division: aligned ranges stay aligned for negative times too.
int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

using Group = std::vector<const PlanBlock*>;

std::vector<std::string> Ids(const Group& g) {
  std::vector<std::string> out;
  out.reserve(g.size());
  for (const PlanBlock* b : g) out.push_back(b->meta.id);
  return out;
}

// Plans one resolution tier; `cands` are sorted by time and not excluded.
void PlanTier(const std::vector<const PlanBlock*>& cands, const CompactionRanges& ranges,
              std::vector<std::vector<std::string>>* out) {
  std::set<const PlanBlock*> used;

  // Vertical compaction: chains of overlapping blocks.
  for (size_t i = 0; i < cands.size();) {
    Group chain = {cands[i]};
    int64_t end = cands[i]->meta.max_time;
    size_t j = i + 1;
    for (; j < cands.size() && cands[j]->meta.min_time < end; ++j) {
      chain.push_back(cands[j]);
      end = std::max(end, cands[j]->meta.max_time);
    }
    if (chain.size() > 1) {
      out->push_back(Ids(chain));
      used.insert(chain.begin(), chain.end());
    }
    i = j;
  }

  std::vector<const PlanBlock*> rest;
  for (const PlanBlock* b : cands) {
    if (!used.contains(b)) rest.push_back(b);
  }
  if (rest.empty()) return;

  // Leveled compaction, smallest range first so data is rewritten in small
  // steps before it reaches the large ranges.
  const int64_t newest_start = rest.back()->meta.min_time;
  for (size_t r = 1; r < ranges.ranges_ms.size(); ++r) {
    const int64_t range = ranges.ranges_ms[r];
    if (range <= 0) continue;
    std::map<int64_t, Group> by_range;
    for (const PlanBlock* b : rest) {
      const int64_t k = FloorDiv(b->meta.min_time, range);
      if (FloorDiv(b->meta.max_time - 1, range) != k) continue;  // does not fit
      by_range[k].push_back(b);
    }
    for (const auto& [k, g] : by_range) {
      // A range with a block merged at a smaller range in this round waits
      // for that merge, so data is not rewritten twice.
      if (g.size() < 2 ||
          std::any_of(g.begin(), g.end(), [&](auto* b) { return used.contains(b); })) {
        continue;
      }
      const int64_t span = g.back()->meta.max_time - g.front()->meta.min_time;
      if (span == range || g.back()->meta.max_time <= newest_start) {
        out->push_back(Ids(g));
        used.insert(g.begin(), g.end());
      }
    }
  }

  // Tombstone rewrites, newest first.
  const int64_t big = ranges.ranges_ms.empty() ? 0 : ranges.ranges_ms[ranges.ranges_ms.size() / 2];
  for (auto it = rest.rbegin(); it != rest.rend(); ++it) {
    const PlanBlock* b = *it;
    if (used.contains(b) || b->tombstone_series == 0) continue;
    const uint64_t series = b->meta.stats.num_series;
    const bool all_deleted = b->tombstone_series >= series;
    const bool many =
        static_cast<double>(b->tombstone_series) / static_cast<double>(series + 1) > 0.05;
    if (all_deleted || (many && b->meta.max_time - b->meta.min_time >= big)) {
      out->push_back({b->meta.id});
      used.insert(b);
    }
  }
}

}  // namespace

CompactionRanges CompactionRanges::Exponential(int64_t base_ms, int steps, int64_t factor) {
  CompactionRanges r;
  r.ranges_ms.clear();
  int64_t cur = base_ms;
  for (int i = 0; i < steps; ++i) {
    r.ranges_ms.push_back(cur);
    cur *= factor;
  }
  return r;
}

CompactionRanges CompactionRanges::ForRetention(int64_t base_ms, int64_t retention_ms) {
  constexpr int64_t kMaxRange = 31 * 24 * kHourMs;
  CompactionRanges r = Exponential(base_ms, 10, 3);
  const int64_t limit = retention_ms > 0 ? std::min(retention_ms / 10, kMaxRange) : kMaxRange;
  while (r.ranges_ms.size() > 1 && r.ranges_ms.back() > limit) r.ranges_ms.pop_back();
  return r;
}

std::vector<std::vector<std::string>> Plan(std::span<const PlanBlock> blocks,
                                           const CompactionRanges& ranges,
                                           int64_t exclude_after_ms) {
  std::map<int64_t, std::vector<const PlanBlock*>> tiers;
  for (const PlanBlock& b : blocks) {
    if (b.meta.max_time > exclude_after_ms) continue;
    tiers[b.meta.downsample_resolution_ms].push_back(&b);
  }
  std::vector<std::vector<std::string>> out;
  for (auto& [resolution, cands] : tiers) {
    std::sort(cands.begin(), cands.end(), [](const PlanBlock* a, const PlanBlock* b) {
      if (a->meta.min_time != b->meta.min_time) return a->meta.min_time < b->meta.min_time;
      if (a->meta.max_time != b->meta.max_time) return a->meta.max_time < b->meta.max_time;
      return a->meta.id < b->meta.id;
    });
    PlanTier(cands, ranges, &out);
  }
  return out;
}

std::vector<std::vector<std::string>> Plan(std::span<const block::BlockMeta> metas,
                                           const CompactionRanges& ranges,
                                           int64_t exclude_after_ms) {
  std::vector<PlanBlock> blocks;
  blocks.reserve(metas.size());
  for (const auto& m : metas) blocks.push_back({m, 0});
  return Plan(std::span<const PlanBlock>(blocks), ranges, exclude_after_ms);
}

std::vector<std::vector<std::string>> Plan(std::span<const std::shared_ptr<block::Block>> blocks,
                                           const CompactionRanges& ranges,
                                           int64_t exclude_after_ms) {
  std::vector<PlanBlock> pb;
  pb.reserve(blocks.size());
  for (const auto& b : blocks) pb.push_back({b->meta(), b->tombstones()->num_series()});
  return Plan(std::span<const PlanBlock>(pb), ranges, exclude_after_ms);
}

}  // namespace gpumon::tsdb::compact
