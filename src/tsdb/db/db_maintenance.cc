// The DB's block maintenance: compaction of blocks into larger ones and
// building the downsampled tiers (the planning and merging themselves live
// in tsdb/compact and tsdb/downsample).
#include <algorithm>
#include <filesystem>
#include <map>

#include "common/log.h"
#include "tsdb/compact/compactor.h"
#include "tsdb/db/db.h"
#include "tsdb/downsample/downsample.h"

namespace gpumon::tsdb::db {
namespace {

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t k5m = 5 * 60 * 1000;
constexpr int64_t k1h = kHour;

// Compaction ranges, capped at a tenth of the tier's retention (as
// Prometheus caps them) so retention can still delete data in steps.
compact::CompactionRanges RangesFor(int64_t block_range, int64_t retention_ms) {
  compact::CompactionRanges r;
  r.ranges_ms.clear();
  for (int64_t range : {block_range, block_range * 3, block_range * 12, block_range * 36}) {
    if (!r.ranges_ms.empty() && retention_ms > 0 && range > retention_ms / 10) break;
    r.ranges_ms.push_back(range);
  }
  return r;
}

}  // namespace

Status DB::CompactBlocks() {
  for (int64_t resolution : Resolutions()) {
    int64_t retention = resolution == 0    ? opts_.retention_ms
                        : resolution == k5m ? opts_.retention_5m_ms
                                            : opts_.retention_1h_ms;
    auto ranges = RangesFor(opts_.block_range_ms, retention);
    std::vector<block::BlockMeta> metas;
    std::map<std::string, std::shared_ptr<block::Block>> by_id;
    for (const auto& b : blocks()) {
      if (b->meta().downsample_resolution_ms != resolution) continue;
      metas.push_back(b->meta());
      by_id[b->meta().id] = b;
    }
    for (const auto& group : compact::Plan(metas, ranges, kMaxTime)) {
      std::vector<std::shared_ptr<block::Block>> inputs;
      for (const auto& id : group) inputs.push_back(by_id.at(id));
      auto out = compact::Compact(dir_, inputs);
      if (!out.ok()) return out.status().WithContext("compaction");
      auto opened = block::Block::Open(*out);
      if (!opened.ok()) return opened.status();
      {
        std::unique_lock<std::shared_mutex> lock(blocks_mu_);
        std::erase_if(blocks_, [&](const auto& b) {
          return std::find(group.begin(), group.end(), b->meta().id) != group.end();
        });
        blocks_.push_back(std::move(opened).value());
        std::sort(blocks_.begin(), blocks_.end(), [](const auto& x, const auto& y) {
          return x->meta().min_time < y->meta().min_time;
        });
      }
      for (const auto& b : inputs) {
        std::error_code ec;
        std::filesystem::remove_all(b->dir(), ec);
      }
      LogInfo("compacted " + std::to_string(group.size()) + " blocks into " + *out);
    }
  }
  return Status::Ok();
}

Status DB::DownsampleBlocks() {
  // A raw block spanning at least a day (it has been compacted) gets a 5m
  // copy; a 5m block spanning at least three days a 1h copy. A tier already
  // covering the block's range is not built again.
  struct Step {
    int64_t from, to, min_span;
  };
  for (Step step : {Step{0, k5m, 24 * kHour}, Step{k5m, k1h, 72 * kHour}}) {
    auto all = blocks();
    for (const auto& b : all) {
      const auto& m = b->meta();
      if (m.downsample_resolution_ms != step.from || m.max_time - m.min_time < step.min_span) {
        continue;
      }
      bool covered = std::any_of(all.begin(), all.end(), [&](const auto& o) {
        const auto& om = o->meta();
        return om.downsample_resolution_ms == step.to && om.min_time <= m.min_time &&
               om.max_time >= m.max_time;
      });
      if (covered) continue;
      auto out = downsample::Downsample(dir_, *b, step.to);
      if (!out.ok()) return out.status().WithContext("downsampling " + b->dir());
      auto opened = block::Block::Open(*out);
      if (!opened.ok()) return opened.status();
      std::unique_lock<std::shared_mutex> lock(blocks_mu_);
      blocks_.push_back(std::move(opened).value());
      std::sort(blocks_.begin(), blocks_.end(), [](const auto& x, const auto& y) {
        return x->meta().min_time < y->meta().min_time;
      });
    }
  }
  return Status::Ok();
}

}  // namespace gpumon::tsdb::db
