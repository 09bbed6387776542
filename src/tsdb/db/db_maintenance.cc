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

constexpr int64_t k5m = 5LL * 60 * 1000;
constexpr int64_t k1h = 60LL * 60 * 1000;

}  // namespace

Status DB::CompactBlocks() {
  for (int64_t resolution : Resolutions()) {
    int64_t retention = resolution == 0    ? opts_.retention_ms
                        : resolution == k5m ? opts_.retention_5m_ms
                                            : opts_.retention_1h_ms;
    auto ranges = compact::CompactionRanges::ForRetention(opts_.block_range_ms, retention);
    std::vector<std::shared_ptr<block::Block>> tier;
    std::map<std::string, std::shared_ptr<block::Block>> by_id;
    for (const auto& b : blocks()) {
      if (b->meta().downsample_resolution_ms != resolution) continue;
      tier.push_back(b);
      by_id[b->meta().id] = b;
    }
    // Longer chunks than the head's compress better on disk (0.64 vs 0.76
    // bytes per sample on GPU data, see docs/formats/chunks.md).
    compact::CompactOptions co;
    co.samples_per_chunk = 480;
    for (const auto& group : compact::Plan(std::span<const std::shared_ptr<block::Block>>(tier),
                                           ranges, kMaxTime)) {
      std::vector<std::shared_ptr<block::Block>> inputs;
      inputs.reserve(group.size());
      for (const auto& id : group) inputs.push_back(by_id.at(id));
      auto out = compact::Compact(dir_, inputs, co);
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
  // A raw block compacted to at least the third range level (9 block ranges,
  // 18 h by default) gets a 5m copy; a 5m block of at least 27 ranges a 1h
  // copy. A range the target tier already covers is not built again.
  struct Step {
    int64_t from, to, min_span;
  };
  const int64_t r = opts_.block_range_ms;
  for (Step step : {Step{0, k5m, 9 * r}, Step{k5m, k1h, 27 * r}}) {
    auto all = blocks();
    // Time covered by the target tier, as merged intervals.
    std::vector<std::pair<int64_t, int64_t>> covered;
    for (const auto& o : all) {
      if (o->meta().downsample_resolution_ms == step.to) {
        covered.emplace_back(o->meta().min_time, o->meta().max_time);
      }
    }
    std::sort(covered.begin(), covered.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (const auto& iv : covered) {
      if (!merged.empty() && iv.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, iv.second);
      } else {
        merged.push_back(iv);
      }
    }
    for (const auto& b : all) {
      const auto& m = b->meta();
      if (m.downsample_resolution_ms != step.from || m.max_time - m.min_time < step.min_span) {
        continue;
      }
      bool is_covered = std::any_of(merged.begin(), merged.end(), [&](const auto& iv) {
        return iv.first <= m.min_time && iv.second >= m.max_time;
      });
      if (is_covered) continue;
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
