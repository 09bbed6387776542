#include "tsdb/compact/compactor.h"

#include <algorithm>
#include <limits>
#include <set>
#include <vector>

#include "tsdb/block/block_writer.h"
#include "tsdb/compact/series_merger.h"

namespace gpumon::tsdb::compact {

Result<std::string> Compact(const std::string& data_dir,
                            std::span<const std::shared_ptr<block::Block>> blocks,
                            const CompactOptions& options, CompactStats* stats) {
  if (blocks.empty()) return Status::Error("compact: no blocks");
  block::BlockWriterOptions wo;
  wo.min_time = std::numeric_limits<int64_t>::max();
  wo.max_time = std::numeric_limits<int64_t>::min();
  wo.compaction_level = 0;
  wo.segment_size = options.segment_size;
  std::set<std::string> sources, ids;
  for (const auto& b : blocks) {
    if (b == nullptr) return Status::Error("compact: null block");
    const block::BlockMeta& m = b->meta();
    if (!ids.insert(m.id).second) return Status::Error("compact: block " + m.id + " given twice");
    if (m.downsample_resolution_ms != blocks.front()->meta().downsample_resolution_ms) {
      return Status::Error("compact: blocks " + blocks.front()->meta().id + " and " + m.id +
                           " have different resolutions");
    }
    wo.min_time = std::min(wo.min_time, m.min_time);
    wo.max_time = std::max(wo.max_time, m.max_time);
    wo.compaction_level = std::max(wo.compaction_level, m.compaction_level + 1);
    sources.insert(m.sources.begin(), m.sources.end());
    wo.parents.push_back({m.id, m.min_time, m.max_time});
  }
  wo.sources.assign(sources.begin(), sources.end());
  wo.downsample_resolution_ms = blocks.front()->meta().downsample_resolution_ms;

  auto writer = block::BlockWriter::Create(data_dir, wo);
  if (!writer.ok()) return writer.status();

  const size_t n = blocks.size();
  std::vector<std::unique_ptr<block::ChunkSeriesSet>> sets(n);
  std::vector<bool> has(n);
  auto advance = [&](size_t i) -> Status {
    has[i] = sets[i]->Next();
    if (!has[i] && !sets[i]->status().ok()) {
      return sets[i]->status().WithContext("compact: reading " + blocks[i]->dir());
    }
    return Status::Ok();
  };
  for (size_t i = 0; i < n; ++i) {
    sets[i] = blocks[i]->ChunkSelect({}, kMinTime, kMaxTime);
    if (Status s = advance(i); !s.ok()) return s;
  }

  SeriesMerger merger(options.samples_per_chunk);
  std::vector<SeriesPart> parts;
  std::vector<size_t> members;
  CompactStats local;
  while (true) {
    const Labels* min = nullptr;
    for (size_t i = 0; i < n; ++i) {
      if (has[i] && (min == nullptr || sets[i]->labels() < *min)) min = &sets[i]->labels();
    }
    if (min == nullptr) break;
    parts.clear();
    members.clear();
    for (size_t i = 0; i < n; ++i) {
      if (!has[i] || !(sets[i]->labels() == *min)) continue;
      const block::Intervals& del = sets[i]->deleted();
      parts.push_back({sets[i]->chunks(), del.empty() ? nullptr : &del});
      members.push_back(i);
    }
    Status s = merger.Merge(parts, &local);
    if (!s.ok()) return s.WithContext("compact: series " + min->ToString());
    if (!merger.chunks().empty()) {
      s = (*writer)->AddSeries(*min, merger.chunks());
      if (!s.ok()) return s;
      local.series++;
    }
    for (size_t i : members) {
      if (Status st = advance(i); !st.ok()) return st;
    }
  }
  auto dir = (*writer)->Finish();
  if (stats != nullptr) *stats = local;
  return dir;
}

}  // namespace gpumon::tsdb::compact
